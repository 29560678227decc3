// Package osauth turns OpenStack client options — flags, OS_* environment
// variables and clouds.yaml, as openstackclient reads them — into
// authenticated gophercloud v2 service clients for Cinder, Ironic and
// Barbican (Clients, the one factory), including the standalone
// (Keystone-less) cases: noauth Cinder, noauth and HTTP-basic Ironic.
//
// Secrets (passwords, tokens, application credential secrets, the tokens
// Keystone hands out) are registered with Options.Redactor as soon as they
// are known, so log lines and errors never show them.
//
//	clients := osauth.NewClients(osauth.Options{
//		AuthType:       osauth.AuthNoAuth,
//		CinderEndpoint: "http://127.0.0.1:8776/v3",
//		Redactor:       h.Redactor,
//	})
//	sc, err := clients.BlockStorage(ctx)
package osauth

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/secret"
)

// Auth types, as openstackclient's --os-auth-type spells them.
const (
	AuthPassword              = "password"
	AuthToken                 = "token"
	AuthApplicationCredential = "v3applicationcredential"
	AuthNoAuth                = "noauth"
	AuthHTTPBasic             = "http_basic"
)

// DefaultNoAuthProject is the project id used with noauth Cinder when none
// is given. A stock Cinder routes /v3/{project_id}/ only for hex ids
// (project_id_regex), so gophercloud's default "admin" gets a 404.
const DefaultNoAuthProject = "00000000000000000000000000000000"

// DefaultNoAuthUser is the user put in the noauth token "<user>:<project>".
const DefaultNoAuthUser = "brick"

// DefaultDomain is the domain id used for a user named without a domain
// and for a project named without one, as openstackclient's
// --os-default-domain defaults.
const DefaultDomain = "default"

// DefaultTimeout bounds each HTTP request when Options.Timeout is zero.
const DefaultTimeout = 60 * time.Second

// ErrConfig marks options that cannot work (missing endpoint, unknown auth
// type, unknown cloud): a user mistake, not a server failure.
var ErrConfig = errors.New("openstack auth configuration")

// Options select the cloud and how to authenticate. Empty fields mean
// "not given"; fields given here override the clouds.yaml entry named by
// Cloud. The zero value of each optional field has a sane default.
type Options struct {
	// Cloud names a clouds.yaml entry (--os-cloud, OS_CLOUD).
	Cloud string
	// CloudsFiles are the clouds.yaml files tried in order; empty: the
	// file named by OS_CLIENT_CONFIG_FILE, else the standard locations
	// (./clouds.yaml, $XDG_CONFIG_HOME or ~/.config/openstack/clouds.yaml,
	// /etc/openstack/clouds.yaml). A secure.yaml next to the file found is
	// laid over the entry.
	CloudsFiles []string

	// AuthType: password, token, v3applicationcredential, noauth ("none"
	// accepted) or http_basic (Ironic only). Empty: token when Token is
	// set, v3applicationcredential when an application credential is,
	// password when AuthURL is, else noauth.
	AuthType string

	AuthURL           string
	Username          string
	UserID            string
	Password          secret.Value
	ProjectID         string
	ProjectName       string
	UserDomainName    string
	UserDomainID      string
	ProjectDomainName string
	ProjectDomainID   string
	DomainName        string
	DomainID          string
	// DefaultDomain is the domain id for a user or project named without
	// a domain (--os-default-domain, OS_DEFAULT_DOMAIN); empty:
	// DefaultDomain.
	DefaultDomain string
	Token         secret.Value
	AppCredID     string
	AppCredName   string
	AppCredSecret secret.Value

	RegionName string
	// Interface is the catalog endpoint interface: public (default),
	// internal or admin.
	Interface string

	// Insecure turns TLS certificate verification off. Off by default.
	Insecure bool
	// CACert is a PEM bundle file; when set, only these CAs verify servers.
	CACert string

	// CinderEndpoint overrides the catalog (required with noauth), e.g.
	// http://host:8776/v3; with noauth the project id is appended.
	// "%(project_id)s" and "$(project_id)s" are replaced by the project id.
	CinderEndpoint string
	// IronicEndpoint overrides the catalog (required with noauth and
	// http_basic), e.g. http://host:6385.
	IronicEndpoint string

	// VolumeAPIVersion forces a Cinder microversion ("3.44", "3.0");
	// empty: negotiate. Read by cinderapi, not by this package.
	VolumeAPIVersion string

	// Timeout bounds each HTTP request; zero: DefaultTimeout.
	Timeout time.Duration
	// UserAgent is prepended to gophercloud's User-Agent.
	UserAgent string
	// Redactor learns every secret as it becomes known; may be nil.
	Redactor *host.Redactor
	// Log receives one debug line per HTTP request (method, URL, status,
	// duration; never headers or bodies); may be nil.
	Log *slog.Logger

	// Trust judges clouds.yaml and secure.yaml before they are read;
	// nil: ProcessTrust (as root, only root's files).
	Trust *FileTrust

	// noCredentials: Resolve fell back to noauth because nothing else
	// was given.
	noCredentials bool
	// misspelt: keys of the clouds.yaml entry that look misspelt.
	misspelt []string
}

// normalizeAuthType maps openstackclient's spellings onto ours.
func normalizeAuthType(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return "", nil
	case "password", "v3password", "v2password":
		return AuthPassword, nil
	case "token", "v3token", "v2token":
		return AuthToken, nil
	case "v3applicationcredential", "applicationcredential":
		return AuthApplicationCredential, nil
	case "noauth", "none":
		return AuthNoAuth, nil
	case "http_basic", "http-basic", "httpbasic":
		return AuthHTTPBasic, nil
	}
	return "", fmt.Errorf("%w: unknown auth type %q (use password, token, v3applicationcredential, noauth or http_basic)", ErrConfig, s)
}

func (o Options) trust() FileTrust {
	if o.Trust != nil {
		return *o.Trust
	}
	return ProcessTrust()
}

// secrets lists the secret values the options hold.
func (o Options) secrets() []secret.Value {
	return []secret.Value{o.Password, o.Token, o.AppCredSecret}
}
