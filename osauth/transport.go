package osauth

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// MaxResponseBytes bounds every response body brick reads from Keystone,
// Cinder or Ironic: gophercloud reads error bodies whole, so a hostile or
// broken server could otherwise make a root process grow without limit.
const MaxResponseBytes = 8 << 20

// maxRedirects keeps net/http's own limit.
const maxRedirects = 10

// ErrRedirect marks a redirect brick refused to follow.
var ErrRedirect = errors.New("redirect refused")

// ErrResponseTooLarge marks a response body past MaxResponseBytes.
var ErrResponseTooLarge = errors.New("response body too large")

// checkRedirect follows only redirects that stay on the origin of the first
// request and carry no credentials: a 307/308 re-sends the body (the
// Keystone password) and net/http keeps Authorization and X-Auth-Token on
// another port of the same host.
func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0]
	switch {
	case len(via) >= maxRedirects:
		return fmt.Errorf("%w: stopped after %d redirects from %s", ErrRedirect, maxRedirects, first.URL.Redacted())
	case !sameOrigin(first.URL, req.URL):
		return fmt.Errorf("%w: %s redirected to another origin (%s)", ErrRedirect, first.URL.Redacted(), req.URL.Redacted())
	case carriesCredentials(first):
		return fmt.Errorf("%w: %s (a request carrying credentials) redirected to %s", ErrRedirect, first.URL.Redacted(), req.URL.Redacted())
	}
	return nil
}

// carriesCredentials: an auth header, or a body (a token request's
// password, a volume update) that a 307/308 would send again.
func carriesCredentials(r *http.Request) bool {
	return r.Header.Get("Authorization") != "" || r.Header.Get("X-Auth-Token") != "" ||
		r.ContentLength != 0 || r.GetBody != nil
}

// sameOrigin compares scheme, host and effective port, so https->http and
// another port of the same host are other origins.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) &&
		effectivePort(a) == effectivePort(b)
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// limitBody caps resp's body at limit bytes. An error response is read
// here already, since gophercloud ignores errors while reading those: a
// body past the limit then fails the request with an error naming it.
func limitBody(req *http.Request, resp *http.Response, limit int64) (*http.Response, error) {
	if req.Method == http.MethodHead {
		return resp, nil // no body; Content-Length describes the resource
	}
	tooLarge := fmt.Errorf("%w: %s sent more than %d bytes (limit %d MiB)", ErrResponseTooLarge, req.URL.Redacted(), limit, limit>>20)
	if resp.ContentLength > limit {
		_ = resp.Body.Close()
		return nil, tooLarge
	}
	body := &limitedBody{rc: resp.Body, left: limit, err: tooLarge}
	resp.Body = body
	if resp.StatusCode < http.StatusBadRequest {
		return resp, nil
	}
	data, err := io.ReadAll(body)
	_ = body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return resp, nil
}

// limitedBody fails a read past its limit instead of truncating silently.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
	err  error
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var probe [1]byte
		if n, err := b.rc.Read(probe[:]); n > 0 {
			return 0, b.err
		} else if err != nil {
			return 0, err
		}
		return 0, nil
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
