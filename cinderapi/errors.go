package cinderapi

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/secret"
)

// Error kinds; test them with errors.Is.
var (
	// ErrNotFound: the volume or attachment does not exist (404).
	ErrNotFound = errors.New("not found")
	// ErrInvalidState: the volume is not in a state that allows the step
	// (a 400 "Invalid volume: ..." or a 409), e.g. in-use elsewhere.
	ErrInvalidState = errors.New("invalid volume state")
	// ErrBadRequest: Cinder rejected the request (other 400s).
	ErrBadRequest = errors.New("bad request")
	// ErrUnauthorized: authentication or policy refused the call (401, 403).
	ErrUnauthorized = errors.New("not authorized")
	// ErrMicroversion: the requested microversion is not supported (406,
	// or outside the server's range).
	ErrMicroversion = errors.New("unsupported microversion")
	// ErrUnavailable: Cinder could not be reached or failed (5xx, network
	// errors, timeouts). Retrying later may work.
	ErrUnavailable = errors.New("cinder unavailable")
	// ErrAmbiguous: a volume name matches more than one volume.
	ErrAmbiguous = errors.New("ambiguous volume name")
	// ErrUnexpected: a response brick cannot use.
	ErrUnexpected = errors.New("unexpected response")
)

// Error is a failed Cinder call: the step, the volume, the HTTP status and
// one short line of Cinder's message (never a traceback).
type Error struct {
	Step    string // "reserve", "initialize_connection", "attachment create", ...
	Volume  string // volume ID or name as given
	Status  int    // HTTP status, 0 for network errors
	Message string // short, single line
	Hint    string // what to do about it; may be empty
	Kind    error  // one of the Err* kinds
	// Err is the cause: gophercloud's error (its body dropped), or the
	// network's.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cinder %s", e.Step)
	if e.Volume != "" {
		fmt.Fprintf(&b, " volume %s", e.Volume)
	}
	b.WriteString(": ")
	switch {
	case e.Message != "":
		b.WriteString(e.Message)
	default:
		b.WriteString(e.Kind.Error())
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap exposes both the kind and the cause to errors.Is / errors.As.
func (e *Error) Unwrap() []error { return []error{e.Kind, e.Err} }

// maxMessage bounds the message kept from a Cinder error body.
const maxMessage = 240

// mapError turns a gophercloud or network error into an *Error. It returns
// nil for nil.
func mapError(step, volume string, err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	e := &Error{Step: step, Volume: volume, Err: err}
	var code gophercloud.ErrUnexpectedResponseCode
	var urlErr *url.Error
	var netErr net.Error
	var limited requestLimited
	var renew *gophercloud.ErrUnableToReauthenticate
	switch {
	case errors.As(err, &renew):
		// gophercloud keeps both failures side by side (no Unwrap): the
		// renewal's is the one to act on.
		e.Status, e.Kind = 401, ErrUnauthorized
		e.Message = "Cinder refused the token (expired or revoked) and getting a new one failed: " + oneLine(fmt.Sprint(renew.ErrReauth))
		e.Err = renew.ErrReauth
	case errors.As(err, &code):
		e.Status = code.Actual
		e.Message = ShortMessage(code.Body)
		e.Kind = kindOf(code.Actual, e.Message)
		if e.Message == "" && code.Actual >= 500 {
			// A proxy's error page: say so rather than "cinder unavailable".
			e.Message = pageSummary(code.Body)
		}
		e.Hint = hintFor(step, code.Actual)
		// Keep gophercloud's error as the cause (ResponseCodeIs works),
		// but without the body: it repeats the whole response, traceback
		// included, and the URL without credentials.
		code.Body, code.URL = nil, secret.RedactURL(code.URL)
		e.Err = code
	case errors.As(err, &urlErr) && errors.As(err, &limited):
		// The per-request limit (osauth's), not the caller's deadline.
		e.Kind = ErrUnavailable
		e.Message = fmt.Sprintf("no answer from %s within %s (the time limit of one request, --api-timeout)", secret.RedactURL(urlErr.URL), limited.RequestLimit())
		e.Hint = endpointHint
	case errors.As(err, new(*json.SyntaxError)) || errors.As(err, new(*json.UnmarshalTypeError)):
		// A 200 that is not Cinder's: a captive portal, a web server,
		// another service on that port.
		e.Kind, e.Message = ErrUnexpected, "the answer is not Cinder's JSON"
		e.Hint = "check --cinder-endpoint, or the catalog's block-storage endpoint for --os-region-name and --os-interface"
	case errors.Is(err, context.DeadlineExceeded):
		e.Kind, e.Message = ErrUnavailable, "timed out"
	case errors.Is(err, context.Canceled):
		e.Kind, e.Message = ErrUnavailable, "canceled"
	case errors.As(err, &urlErr):
		e.Kind = ErrUnavailable
		e.Message = "cannot reach " + secret.RedactURL(urlErr.URL) + ": " + shortNetErr(urlErr.Err)
		if !errors.As(err, new(x509.UnknownAuthorityError)) {
			e.Hint = endpointHint
		}
	case errors.As(err, &netErr):
		e.Kind, e.Message = ErrUnavailable, shortNetErr(err)
	default:
		e.Kind, e.Message = ErrUnexpected, oneLine(err.Error())
	}
	return e
}

// endpointHint is the fix for a Cinder that gives no answer.
const endpointHint = "check --cinder-endpoint, or the catalog's block-storage endpoint for --os-region-name and --os-interface, and that Cinder runs there"

// requestLimited is a request that ran out of its own time limit
// (osauth.TimeoutError, known here by this method only).
type requestLimited interface{ RequestLimit() time.Duration }

// pageSummary names an HTML page (a proxy's error page, by its title);
// "" for any other body.
func pageSummary(body []byte) string {
	s := strings.TrimSpace(string(body))
	lower := strings.ToLower(s)
	if !strings.Contains(lower, "<html") && !strings.Contains(lower, "<!doctype") {
		return ""
	}
	if i := strings.Index(lower, "<title>"); i >= 0 {
		if j := strings.Index(lower[i:], "</title>"); j >= 0 {
			return "an HTML page: " + oneLine(html.UnescapeString(s[i+len("<title>"):i+j]))
		}
	}
	return "an HTML page"
}

// hintFor says what to do about an authentication or policy refusal, or
// a server failure.
func hintFor(step string, status int) string {
	if status >= 500 {
		return "Cinder (or a proxy in front of it) failed: try again later; if it persists, Cinder's log says why"
	}
	switch status {
	case 401:
		return "Cinder refused the token (expired or revoked): with --os-token or OS_TOKEN get a new one ('openstack token issue'); " +
			"otherwise check the credentials (--os-cloud or the OS_* variables)"
	case 403:
		need := "the member role on the volume's project (a reader may only read)"
		if step == "force_detach" || step == "reset_status" {
			need = "the admin role"
		}
		return "Cinder's policy does not allow " + step + " to this user: it needs " + need +
			"; use credentials with it (--os-cloud, or --os-username and --os-project-name)"
	}
	return ""
}

// isKind reports whether err is an *Error of that kind.
func isKind(err, kind error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == kind
}

func kindOf(status int, msg string) error {
	switch {
	case status == 404:
		return ErrNotFound
	case status == 409:
		return ErrInvalidState
	case status == 400 && looksLikeState(msg):
		return ErrInvalidState
	case status == 400 || status == 413 || status == 422:
		return ErrBadRequest
	case status == 401 || status == 403:
		return ErrUnauthorized
	case status == 406:
		return ErrMicroversion
	case status >= 500:
		return ErrUnavailable
	}
	return ErrUnexpected
}

// looksLikeState tells "Invalid volume: Volume status must be available..."
// from other 400s.
func looksLikeState(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "invalid volume") || strings.Contains(m, "status must be") ||
		strings.Contains(m, "invalid attachment") || strings.Contains(m, "status is")
}

// ShortMessage extracts Cinder's message from an error body
// ({"badRequest": {"code": 400, "message": "..."}}) as one short line,
// cutting any traceback. Non-JSON bodies (HTML 404s) give "".
func ShortMessage(body []byte) string {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return ""
	}
	for _, v := range doc {
		var inner struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(v, &inner) == nil && inner.Message != "" {
			return oneLine(inner.Message)
		}
	}
	return ""
}

// oneLine keeps the first line, drops a traceback, strips control
// characters and truncates.
func oneLine(s string) string {
	if i := strings.Index(s, "Traceback (most recent call last)"); i >= 0 {
		s = s[:i]
	}
	return ident.Clip(strings.TrimSuffix(ident.Line(s, len(s)), "."), maxMessage)
}

// shortNetErr turns "dial tcp 127.0.0.1:1: connect: connection refused"
// into "connection refused".
func shortNetErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		s = s[i+2:]
	}
	var unknownCA x509.UnknownAuthorityError
	if errors.As(err, &unknownCA) {
		// The usual cause is a private CA: say how to trust it.
		s += " (give the CA bundle with --os-cacert, or verify: false in clouds.yaml / --insecure to skip the check)"
	}
	return oneLine(s)
}
