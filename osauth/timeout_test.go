package osauth_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/ironicapi"
	"github.com/brick-storage/brick/osauth"
	"github.com/brick-storage/brick/secret"
)

// hungServer accepts connections and never answers.
func hungServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { <-done; c.Close() }()
		}
	}()
	return "http://" + ln.Addr().String()
}

// slowBodyServer sends its headers at once and then trickles the body.
func slowBodyServer(t *testing.T) string {
	release := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"versions": [`))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { close(release); srv.Close() })
	return "http://" + ln.Addr().String()
}

// TestHungServerNamesURLAndLimit: a server that never answers (or stops
// in the middle of its body) fails each request after Options.Timeout with
// one line naming the URL and the limit, for Keystone, Cinder and Ironic.
func TestHungServerNamesURLAndLimit(t *testing.T) {
	const limit = 100 * time.Millisecond // neither server ever finishes: any limit is waited out
	hung, slow := hungServer(t), slowBodyServer(t)
	ctx := context.Background()

	t.Run("Keystone", func(t *testing.T) {
		_, err := osauth.BlockStorageClient(ctx, osauth.Options{AuthURL: hung + "/v3", Username: "u", Password: secret.New("p"),
			ProjectName: "p", Timeout: limit})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		var te *osauth.TimeoutError
		require.True(t, errors.As(err, &te), "%v", err)
		require.Equal(t, `authenticate at `+hung+`/v3: no answer from `+hung+`/v3/auth/tokens within 100ms (the time limit of one request, --api-timeout); `+
			`check --os-auth-url (OS_AUTH_URL, or auth_url in clouds.yaml) and that Keystone runs there`, err.Error())
	})
	for _, base := range []string{hung, slow} {
		t.Run("Cinder", func(t *testing.T) {
			sc, err := osauth.BlockStorageClient(ctx, osauth.Options{AuthType: osauth.AuthNoAuth, CinderEndpoint: base + "/v3", Timeout: limit})
			require.NoError(t, err)
			start := time.Now()
			_, err = cinderapi.NewClient(ctx, sc, "")
			require.Less(t, time.Since(start), 20*time.Second, "the limit, not the hang")
			require.ErrorIs(t, err, apierr.ErrUnreachable)
			require.Contains(t, err.Error(), "cinder version discovery: no answer from "+base+"/ within 100ms (the time limit of one request, --api-timeout); "+
				"check --cinder-endpoint, or the catalog's block-storage endpoint for --os-region-name and --os-interface, and that Cinder runs there")
			require.NotContains(t, err.Error(), "\n")
		})
		t.Run("Ironic", func(t *testing.T) {
			sc, err := osauth.BaremetalClient(ctx, osauth.Options{AuthType: osauth.AuthNoAuth, IronicEndpoint: base, Timeout: limit})
			require.NoError(t, err)
			_, err = ironicapi.AllConnectors(ctx, ironicapi.ListConnectors(sc, nil), 0)
			require.ErrorIs(t, err, apierr.ErrUnreachable)
			require.True(t, strings.HasPrefix(err.Error(), "ironic list volume connectors: cannot reach "+base+"/v1/volume/connectors: no answer within 100ms (the time limit of one request, --api-timeout); check --ironic-endpoint"), err.Error())
		})
	}
}
