package osauth

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/secret"
)

// authFailure turns Keystone's refusal into a line naming what was sent.
// Keystone answers a wrong password and an unknown project alike (401), so
// for a project-scoped password login it asks once more without the
// project to tell the two apart. Other errors are returned as they are.
func authFailure(ctx context.Context, o Options, hc *http.Client, ao gophercloud.AuthOptions, err error) error {
	refused := gophercloud.ResponseCodeIs(err, http.StatusUnauthorized) ||
		(o.AuthType == AuthToken && gophercloud.ResponseCodeIs(err, http.StatusNotFound))
	if !refused {
		return keystoneFailure("authenticate at "+o.AuthURL, err)
	}
	at := "authenticate at " + o.AuthURL
	var msg string
	switch o.AuthType {
	case AuthToken:
		msg = "the token was refused: it expired or was revoked (get a new one, e.g. with 'openstack token issue', and pass it as --os-token or OS_TOKEN)"
	case AuthApplicationCredential:
		msg = fmt.Sprintf("application credential %s was refused: wrong secret, or it expired or was deleted (check --os-application-credential-id or -name and --os-application-credential-secret)",
			quoted(first(o.AppCredID, o.AppCredName)))
	default:
		if ao.Scope != nil && passwordValid(ctx, o, hc, ao) {
			msg = fmt.Sprintf("%s may not use %s: it does not exist there or the user has no role on it (check --os-project-name or --os-project-id and --os-project-domain-name)",
				describeUser(ao), describeProject(ao.Scope))
		} else {
			msg = fmt.Sprintf("wrong password, or no %s (check --os-username or --os-user-id, --os-password and --os-user-domain-name)",
				describeUser(ao))
		}
	}
	return &apierr.Error{Op: at, Message: msg, Kind: apierr.ErrUnauthorized, Err: err}
}

// renewFailure words a failed token renewal in the middle of a command:
// the credentials worked at the start, so a refusal now means they
// changed (or Keystone did), not a typo.
func renewFailure(o Options, err error) error {
	if !gophercloud.ResponseCodeIs(err, http.StatusUnauthorized) {
		return keystoneFailure("renew the token at "+o.AuthURL, err)
	}
	return &apierr.Error{Op: "renew the token at " + o.AuthURL, Kind: apierr.ErrUnauthorized, Err: err,
		Message: "Keystone refused the credentials that worked at the start (password changed, user disabled, or application credential deleted?)"}
}

// keystoneFailure words an auth request that got no usable answer: a
// closed port, a hung server, a certificate not trusted, an HTML page from
// a proxy, a body that is not JSON. It names the step and the fix in one
// line, never Go's "dial tcp" text or a whole body; the cause stays
// reachable for errors.Is/As.
func keystoneFailure(at string, err error) error {
	e := &apierr.Error{Op: at, Kind: apierr.ErrUnreachable, Err: err,
		Hint: "check --os-auth-url (OS_AUTH_URL, or auth_url in clouds.yaml) and that Keystone runs there"}
	var ue *url.Error
	var code gophercloud.ErrUnexpectedResponseCode
	var syntax *json.SyntaxError
	var limit *TimeoutError
	var unknownCA x509.UnknownAuthorityError
	switch {
	case errors.As(err, &limit) && errors.As(err, &ue):
		e.Message = fmt.Sprintf("no answer from %s within %s (the time limit of one request, --api-timeout)", secret.RedactURL(ue.URL), limit.Limit)
	case errors.As(err, &unknownCA):
		e.Message, e.Hint = "the server's certificate is not trusted: give the CA bundle with --os-cacert, or verify: false in clouds.yaml / --insecure to skip the check", ""
	case errors.As(err, &code):
		// The status leads the message here, so Status stays 0.
		e.Message = fmt.Sprintf("Keystone answered HTTP %d: %s", code.Actual, bodySummary(code.Body))
	case errors.As(err, &syntax):
		e.Message = "the answer is not JSON, so not Keystone's"
	case errors.As(err, &ue):
		cause := ue.Err.Error()
		if i := strings.LastIndex(cause, ": "); i >= 0 {
			cause = cause[i+2:]
		}
		e.Message = "cannot reach " + secret.RedactURL(ue.URL) + ": " + cause
	default:
		return fmt.Errorf("%s: %w", at, err)
	}
	return e
}

// bodySummary is a short, one-line account of an error body: Keystone's
// JSON message, an HTML page's title, or that it is neither.
func bodySummary(body []byte) string {
	var doc struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &doc) == nil && doc.Error.Message != "" {
		return apierr.Message(doc.Error.Message, maxQuote)
	}
	switch title, _, ok := apierr.Page(body, maxQuote); {
	case title != "":
		return "an HTML page titled " + quoted(title) + " (a proxy's?)"
	case ok:
		return "an HTML page (a proxy's?)"
	}
	return "a body that is not Keystone's JSON"
}

// maxQuote bounds what a message quotes of a Keystone reply's text.
const maxQuote = 160

// passwordValid reports whether the user's password works without a
// project scope.
func passwordValid(ctx context.Context, o Options, hc *http.Client, ao gophercloud.AuthOptions) bool {
	pc, err := openstack.NewClient(o.AuthURL)
	if err != nil {
		return false
	}
	pc.HTTPClient = *hc
	ao.Scope, ao.AllowReauth = nil, false
	return openstack.Authenticate(ctx, pc, ao) == nil
}

func describeUser(ao gophercloud.AuthOptions) string {
	if ao.UserID != "" {
		return "user id " + quoted(ao.UserID)
	}
	return "user " + quoted(ao.Username) + " in " + describeDomain(ao.DomainName, ao.DomainID)
}

func describeProject(s *gophercloud.AuthScope) string {
	if s.ProjectID != "" {
		return "project id " + quoted(s.ProjectID)
	}
	return "project " + quoted(s.ProjectName) + " in " + describeDomain(s.DomainName, s.DomainID)
}

func describeDomain(name, id string) string {
	if name != "" {
		return "domain " + quoted(name)
	}
	return "domain id " + quoted(id)
}

func quoted(s string) string { return fmt.Sprintf("%q", s) }

// endpointFailure explains a missing catalog endpoint: which service,
// interface and region were asked for, and where the catalog has one.
func endpointFailure(pc *gophercloud.ProviderClient, service, serviceType, flag string, eo gophercloud.EndpointOpts, err error) error {
	if !errors.As(err, new(*gophercloud.ErrEndpointNotFound)) {
		return fmt.Errorf("version discovery at the %s (%s) endpoint from the catalog: %w", service, serviceType, err)
	}
	eo.ApplyDefaults(serviceType)
	where := "in any region"
	if eo.Region != "" {
		where = "in region " + quoted(eo.Region)
	}
	msg := fmt.Sprintf("the service catalog has no %s endpoint (type %s) for interface %q %s",
		service, strings.Join(eo.Types(), ", "), eo.Availability, where)
	if have := catalogEndpoints(pc, eo.Types()); len(have) > 0 {
		msg += "; it has: " + strings.Join(have, ", ")
	}
	msg += " (set --os-region-name, --os-interface or " + flag + ")"
	return &apierr.Error{Message: msg, Kind: apierr.ErrNoEndpoint, Err: err}
}

// catalogEndpoints lists "region interface" of the catalog's endpoints of
// the given service types.
func catalogEndpoints(pc *gophercloud.ProviderClient, types []string) []string {
	r, ok := pc.GetAuthResult().(tokens.CreateResult)
	if !ok {
		return nil
	}
	catalog, err := r.ExtractServiceCatalog()
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range catalog.Entries {
		if !slices.Contains(types, e.Type) {
			continue
		}
		for _, ep := range e.Endpoints {
			out = append(out, first(ep.Region, ep.RegionID, "(no region)")+" "+ep.Interface)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
