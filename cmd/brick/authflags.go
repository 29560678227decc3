package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/internal/settings"
	"github.com/brick-storage/brick/osauth"
	"github.com/brick-storage/brick/secret"
)

// authFlags are the OpenStack options shared by every command that talks to
// Cinder or Ironic, and only those commands have them; each also reads its
// openstackclient environment variable (OS_*) after BRICK_*.
type authFlags struct {
	cloud             string
	authType          string
	authURL           string
	username          string
	userID            string
	password          string
	projectID         string
	projectName       string
	userDomainName    string
	userDomainID      string
	projectDomainName string
	projectDomainID   string
	defaultDomain     string
	token             string
	appCredID         string
	appCredName       string
	appCredSecret     string
	regionName        string
	iface             string
	insecure          bool
	cacert            string
	cinderEndpoint    string
	ironicEndpoint    string
	volumeAPIVersion  string
	apiTimeout        time.Duration
}

// addAuthFlags registers the auth flags on pf (a cloud command's flags, or
// the persistent flags of a group whose commands all talk to a cloud).
func (a *app) addAuthFlags(pf *pflag.FlagSet) {
	f := &a.auth
	str := func(p *string, name, env, usage string) {
		pf.StringVar(p, name, "", usage)
		markCloudFlag(pf.Lookup(name))
		if env != "" {
			settings.WithEnv(pf.Lookup(name), env)
		}
	}
	str(&f.cloud, "os-cloud", "OS_CLOUD", "clouds.yaml entry to use")
	str(&f.authType, "os-auth-type", "OS_AUTH_TYPE", "password, token, v3applicationcredential, noauth (or none) or http_basic (Ironic); default: from the other options")
	str(&f.authURL, "os-auth-url", "OS_AUTH_URL", "Keystone URL")
	str(&f.username, "os-username", "OS_USERNAME", "user name")
	str(&f.userID, "os-user-id", "OS_USER_ID", "user id")
	str(&f.password, "os-password", "OS_PASSWORD", "password (prefer OS_PASSWORD or clouds.yaml: argv is visible to other users)")
	str(&f.projectID, "os-project-id", "OS_PROJECT_ID", "project id (noauth Cinder default: "+osauth.DefaultNoAuthProject+")")
	str(&f.projectName, "os-project-name", "OS_PROJECT_NAME", "project name")
	str(&f.userDomainName, "os-user-domain-name", "OS_USER_DOMAIN_NAME", "user's domain name")
	str(&f.userDomainID, "os-user-domain-id", "OS_USER_DOMAIN_ID", "user's domain id")
	str(&f.projectDomainName, "os-project-domain-name", "OS_PROJECT_DOMAIN_NAME", "project's domain name")
	str(&f.projectDomainID, "os-project-domain-id", "OS_PROJECT_DOMAIN_ID", "project's domain id")
	str(&f.defaultDomain, "os-default-domain", "OS_DEFAULT_DOMAIN", "domain id for a user or project given without a domain (default: "+osauth.DefaultDomain+")")
	str(&f.token, "os-token", "OS_TOKEN", "Keystone token (auth type token)")
	str(&f.appCredID, "os-application-credential-id", "OS_APPLICATION_CREDENTIAL_ID", "application credential id")
	str(&f.appCredName, "os-application-credential-name", "OS_APPLICATION_CREDENTIAL_NAME", "application credential name")
	str(&f.appCredSecret, "os-application-credential-secret", "OS_APPLICATION_CREDENTIAL_SECRET", "application credential secret")
	str(&f.regionName, "os-region-name", "OS_REGION_NAME", "region in the service catalog")
	str(&f.iface, "os-interface", "OS_INTERFACE", "catalog interface: public, internal or admin")
	pf.BoolVar(&f.insecure, "insecure", false, "do not verify TLS certificates (OS_INSECURE)")
	settings.WithEnv(pf.Lookup("insecure"), "OS_INSECURE")
	markCloudFlag(pf.Lookup("insecure"))
	str(&f.cacert, "os-cacert", "OS_CACERT", "PEM CA bundle that verifies the servers")
	str(&f.cinderEndpoint, "cinder-endpoint", "", "Cinder URL, e.g. http://host:8776/v3 (required with noauth; overrides the catalog)")
	// cinderclient's and openstacksdk's spellings of the same.
	settings.WithEnv(pf.Lookup("cinder-endpoint"), "OS_BLOCK_STORAGE_ENDPOINT_OVERRIDE", "CINDER_ENDPOINT")
	str(&f.cinderEndpoint, "os-endpoint", "", "cinderclient's name for --cinder-endpoint")
	str(&f.ironicEndpoint, "ironic-endpoint", "", "Ironic URL, e.g. http://host:6385 (required with noauth/http_basic; overrides the catalog)")
	str(&f.volumeAPIVersion, "os-volume-api-version", "OS_VOLUME_API_VERSION", "force this Cinder microversion (e.g. 3.44 for attachments, 3.0 for the legacy flow); default: negotiate")
	pf.DurationVar(&f.apiTimeout, "api-timeout", osauth.DefaultTimeout, "time limit for each request to Keystone, Cinder, Ironic or Barbican, its body included (a server that hangs fails after this)")
	markCloudFlag(pf.Lookup("api-timeout"))
}

// cloud is this run's factory of cloud clients, made on first use from
// the flags as parsed (so building the commands and --help costs nothing).
func (a *app) cloud() *osauth.Clients {
	if a.clouds == nil {
		a.clouds = osauth.NewClients(a.authOptions())
	}
	return a.clouds
}

// authOptions returns the OpenStack options from flags, environment and
// config, with secrets going to the app's redactor.
func (a *app) authOptions() osauth.Options {
	f := a.auth
	return osauth.Options{
		Cloud:             f.cloud,
		AuthType:          f.authType,
		AuthURL:           f.authURL,
		Username:          f.username,
		UserID:            f.userID,
		Password:          secret.New(f.password),
		ProjectID:         f.projectID,
		ProjectName:       f.projectName,
		UserDomainName:    f.userDomainName,
		UserDomainID:      f.userDomainID,
		ProjectDomainName: f.projectDomainName,
		ProjectDomainID:   f.projectDomainID,
		DefaultDomain:     f.defaultDomain,
		Token:             secret.New(f.token),
		AppCredID:         f.appCredID,
		AppCredName:       f.appCredName,
		AppCredSecret:     secret.New(f.appCredSecret),
		RegionName:        f.regionName,
		Interface:         f.iface,
		Insecure:          f.insecure,
		CACert:            f.cacert,
		CinderEndpoint:    f.cinderEndpoint,
		IronicEndpoint:    f.ironicEndpoint,
		VolumeAPIVersion:  f.volumeAPIVersion,
		Timeout:           f.apiTimeout,
		UserAgent:         "brick/" + version,
		Redactor:          a.redactor,
		Log:               a.logger,
		Trust:             &a.trust,
	}
}
