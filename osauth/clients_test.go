package osauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/secret"
)

// countingKeystone serves fakeKeystone's catalog, plus Ironic and Barbican
// entries, and counts token requests; it refuses the first `fail` of them.
func countingKeystone(t *testing.T, fail int32) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	inner := fakeKeystone(t, "http://cinder.example", "pw")
	t.Cleanup(inner.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v3/auth/tokens" {
			if n.Add(1) <= fail {
				http.Error(w, "down", http.StatusServiceUnavailable)
				return
			}
		}
		inner.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestClientsShareOneKeystoneSession(t *testing.T) {
	ks, tokens := countingKeystone(t, 0)
	c := NewClients(Options{AuthURL: ks.URL + "/v3", Username: "u", Password: secret.New("pw"), ProjectName: "demo",
		IronicEndpoint: "http://ironic.example:6385"})
	require.Zero(t, tokens.Load(), "NewClients must not authenticate")

	ctx := context.Background()
	bs, err := c.BlockStorage(ctx)
	require.NoError(t, err)
	require.Equal(t, "http://cinder.example/v3/proj1/", bs.Endpoint)
	bm, err := c.Baremetal(ctx)
	require.NoError(t, err)
	require.Equal(t, "http://ironic.example:6385/", bm.Endpoint)
	require.Same(t, bs.ProviderClient, bm.ProviderClient)
	_, err = c.KeyManager(ctx)
	require.ErrorIs(t, err, apierr.ErrNoEndpoint, "the fake catalog lists no key-manager")
	require.ErrorContains(t, err, "no Barbican endpoint (type key-manager)")
	require.EqualValues(t, 1, tokens.Load(), "one token for every service")
}

func TestClientsRetryAFailure(t *testing.T) {
	ks, tokens := countingKeystone(t, 1)
	c := NewClients(Options{AuthURL: ks.URL + "/v3", Username: "u", Password: secret.New("pw"), ProjectName: "demo"})
	_, err := c.BlockStorage(context.Background())
	require.ErrorIs(t, err, apierr.ErrUnreachable)
	_, err = c.BlockStorage(context.Background())
	require.NoError(t, err, "a long-running caller gets a new attempt")
	require.EqualValues(t, 2, tokens.Load())
}

func TestClientsWithoutKeystone(t *testing.T) {
	c := NewClients(Options{AuthType: AuthNoAuth, CinderEndpoint: "http://cinder.example/v3"})
	_, err := c.BlockStorage(context.Background())
	require.NoError(t, err)
	_, err = c.KeyManager(context.Background())
	require.ErrorIs(t, err, ErrNoKeystone)
	o, err := c.Options()
	require.NoError(t, err)
	require.Equal(t, AuthNoAuth, o.AuthType)

	_, err = NewClients(Options{AuthType: "kerberos"}).Options()
	require.True(t, errors.Is(err, ErrConfig))
}
