package osauth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
)

// noEndpoint explains a noauth client without its endpoint: when noauth
// was only the fallback, the user gave no credentials at all.
func noEndpoint(o Options, service, flag string) error {
	if o.noCredentials && len(o.misspelt) > 0 {
		return fmt.Errorf("%w: no OpenStack credentials: clouds.yaml entry %q has %s, which brick does not read: fix the spelling",
			ErrConfig, o.Cloud, strings.Join(o.misspelt, ", "))
	}
	if o.noCredentials {
		return fmt.Errorf("%w: no OpenStack credentials: set OS_CLOUD (a clouds.yaml entry), or OS_AUTH_URL with OS_USERNAME, OS_PASSWORD and OS_PROJECT_NAME (an openrc file), or use --os-auth-type noauth with %s when %s runs without Keystone",
			ErrConfig, strings.Fields(flag)[0], service)
	}
	return fmt.Errorf("%w: noauth %s needs %s", ErrConfig, service, flag)
}

// keystoneClient authenticates with password, token or application
// credential.
func keystoneClient(ctx context.Context, o Options, hc *http.Client) (*gophercloud.ProviderClient, error) {
	ao, err := authOptions(o)
	if err != nil {
		return nil, err
	}
	pc, err := openstack.NewClient(o.AuthURL)
	if err != nil {
		return nil, fmt.Errorf("%w: auth url %q: %w", ErrConfig, o.AuthURL, err)
	}
	pc.HTTPClient = *hc
	pc.UserAgent.Prepend(o.UserAgent)
	if err := openstack.Authenticate(ctx, pc, ao); err != nil {
		return nil, authFailure(ctx, o, hc, ao, err)
	}
	o.Redactor.Add(pc.Token())
	if renew := pc.ReauthFunc; renew != nil {
		pc.ReauthFunc = func(ctx context.Context) error {
			if err := renew(ctx); err != nil {
				return renewFailure(o, err)
			}
			return nil
		}
	}
	return pc, nil
}

// authOptions turns resolved options into gophercloud's, with missing
// domains defaulted as openstackclient does.
func authOptions(o Options) (gophercloud.AuthOptions, error) {
	if o.AuthURL == "" {
		return gophercloud.AuthOptions{}, fmt.Errorf("%w: auth type %s needs --os-auth-url (OS_AUTH_URL) or --os-cloud", ErrConfig, o.AuthType)
	}
	if err := oneDomain(o); err != nil {
		return gophercloud.AuthOptions{}, err
	}
	ao := gophercloud.AuthOptions{IdentityEndpoint: o.AuthURL, AllowReauth: true}
	switch o.AuthType {
	case AuthPassword:
		if (o.Username == "" && o.UserID == "") || o.Password.IsZero() {
			return ao, fmt.Errorf("%w: password auth needs --os-username (or a user id) and --os-password", ErrConfig)
		}
		ao.Username, ao.UserID, ao.Password = o.Username, o.UserID, o.Password.Reveal()
		ao.DomainName, ao.DomainID = userDomain(o)
		ao.Scope = projectScope(o)
	case AuthToken:
		if o.Token.IsZero() {
			return ao, fmt.Errorf("%w: token auth needs --os-token (OS_TOKEN)", ErrConfig)
		}
		ao.TokenID = o.Token.Reveal()
		ao.AllowReauth = false // a fixed token cannot be renewed
		ao.Scope = projectScope(o)
	case AuthApplicationCredential:
		// Application credentials carry their own scope; a scope next to
		// them is rejected by Keystone.
		if (o.AppCredID == "" && o.AppCredName == "") || o.AppCredSecret.IsZero() {
			return ao, fmt.Errorf("%w: application credential auth needs an id (or name) and a secret", ErrConfig)
		}
		if o.AppCredID == "" && o.Username == "" && o.UserID == "" {
			return ao, fmt.Errorf("%w: an application credential given by name needs its user: --os-username (or --os-user-id), or use --os-application-credential-id", ErrConfig)
		}
		ao.ApplicationCredentialID, ao.ApplicationCredentialName = o.AppCredID, o.AppCredName
		ao.ApplicationCredentialSecret = o.AppCredSecret.Reveal()
		ao.Username, ao.UserID = o.Username, o.UserID
		ao.DomainName, ao.DomainID = userDomain(o)
	default:
		return ao, fmt.Errorf("%w: auth type %s is not supported here", ErrConfig, o.AuthType)
	}
	return ao, nil
}

// oneDomain refuses a domain given both by name and by id where it is
// used (a user or project named, not given by id): gophercloud refuses
// that too, but in its own field names (DomainID, DomainName).
func oneDomain(o Options) error {
	for _, d := range []struct {
		used            bool
		name, id, flags string
	}{
		{o.Username != "" && o.UserID == "", first(o.UserDomainName, o.DomainName), first(o.UserDomainID, o.DomainID), "--os-user-domain-name or --os-user-domain-id"},
		{o.ProjectName != "" && o.ProjectID == "", first(o.ProjectDomainName, o.DomainName), first(o.ProjectDomainID, o.DomainID), "--os-project-domain-name or --os-project-domain-id"},
	} {
		if d.used && d.name != "" && d.id != "" {
			return fmt.Errorf("%w: give %s, not both (name %q, id %q)", ErrConfig, d.flags, d.name, d.id)
		}
	}
	return nil
}

// userDomain is the (name, id) of the user's domain: --os-user-domain-*,
// else --os-domain-*, else, for a user named (not given by id), the
// default domain's id, as openstackclient does.
func userDomain(o Options) (name, id string) {
	name, id = first(o.UserDomainName, o.DomainName), first(o.UserDomainID, o.DomainID)
	if name == "" && id == "" && o.Username != "" && o.UserID == "" {
		id = o.DefaultDomain
	}
	return name, id
}

// projectScope scopes to the project by id, or by name in its domain
// (defaulted like the user's); nil without a project.
func projectScope(o Options) *gophercloud.AuthScope {
	switch {
	case o.ProjectID != "":
		return &gophercloud.AuthScope{ProjectID: o.ProjectID}
	case o.ProjectName != "":
		s := &gophercloud.AuthScope{
			ProjectName: o.ProjectName,
			DomainName:  first(o.ProjectDomainName, o.DomainName),
			DomainID:    first(o.ProjectDomainID, o.DomainID),
		}
		if s.DomainName == "" && s.DomainID == "" {
			s.DomainID = o.DefaultDomain
		}
		return s
	}
	return nil
}

// projectOf is the project the token is scoped to, for endpoint templates.
func projectOf(pc *gophercloud.ProviderClient, o Options) string {
	if r, ok := pc.GetAuthResult().(tokens.CreateResult); ok {
		if p, err := r.ExtractProject(); err == nil && p != nil {
			return p.ID
		}
	}
	return o.ProjectID
}

var projectTemplate = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[%$]\(project_id\)s`) })

func substituteProject(endpoint, project string) string {
	return projectTemplate().ReplaceAllLiteralString(endpoint, project)
}

var versionSegment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v[0-9]+(\.[0-9]+)?$`) })

// noauthCinderURL appends the project to a versioned endpoint
// (http://h:8776/v3 -> http://h:8776/v3/<project>/), as Cinder's noauth
// routing expects; an endpoint already naming a project (or a template)
// is used as given.
func noauthCinderURL(endpoint, project string) (string, error) {
	endpoint = substituteProject(endpoint, project)
	u, err := checkURL(endpoint)
	if err != nil {
		return "", err
	}
	if versionSegment().MatchString(path.Base(strings.TrimSuffix(u, "/"))) {
		u += project + "/"
	}
	return u, nil
}

// checkURL accepts absolute http(s) URLs and returns them with a trailing
// slash, as gophercloud joins paths.
func checkURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: endpoint %q is not an http(s) URL", ErrConfig, raw)
	}
	return gophercloud.NormalizeURL(raw), nil
}

// httpClient builds the HTTP client: TLS verification on unless Insecure,
// CACert as the only trusted roots when given, a per-request timeout, and
// a transport that registers every token it sees with the Redactor and
// caps response bodies, and a redirect policy that keeps credentials home.
func httpClient(o Options) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.Insecure {
		tlsConf.InsecureSkipVerify = true // asked for with --insecure
		if o.Log != nil {
			o.Log.Warn("TLS certificate verification is off (--insecure / OS_INSECURE / verify: false): anyone on the path can read the token and the CHAP passwords Cinder returns")
		}
	}
	if o.CACert != "" {
		// The CA bundle decides which servers get the password: it must be
		// as trusted as the clouds.yaml that names it.
		pem, _, err := o.trust().ReadFile(o.CACert)
		if err != nil {
			return nil, fmt.Errorf("%w: read CA bundle: %w", ErrConfig, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: CA bundle %s holds no PEM certificate", ErrConfig, o.CACert)
		}
		tlsConf.RootCAs = pool
	}
	tr.TLSClientConfig = tlsConf
	// The per-request limit is the transport's (withRequestTimeout), so
	// its error names the limit.
	return &http.Client{
		Transport:     &redactingTransport{next: tr, o: o},
		CheckRedirect: checkRedirect,
	}, nil
}

// redactingTransport registers tokens from request and response headers
// before anything could log them, and logs one debug line per request.
type redactingTransport struct {
	next http.RoundTripper
	o    Options
}

func (t *redactingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.o.Redactor.Add(req.Header.Get("X-Auth-Token"))
	start := time.Now()
	resp, err := withRequestTimeout(req, t.o.Timeout, t.next.RoundTrip)
	if err != nil {
		return nil, err
	}
	t.o.Redactor.Add(resp.Header.Get("X-Subject-Token"))
	if t.o.Log != nil {
		t.o.Log.Debug("http", "method", req.Method, "url", req.URL.Redacted(),
			"status", resp.StatusCode, "duration", time.Since(start).Round(time.Millisecond),
			"microversion", req.Header.Get("OpenStack-API-Version"))
	}
	return limitBody(req, resp, MaxResponseBytes)
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
