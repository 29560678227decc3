package osauth

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testca"
	"github.com/brick-storage/brick/secret"
)

// sink is a server that counts the requests reaching it and keeps what
// they carried: it must never see a redirected credential.
type sink struct {
	*httptest.Server
	hits atomic.Int32
	seen atomic.Value
}

func newSink(t *testing.T) *sink {
	s := &sink{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.hits.Add(1)
		s.seen.Store(r.Header.Get("Authorization") + r.Header.Get("X-Auth-Token") + string(body))
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(s.Close)
	return s
}

// redirector answers every request with code and Location to+path.
func redirector(t *testing.T, code int, to func() string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/ok") {
			_, _ = w.Write([]byte(`{}`))
			return
		}
		w.Header().Set("Location", to()+"/ok"+r.URL.Path)
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestKeystoneRedirectKeepsPassword: a Keystone answering the token POST
// with 307 (same host, another port, or its own origin) gets an error, and
// the password never reaches the redirect target.
func TestKeystoneRedirectKeepsPassword(t *testing.T) {
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		other := newSink(t)
		ks := redirector(t, code, func() string { return other.URL })
		_, err := BlockStorageClient(context.Background(), Options{
			AuthURL: ks.URL + "/v3", Username: "u", Password: secret.New("pw-SECRET"), ProjectID: "p"})
		require.Error(t, err, code)
		require.ErrorIs(t, err, ErrRedirect, code)
		require.Zero(t, other.hits.Load(), "redirect target reached (%d): %v", code, other.seen.Load())
	}
}

// TestRedirectPolicy: requests with credentials (Ironic basic auth) follow
// no redirect at all; requests without follow only same-origin ones, never
// to another port or from https down to http.
func TestRedirectPolicy(t *testing.T) {
	ca := testca.New(t, "brick-test-ca")
	other := newSink(t)
	var self *httptest.Server
	self = redirector(t, http.StatusFound, func() string { return self.URL })
	tlsDown := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	tlsDown.TLS = &tls.Config{Certificates: []tls.Certificate{ca.ServerCert(t, "127.0.0.1")}}
	tlsDown.StartTLS()
	t.Cleanup(tlsDown.Close)

	for _, tc := range []struct {
		name, endpoint string
		o              Options
		ok             bool
	}{
		{"basic auth, another port", redirector(t, http.StatusFound, func() string { return other.URL }).URL,
			Options{AuthType: AuthHTTPBasic, Username: "u", Password: secret.New("p4ss")}, false},
		{"basic auth, same origin", self.URL, Options{AuthType: AuthHTTPBasic, Username: "u", Password: secret.New("p4ss")}, false},
		{"basic auth, https to http", tlsDown.URL, Options{AuthType: AuthHTTPBasic, Username: "u", Password: secret.New("p4ss"), CACert: ca.PEMFile}, false},
		{"noauth, another port", redirector(t, http.StatusFound, func() string { return other.URL }).URL, Options{AuthType: AuthNoAuth}, false},
		{"noauth, https to http", tlsDown.URL, Options{AuthType: AuthNoAuth, CACert: ca.PEMFile}, false},
		{"noauth, same origin", self.URL, Options{AuthType: AuthNoAuth}, true},
	} {
		tc.o.IronicEndpoint = tc.endpoint
		sc, err := BaremetalClient(context.Background(), tc.o)
		require.NoError(t, err, tc.name)
		_, err = sc.Get(context.Background(), sc.ServiceURL("nodes"), nil, nil)
		if tc.ok {
			require.NoError(t, err, tc.name)
			continue
		}
		require.ErrorIs(t, err, ErrRedirect, tc.name)
		require.Zero(t, other.hits.Load(), "%s: redirect target reached: %v", tc.name, other.seen.Load())
	}
}

// TestResponseSizeLimited: a server streaming a huge body, as an error or
// as a success, with or without Content-Length, fails the request with an
// error naming the URL and the limit, and brick's memory stays small.
func TestResponseSizeLimited(t *testing.T) {
	const huge = 256 << 20
	chunk := []byte(strings.Repeat("a", 64<<10))
	for _, tc := range []struct {
		name   string
		status int
		length bool
	}{
		{"error body, chunked", http.StatusInternalServerError, false},
		{"error body, content-length", http.StatusBadRequest, true},
		{"success body, chunked", http.StatusOK, false},
		{"success body, content-length", http.StatusOK, true},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if tc.length {
				w.Header().Set("Content-Length", strconv.Itoa(huge))
			}
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(`{"x":"`))
			for sent := 0; sent < huge; sent += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}))
		sc, err := BlockStorageClient(context.Background(), Options{AuthType: AuthNoAuth, CinderEndpoint: srv.URL + "/v3"})
		require.NoError(t, err)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var out map[string]any
		_, err = sc.Get(context.Background(), sc.ServiceURL("volumes"), &out, nil)
		runtime.ReadMemStats(&after)
		srv.Close()
		require.ErrorIs(t, err, ErrResponseTooLarge, tc.name)
		require.Contains(t, err.Error(), srv.URL+"/v3/", tc.name)
		require.Contains(t, err.Error(), "limit 8 MiB", tc.name)
		require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), tc.name)
	}

	// A HEAD's Content-Length describes the resource, not a body.
	head := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(huge))
	}))
	defer head.Close()
	sc, err := BlockStorageClient(context.Background(), Options{AuthType: AuthNoAuth, CinderEndpoint: head.URL + "/v3"})
	require.NoError(t, err)
	_, err = sc.Head(context.Background(), sc.ServiceURL("volumes"), &gophercloud.RequestOpts{OkCodes: []int{http.StatusOK}})
	require.NoError(t, err)
}
