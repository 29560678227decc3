package ironicapi

import (
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/secret"
)

// Service names Ironic in its errors: every failure of this package is
// an *apierr.Error with this Service and Op the call ("create volume
// connector", "get node node-1"); Status is 0 for a request brick refused
// to send. Kinds (errors.Is): apierr.ErrUnsupported (the server has no
// volume API: its API version is < 1.32), ErrConflict (a duplicate:
// connector type+ID anywhere, node+boot index, UUID), ErrInvalidState
// (Ironic changes and deletes volume resources only while the node's power
// state is "power off"), ErrNotFound, ErrInvalid (a value brick refused
// before sending it, or Ironic's 400), ErrUnauthorized (401), ErrForbidden
// (403), ErrUnreachable (no HTTP answer: refused, timed out, TLS).
const Service = "ironic"

// tooOld leads the message of an Ironic without the volume API.
const tooOld = "Ironic too old for volume resources: "

// NodePowerState returns the node and its power state from Ironic's
// refusal to change a volume resource of a node that is not powered off.
func NodePowerState(err error) (node, state string, ok bool) {
	var e *apierr.Error
	if !errors.As(err, &e) || e.Service != Service || e.Kind != apierr.ErrInvalidState {
		return "", "", false
	}
	m := powerStateRE().FindStringSubmatch(e.Message)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// call describes a request for error messages: what was done to which
// kind of resource.
type call struct {
	op       string // "create", "list", "delete", ...
	resource string // "volume connector", "volume target", "node"
	ident    string // the UUID or name the user gave, if any
	node     string // the node a new connector or target is for, if known
}

func (c call) String() string {
	s := c.op + " " + c.resource
	if c.ident != "" {
		s += " " + quote(c.ident)
	}
	if c.node != "" {
		s += " of node " + quote(c.node)
	}
	return s
}

var (
	powerStateRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`on node "([^"]*)" while it is in state "([^"]*)"`) })
	// Ironic's own 406 text: "The supported version range is: [1.1, 1.31]."
	rangeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[\s*[0-9]+\.[0-9]+\s*,\s*([0-9]+\.[0-9]+)\s*\]`) })
)

func convert(c call, err error) error {
	if err == nil {
		return nil
	}
	var renew *gophercloud.ErrUnableToReauthenticate
	if errors.As(err, &renew) {
		// Both failures sit side by side (no Unwrap): the renewal's is
		// the one to act on.
		return &apierr.Error{Service: Service, Op: c.String(), Status: http.StatusUnauthorized, Kind: apierr.ErrUnauthorized, Err: renew.ErrReauth,
			Message: "Ironic refused the token (expired or revoked) and getting a new one failed: " + oneLine(fmt.Sprint(renew.ErrReauth))}
	}
	var ue gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &ue) {
		return unreachable(c, err)
	}
	msg, bare := DecodeErrorBody(ue.Body)
	e := &apierr.Error{Service: Service, Op: c.String(), Status: ue.Actual, Message: msg, Err: err}
	switch ue.Actual {
	case http.StatusNotFound:
		notFound(e, c, ue, bare)
	case http.StatusNotAcceptable:
		notAcceptable(e, ue)
	case http.StatusConflict:
		e.Kind = apierr.ErrConflict
		e.Hint = conflictHint(c)
	case http.StatusBadRequest:
		badRequest(e)
	case http.StatusUnauthorized:
		e.Kind = apierr.ErrUnauthorized
		e.Hint = "Ironic refused the token (none, expired or revoked): with --os-token or OS_TOKEN get a new one ('openstack token issue'); " +
			"with --os-auth-type noauth this Ironic wants Keystone credentials instead (--os-cloud, or OS_AUTH_URL, OS_USERNAME, OS_PASSWORD, OS_PROJECT_NAME)"
	case http.StatusForbidden:
		e.Kind = apierr.ErrForbidden
		e.Hint = forbiddenHint(c)
	default:
		if ue.Actual >= 500 {
			e.Hint = "Ironic (or a proxy in front of it) failed: try again later; if it persists, Ironic's log says why"
		}
	}
	return e
}

// forbiddenHint says which role Ironic's default policy wants for the call.
func forbiddenHint(c call) string {
	need := "a role on the node's owner project (reader to read)"
	switch c.op {
	case "create", "update", "delete":
		if strings.HasPrefix(c.resource, "volume") {
			need = "the admin role on the node's owner or lessee project, or a system-scoped member"
		} else {
			need = "the member role on the node's owner project, or a system-scoped member"
		}
	case "set power state of":
		need = "the member role on the node's owner project, or a system-scoped member"
	}
	return "Ironic's policy does not allow this to the user: it needs " + need +
		"; use credentials with that role (--os-cloud, or --os-username and --os-project-name)"
}

// unreachable words an error that got no HTTP answer: refused, timed out,
// TLS; the URL without credentials or query.
func unreachable(c call, err error) error {
	var ue *url.Error
	if errors.As(err, new(*json.SyntaxError)) || errors.As(err, new(*json.UnmarshalTypeError)) {
		// A 200 that is not Ironic's: a web server or another service.
		return &apierr.Error{Service: Service, Op: c.String(), Message: "the answer is not Ironic's JSON", Kind: apierr.ErrUnreachable, Err: err,
			Hint: "check --ironic-endpoint, or the catalog's baremetal endpoint for --os-region-name and --os-interface"}
	}
	if !errors.As(err, &ue) {
		return fmt.Errorf("ironic %s: %w", c, err)
	}
	msg := "cannot reach " + secret.RedactURL(ue.URL) + ": " + netCause(ue)
	hint := "check --ironic-endpoint, or the catalog's baremetal endpoint for --os-region-name and --os-interface, and that Ironic runs there"
	var unknownCA x509.UnknownAuthorityError
	if errors.As(err, &unknownCA) {
		hint = "give the CA bundle with --os-cacert, or verify: false in clouds.yaml / --insecure to skip the check"
	}
	return &apierr.Error{Service: Service, Op: c.String(), Message: msg, Hint: hint, Kind: apierr.ErrUnreachable, Err: err}
}

// netCause is the last part of a network error ("connection refused"),
// or "no answer within 1m0s (the time limit of one request, --api-timeout)".
func netCause(ue *url.Error) string {
	var limited interface{ RequestLimit() time.Duration } // osauth.TimeoutError
	if errors.As(ue, &limited) {
		return fmt.Sprintf("no answer within %s (the time limit of one request, --api-timeout)", limited.RequestLimit())
	}
	if ue.Timeout() {
		return "no answer (timed out)"
	}
	s := ue.Err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		s = s[i+2:]
	}
	return oneLine(s)
}

// notFound tells a missing resource from a URL the server does not have.
func notFound(e *apierr.Error, c call, ue gophercloud.ErrUnexpectedResponseCode, bare bool) {
	switch {
	case bare && !strings.HasPrefix(c.resource, "volume"):
		e.Kind = apierr.ErrNotFound
		e.Message = fmt.Sprintf("%s %s answered a bare 404", ue.Method, ue.URL)
		e.Hint = "the server has no such URL: check that the endpoint (--ironic-endpoint, the catalog) is Ironic's"
	case bare:
		// A 404 without a faultstring is a routing miss: the server has no
		// such URL at the version sent. For the volume URLs that means an
		// Ironic older than 1.32 (or an endpoint that is not Ironic's).
		e.Kind = apierr.ErrUnsupported
		e.Message = fmt.Sprintf(tooOld+"%s %s answered a bare 404 at API version %s", ue.Method, ue.URL, MinMicroversion)
		e.Hint = "volume connectors and targets need Ironic API " + MinMicroversion + " or later (Ironic 9.0, Pike); also check that the endpoint is Ironic's"
	default:
		e.Kind = apierr.ErrNotFound
		e.Hint = notFoundHint(c)
	}
}

// notAcceptable tells an Ironic older than the volume API from a version
// pinned too high.
func notAcceptable(e *apierr.Error, ue gophercloud.ErrUnexpectedResponseCode) {
	max := ue.ResponseHeader.Get(maxVersionHeader)
	if max == "" {
		if m := rangeRE().FindStringSubmatch(e.Message); m != nil {
			max = m[1]
		}
	}
	if max != "" && compareVersions(max, MinMicroversion) < 0 {
		e.Kind = apierr.ErrUnsupported
		e.Message = fmt.Sprintf(tooOld+"its newest API version is %s", max)
		e.Hint = "volume connectors and targets need Ironic API " + MinMicroversion + " or later (Ironic 9.0, Pike): upgrade Ironic"
		return
	}
	e.Hint = "the requested Ironic API version is not supported by this server; leave the microversion unset"
}

// badRequest picks out Ironic's power-state refusal from other 400s.
func badRequest(e *apierr.Error) {
	m := powerStateRE().FindStringSubmatch(e.Message)
	if m == nil {
		e.Kind = apierr.ErrInvalid
		if strings.Contains(e.Message, "node_uuid") {
			e.Hint = "no node has this UUID: check it (openstack baremetal node list)"
		}
		return
	}
	e.Kind = apierr.ErrInvalidState
	node, state := m[1], strconvQuote(m[2])
	if m[2] == "None" {
		state = "unknown (never set)"
	}
	e.Hint = fmt.Sprintf("Ironic changes and deletes volume connectors and targets only while the node is powered off, and node %s is in power state %s: power it off (openstack baremetal node power off %s) and run this again", node, state, node)
}

func notFoundHint(c call) string {
	switch c.resource {
	case "node":
		return "check the node's name or UUID (openstack baremetal node list)"
	case "volume connector":
		return "check the UUID (brick ironic connector list), and that the node exists"
	case "volume target":
		return "check the UUID (brick ironic target list), and that the node exists"
	}
	return "check the names and UUIDs given"
}

func conflictHint(c call) string {
	switch c.resource {
	case "volume connector":
		return "a connector type and ID can belong to one node only: find the existing one with 'brick ironic connector list --long' and delete it, or keep it"
	case "volume target":
		return "a node can have one target per boot index and a volume once: pick another --boot-index, or delete the existing target (brick ironic target list --node NODE)"
	}
	return "it exists already"
}

// DecodeErrorBody extracts Ironic's message from an error body. Ironic
// double-encodes it: {"error_message": "<JSON string with faultstring>"}.
// bare is true for the {"code","title","description"} shape Ironic's web
// framework sends when no API code ran (an unknown URL), or for a body that
// is not Ironic's at all. The message is one line of at most 300 bytes.
func DecodeErrorBody(body []byte) (msg string, bare bool) {
	var outer struct {
		ErrorMessage json.RawMessage `json:"error_message"`
	}
	if err := json.Unmarshal(body, &outer); err != nil || len(outer.ErrorMessage) == 0 {
		return foreignBody(body), true
	}
	var inner struct {
		FaultString *string `json:"faultstring"`
		Title       string  `json:"title"`
		Description string  `json:"description"`
	}
	raw := []byte(outer.ErrorMessage)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		// The usual case: a JSON string holding JSON.
		if json.Unmarshal([]byte(s), &inner) != nil {
			return oneLine(s), false
		}
	} else if json.Unmarshal(raw, &inner) != nil {
		return oneLine(string(raw)), true
	}
	if inner.FaultString != nil {
		return oneLine(*inner.FaultString), false
	}
	m := strings.TrimSpace(inner.Title + ": " + apierr.StripTags(inner.Description))
	return oneLine(strings.TrimSuffix(m, ":")), true
}

// foreignBody is the message of an error body not from Ironic's API code:
// keystonemiddleware's {"error": {"message": ...}}, a proxy's HTML page
// (its title, or its text), or anything else as one short line.
func foreignBody(body []byte) string {
	var ks struct {
		Error struct {
			Title   string `json:"title"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &ks) == nil && ks.Error.Message != "" {
		return oneLine(ks.Error.Message)
	}
	if title, text, ok := apierr.Page(body, maxMessage); ok {
		return "an HTML page: " + title + text
	}
	return oneLine(string(body))
}

// maxMessage bounds what an error quotes of Ironic's answer.
const maxMessage = 300

// oneLine keeps a server's multi-line message or body from flooding the
// user's terminal.
func oneLine(s string) string { return ident.OneLine(s, maxMessage) }

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }

// errNegativeVersion: a microversion with a negative part.
var errNegativeVersion = errors.New("negative microversion")

// quote prints an untrusted identifier safely in messages.
func quote(s string) string {
	s = ident.Clip(s, 80) // never splits a rune
	if isPlain(s) {
		return s
	}
	return fmt.Sprintf("%q", s)
}

func isPlain(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:~/@", r)) {
			return false
		}
	}
	return true
}

// invalid builds a client-side validation error naming the field.
func invalid(op, field, format string, args ...any) error {
	return &apierr.Error{Service: Service, Op: op, Message: field + ": " + fmt.Sprintf(format, args...), Kind: apierr.ErrInvalid}
}
