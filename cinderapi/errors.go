package cinderapi

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/secret"
)

// Service names Cinder in its errors: every failure of this package is
// an *apierr.Error with this Service, Op the step ("reserve",
// "initialize_connection", "attachment create", ...) and Volume the
// volume's ID or name as given. Kinds (errors.Is): apierr.ErrNotFound,
// ErrInvalidState (a 409, or a 400 "Invalid volume: ..."), ErrInvalid
// (other 400s), ErrUnauthorized (401), ErrForbidden (403), ErrUnsupported
// (the microversion), ErrUnreachable (5xx, network errors, timeouts),
// ErrAmbiguous (a name several volumes share), ErrUnexpected.
const Service = "cinder"

// kindText stands in for an empty message: Cinder's words for each kind.
func kindText(kind error) string {
	switch kind {
	case apierr.ErrInvalidState:
		return "invalid volume state"
	case apierr.ErrInvalid:
		return "bad request"
	case apierr.ErrForbidden:
		return apierr.ErrUnauthorized.Error()
	case apierr.ErrUnsupported:
		return "unsupported microversion"
	case apierr.ErrUnreachable:
		return "cinder unavailable"
	case apierr.ErrAmbiguous:
		return "ambiguous volume name"
	}
	return kind.Error()
}

// maxMessage bounds the message kept from a Cinder error body.
const maxMessage = 240

// mapError turns a gophercloud or network error into a Cinder *apierr.Error. It returns
// nil for nil.
func mapError(step, volume string, err error) error {
	if err == nil {
		return nil
	}
	var already *apierr.Error
	if errors.As(err, &already) && already.Service == Service {
		return err
	}
	e := &apierr.Error{Service: Service, Op: step, Volume: volume, Err: err}
	var code gophercloud.ErrUnexpectedResponseCode
	var urlErr *url.Error
	var netErr net.Error
	var limited requestLimited
	var renew *gophercloud.ErrUnableToReauthenticate
	switch {
	case errors.As(err, &renew):
		// gophercloud keeps both failures side by side (no Unwrap): the
		// renewal's is the one to act on.
		e.Status, e.Kind = 401, apierr.ErrUnauthorized
		e.Message = "Cinder refused the token (expired or revoked) and getting a new one failed: " + oneLine(fmt.Sprint(renew.ErrReauth))
		e.Err = renew.ErrReauth
	case errors.As(err, &code):
		fromStatus(e, step, code)
	case errors.As(err, &urlErr) && errors.As(err, &limited):
		// The per-request limit (osauth's), not the caller's deadline.
		e.Kind = apierr.ErrUnreachable
		e.Message = fmt.Sprintf("no answer from %s within %s (the time limit of one request, --api-timeout)", secret.RedactURL(urlErr.URL), limited.RequestLimit())
		e.Hint = endpointHint
	case errors.As(err, new(*json.SyntaxError)) || errors.As(err, new(*json.UnmarshalTypeError)):
		// A 200 that is not Cinder's: a captive portal, a web server,
		// another service on that port.
		e.Kind, e.Message = apierr.ErrUnexpected, "the answer is not Cinder's JSON"
		e.Hint = "check --cinder-endpoint, or the catalog's block-storage endpoint for --os-region-name and --os-interface"
	case errors.Is(err, context.DeadlineExceeded):
		e.Kind, e.Message = apierr.ErrUnreachable, "timed out"
	case errors.Is(err, context.Canceled):
		e.Kind, e.Message = apierr.ErrUnreachable, "canceled"
	case errors.As(err, &urlErr):
		e.Kind = apierr.ErrUnreachable
		e.Message = "cannot reach " + secret.RedactURL(urlErr.URL) + ": " + shortNetErr(urlErr.Err)
		if !errors.As(err, new(x509.UnknownAuthorityError)) {
			e.Hint = endpointHint
		}
	case errors.As(err, &netErr):
		e.Kind, e.Message = apierr.ErrUnreachable, shortNetErr(err)
	default:
		e.Kind, e.Message = apierr.ErrUnexpected, oneLine(err.Error())
	}
	if e.Message == "" {
		e.Message = kindText(e.Kind)
	}
	return e
}

// fromStatus fills e from Cinder's error answer.
func fromStatus(e *apierr.Error, step string, code gophercloud.ErrUnexpectedResponseCode) {
	e.Status = code.Actual
	e.Message = ShortMessage(code.Body)
	e.Kind = kindOf(code.Actual, e.Message)
	if e.Message == "" && code.Actual >= 500 {
		// A proxy's error page: say so rather than "cinder unavailable".
		e.Message = pageSummary(code.Body)
	}
	e.Hint = hintFor(step, code.Actual)
	// Keep gophercloud's error as the cause (ResponseCodeIs works), but
	// without the body: it repeats the whole response, traceback
	// included, and the URL without credentials.
	code.Body, code.URL = nil, secret.RedactURL(code.URL)
	e.Err = code
}

// endpointHint is the fix for a Cinder that gives no answer.
const endpointHint = "check --cinder-endpoint, or the catalog's block-storage endpoint for --os-region-name and --os-interface, and that Cinder runs there"

// requestLimited is a request that ran out of its own time limit
// (osauth.TimeoutError, known here by this method only).
type requestLimited interface{ RequestLimit() time.Duration }

// pageSummary names an HTML page (a proxy's error page, by its title);
// "" for any other body.
func pageSummary(body []byte) string {
	switch title, _, ok := apierr.Page(body, maxMessage); {
	case title != "":
		return "an HTML page: " + oneLine(title)
	case ok:
		return "an HTML page"
	}
	return ""
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

// isKind reports whether err is a Cinder error of that kind.
func isKind(err, kind error) bool {
	var e *apierr.Error
	return errors.As(err, &e) && e.Service == Service && e.Kind == kind
}

func kindOf(status int, msg string) error {
	switch {
	case status == 404:
		return apierr.ErrNotFound
	case status == 409:
		return apierr.ErrInvalidState
	case status == 400 && looksLikeState(msg):
		return apierr.ErrInvalidState
	case status == 400 || status == 413 || status == 422:
		return apierr.ErrInvalid
	case status == 401:
		return apierr.ErrUnauthorized
	case status == 403:
		return apierr.ErrForbidden
	case status == 406:
		return apierr.ErrUnsupported
	case status >= 500:
		return apierr.ErrUnreachable
	}
	return apierr.ErrUnexpected
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

// oneLine is apierr's one line of a server's message, without the final
// period (an " (HTTP n)" follows).
func oneLine(s string) string {
	return ident.Clip(strings.TrimSuffix(apierr.Message(s, len(s)), "."), maxMessage)
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
