package osauth

import (
	"bytes"
	"context"
	"crypto/tls"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testca"
	"github.com/brick-storage/brick/secret"
)

// tlsServer serves h over TLS with cert.
func tlsServer(t *testing.T, h http.Handler, cert tls.Certificate, maxVersion uint16) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MaxVersion: maxVersion}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// TestTLSOptions: verification is on by default (system roots only), a
// custom CA given with CACert is the only one trusted, the host name is
// checked, TLS below 1.2 is refused even with Insecure, and Insecure works
// only when asked and says so in a warning.
func TestTLSOptions(t *testing.T) {
	ca, other := testca.New(t, "brick-test-ca"), testca.New(t, "other-ca")
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) })
	good := tlsServer(t, ok, ca.ServerCert(t, "127.0.0.1", "localhost"), 0)
	wrongHost := tlsServer(t, ok, ca.ServerCert(t, "10.9.9.9"), 0)
	oldTLS := tlsServer(t, ok, ca.ServerCert(t, "127.0.0.1"), tls.VersionTLS11)

	get := func(url string, o Options) (string, error) {
		var logs bytes.Buffer
		o.Log = slog.New(slog.NewTextHandler(&logs, nil))
		o.AuthType, o.CinderEndpoint = AuthNoAuth, url+"/v3"
		sc, err := BlockStorageClient(context.Background(), o)
		require.NoError(t, err)
		_, err = sc.Get(context.Background(), sc.ServiceURL("volumes"), nil, nil)
		return logs.String(), err
	}
	for _, tc := range []struct {
		name, url string
		o         Options
		wantErr   string
		warn      bool
	}{
		{"default verifies", good.URL, Options{}, "certificate signed by unknown authority", false},
		{"custom CA", good.URL, Options{CACert: ca.PEMFile}, "", false},
		{"another CA", good.URL, Options{CACert: other.PEMFile}, "certificate signed by unknown authority", false},
		{"host name checked", wrongHost.URL, Options{CACert: ca.PEMFile}, "certificate is valid for 10.9.9.9, not 127.0.0.1", false},
		{"insecure when asked", good.URL, Options{Insecure: true}, "", true},
		{"insecure, wrong host", wrongHost.URL, Options{Insecure: true}, "", true},
		{"TLS 1.1 refused", oldTLS.URL, Options{CACert: ca.PEMFile}, "protocol version", false},
		{"TLS 1.1 refused insecure", oldTLS.URL, Options{Insecure: true}, "protocol version", true},
	} {
		logs, err := get(tc.url, tc.o)
		if tc.wantErr == "" {
			require.NoError(t, err, tc.name)
		} else {
			require.Error(t, err, tc.name)
			require.Contains(t, err.Error(), tc.wantErr, tc.name)
		}
		if tc.warn {
			require.Contains(t, logs, "TLS certificate verification is off", tc.name)
		} else {
			require.NotContains(t, logs, "verification is off", tc.name)
		}
	}
}

// TestTLSKeystone: the Keystone client verifies with the same CA: a
// password auth over TLS fails against an unknown CA and works with it.
func TestTLSKeystone(t *testing.T) {
	ca := testca.New(t, "keystone-ca")
	plain := fakeKeystone(t, "https://cinder.example", "pw-SECRET")
	plain.Close()
	ks := tlsServer(t, plain.Config.Handler, ca.ServerCert(t, "127.0.0.1"), 0)
	opts := Options{AuthURL: ks.URL + "/v3", Username: "u", Password: secret.New("pw-SECRET"), ProjectName: "demo",
		UserDomainName: "Default", ProjectDomainName: "Default", RegionName: "R1"}
	_, err := BlockStorageClient(context.Background(), opts)
	require.Error(t, err)
	require.Contains(t, err.Error(), "certificate")
	require.NotContains(t, err.Error(), "pw-SECRET")
	opts.CACert = ca.PEMFile
	sc, err := BlockStorageClient(context.Background(), opts)
	require.NoError(t, err)
	require.Equal(t, "https://cinder.example/v3/proj1/", sc.Endpoint)
}

// TestTLSFromCloudsYAML: cacert and verify: false come from clouds.yaml;
// a bad CA bundle is a configuration error naming the file.
func TestTLSFromCloudsYAML(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "clouds.yaml")
	require.NoError(t, os.WriteFile(file, []byte("clouds:\n  ca:\n    auth_type: none\n    cacert: /etc/ssl/brick-ca.pem\n  off:\n    auth_type: none\n    verify: false\n  on:\n    auth_type: none\n"), 0o600))
	o, err := Resolve(Options{Cloud: "ca", CloudsFiles: []string{file}})
	require.NoError(t, err)
	require.Equal(t, "/etc/ssl/brick-ca.pem", o.CACert)
	require.False(t, o.Insecure)
	o, err = Resolve(Options{Cloud: "off", CloudsFiles: []string{file}})
	require.NoError(t, err)
	require.True(t, o.Insecure)
	o, err = Resolve(Options{Cloud: "on", CloudsFiles: []string{file}})
	require.NoError(t, err)
	require.False(t, o.Insecure, "verification stays on unless asked")

	bad := filepath.Join(dir, "bad.pem")
	require.NoError(t, os.WriteFile(bad, []byte("not a certificate"), 0o600))
	_, err = BlockStorageClient(context.Background(), Options{AuthType: AuthNoAuth, CinderEndpoint: "https://127.0.0.1:1/v3", CACert: bad})
	require.ErrorIs(t, err, ErrConfig)
	require.Contains(t, err.Error(), bad)
}
