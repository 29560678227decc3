package osauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// TimeoutError is a request the server did not finish answering within
// Options.Timeout. Inside gophercloud's *url.Error it reads
// `Get "URL": no answer within 1m0s (the time limit of one request)`, so a
// message built from it names both the URL and the limit that fired.
// errors.Is(err, context.DeadlineExceeded) holds, and it is a net.Error
// with Timeout() true.
type TimeoutError struct {
	Limit time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("no answer within %s (the time limit of one request)", e.Limit)
}

// Timeout marks it as a timeout for net.Error checks.
func (e *TimeoutError) Timeout() bool { return true }

// Temporary is false: the same request may well hang again.
func (e *TimeoutError) Temporary() bool { return false }

// Is makes errors.Is(err, context.DeadlineExceeded) hold.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// RequestLimit is the limit that fired (for packages that only know the
// interface, such as cinderapi and ironicapi).
func (e *TimeoutError) RequestLimit() time.Duration { return e.Limit }

// withRequestTimeout runs one round trip under limit, covering the body
// too (the deadline holds until the body is closed), and turns the
// deadline into a *TimeoutError naming the limit. http.Client.Timeout
// would say only "Client.Timeout exceeded".
func withRequestTimeout(req *http.Request, limit time.Duration, rt func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if limit <= 0 {
		return rt(req)
	}
	te := &TimeoutError{Limit: limit}
	ctx, cancel := context.WithTimeoutCause(req.Context(), limit, te)
	resp, err := rt(req.WithContext(ctx))
	if err != nil {
		cancel()
		if errors.Is(context.Cause(ctx), te) && req.Context().Err() == nil {
			return nil, te
		}
		return nil, err
	}
	// A deadline while the body is read comes out of a JSON decoder, not
	// the HTTP client: give it the URL the client's errors carry.
	op := req.Method[:1] + strings.ToLower(req.Method[1:])
	fired := &url.Error{Op: op, URL: req.URL.Redacted(), Err: te}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, ctx: ctx, te: te, fired: fired, cancel: cancel}
	return resp, nil
}

// cancelOnClose ends the request's deadline when the body is closed and
// reports a deadline that fired while the body was read as *TimeoutError.
type cancelOnClose struct {
	io.ReadCloser
	ctx    context.Context
	te     *TimeoutError
	fired  error
	cancel context.CancelFunc
}

func (b *cancelOnClose) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && errors.Is(context.Cause(b.ctx), b.te) {
		return n, b.fired
	}
	return n, err
}

func (b *cancelOnClose) Close() error {
	defer b.cancel()
	return b.ReadCloser.Close()
}
