//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testca"
)

// TestTLSCinder puts a TLS-terminating reverse proxy, with a certificate
// from a CA made here, in front of the real Cinder and runs the brick
// binary against it: verification is on by default (a clear certificate
// error), --os-cacert (or OS_CACERT) with the CA works, a different CA is
// refused, and --insecure works only when asked and warns. Each run is a
// real Cinder round trip: `brick list` shows a real volume's status from a
// local record, and local-attach of an unknown name fails at the lookup,
// after the TLS handshake, without attaching anything.
func TestTLSCinder(t *testing.T) {
	lane(t, laneServices)
	c := needCinder(t, guestCinderOptions)
	vol := newVolume(t, c, "brick-e2e-tls")
	target, err := url.Parse(c.Endpoint)
	require.NoError(t, err)
	target.Path = ""
	ca, other := testca.New(t, "brick-e2e-ca"), testca.New(t, "brick-e2e-other-ca")
	proxy := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(target))
	proxy.TLS = &tls.Config{Certificates: []tls.Certificate{ca.ServerCert(t, "127.0.0.1")}}
	proxy.StartTLS()
	defer proxy.Close()
	endpoint := proxy.URL + "/v3"

	// A host tree whose only record is the real volume's, so list asks
	// Cinder for its status.
	root := t.TempDir()
	rec := `{"version":1,"volume_id":"` + vol.ID + `","phase":"attached","step":"done","flow":"v3","microversion":"3.54",
"host_name":"tls-node","mode":"rw","connector":{},"created_at":"2026-12-02T10:00:00Z","updated_at":"2026-12-02T10:00:00Z"}`
	p := filepath.Join(root, "var/lib/brick/volumes", vol.ID+".json")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(t, os.WriteFile(p, []byte(rec), 0o600))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env := []string{"OS_AUTH_TYPE=noauth", "BRICK_CINDER_ENDPOINT=" + endpoint}
	list := func(extraEnv []string, args ...string) brickRun {
		return runBrickBin(t, ctx, append(env, extraEnv...), append([]string{"--host-root", root, "list", "-f", "value", "-c", "Volume", "-c", "Cinder Status"}, args...)...)
	}
	attach := func(extraEnv []string, args ...string) brickRun {
		return runBrickBin(t, ctx, append(env, extraEnv...), append([]string{"--host-root", root, "local-attach", "brick-e2e-tls-no-such-volume"}, args...)...)
	}
	const certErr = "certificate signed by unknown authority"
	const lookupErr = "no volume with this ID or name"
	const warn = "TLS certificate verification is off"

	// Default: verification on.
	r := attach(nil)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, certErr)
	require.Contains(t, r.stderr, "local-attach brick-e2e-tls-no-such-volume")
	require.Contains(t, r.stderr, "--os-cacert", "the error says how to trust the CA")
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line")
	r = list(nil)
	require.Equal(t, 0, r.code, "list works without Cinder")
	require.Equal(t, vol.ID+" unknown\n", r.stdout)
	require.Contains(t, r.stderr, certErr)

	// --os-cacert and OS_CACERT: the real Cinder answers through the proxy.
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"--os-cacert", nil, []string{"--os-cacert", ca.PEMFile}},
		{"OS_CACERT", []string{"OS_CACERT=" + ca.PEMFile}, nil},
	} {
		r = attach(tc.env, tc.args...)
		require.Equal(t, 1, r.code, tc.name)
		require.Contains(t, r.stderr, lookupErr, tc.name)
		require.NotContains(t, r.stderr, warn, tc.name)
		r = list(tc.env, tc.args...)
		require.Equal(t, 0, r.code, tc.name)
		require.Equal(t, vol.ID+" available\n", r.stdout, tc.name)
		require.Empty(t, r.stderr, tc.name)
	}

	// Another CA is not trusted, nor are the system roots beside a given CA.
	r = attach(nil, "--os-cacert", other.PEMFile)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, certErr)

	// --insecure: only when asked, and it warns.
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"--insecure", nil, []string{"--insecure"}},
		{"OS_INSECURE", []string{"OS_INSECURE=true"}, nil},
	} {
		r = attach(tc.env, tc.args...)
		require.Equal(t, 1, r.code, tc.name)
		require.Contains(t, r.stderr, lookupErr, tc.name)
		require.Contains(t, r.stderr, warn, tc.name)
		r = list(tc.env, tc.args...)
		require.Equal(t, 0, r.code, tc.name)
		require.Equal(t, vol.ID+" available\n", r.stdout, tc.name)
		require.Contains(t, r.stderr, warn, tc.name)
	}
}
