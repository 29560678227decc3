package testbed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// HTTPError is a non-2xx answer from a service.
type HTTPError struct {
	Method string
	URL    string
	Status int
	// Body is the response body as sent, cut to 2 KiB. Ironic's error
	// bodies are double-encoded JSON; Cinder's may hold a server traceback.
	Body string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.URL, e.Status, e.Body)
}

// StatusOf returns the HTTP status of err when it is (or wraps) an
// *HTTPError, else 0.
func StatusOf(err error) int {
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Status
	}
	return 0
}

// client is the one HTTP client of the helpers: loopback only, short
// per-request timeout (callers' contexts bound whole waits).
var client = &http.Client{Timeout: 60 * time.Second}

// doJSON sends in (when not nil) as JSON with the given extra headers and
// decodes a 2xx JSON answer into out (when not nil and the body is not
// empty).
func doJSON(ctx context.Context, method, url string, headers map[string]string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, url, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		text := strings.TrimSpace(string(data))
		if len(text) > 2048 {
			text = text[:2048] + "..."
		}
		return &HTTPError{Method: method, URL: url, Status: resp.StatusCode, Body: text}
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", method, url, err)
	}
	return nil
}

// poll calls check every interval until it reports done, returns an error,
// or ctx ends (then the last "why not yet" is part of the error).
func poll(ctx context.Context, interval time.Duration, what string, check func() (done bool, why string, err error)) error {
	why := "not checked yet"
	for {
		done, w, err := check()
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		why = w
		select {
		case <-ctx.Done():
			return fmt.Errorf("testbed: waiting for %s: %w (last: %s)", what, ctx.Err(), why)
		case <-time.After(interval):
		}
	}
}
