//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/internal/testbed"
	"github.com/brick-storage/brick/ironicapi"
	"github.com/brick-storage/brick/osauth"
	"github.com/brick-storage/brick/secret"
)

// TestKeystoneTokenExpiry: with 10-second tokens, a client that logged in
// with a password or an application credential gets a new token when the
// service refuses the expired one, and the call succeeds; a fixed
// --os-token cannot be renewed and fails with 401. The test waits until
// Keystone itself refuses every first token (not a fixed sleep), so the
// calls after it are made with expired tokens for certain.
//
// Its file name (zz_) sorts after every other test file: the others share
// the run's Keystone with default tokens, and this one restarts it with
// 10-second tokens, so nothing after it has to restart it back.
func TestKeystoneTokenExpiry(t *testing.T) {
	lane(t, laneServices)
	k := needKeystone(t, testbed.KeystoneOptions{TokenExpiration: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ironic := serveFakeIronic(t, "127.0.0.2:6385", k.AuthURL)
	ac, err := k.CreateApplicationCredential(ctx, k.Member, "brick-e2e-expiry-"+randomHex(t))
	require.NoError(t, err)

	region := osauth.Options{AuthURL: k.AuthURL, RegionName: "RegionTwo"}
	password := region
	password.Username, password.Password, password.ProjectName = k.Member.Name, secret.New(k.Member.Password), k.Project
	appCred := region
	appCred.AppCredID, appCred.AppCredSecret = ac.ID, secret.New(ac.Secret)

	list := func(sc *gophercloud.ServiceClient) error {
		_, err := sc.Get(ctx, sc.ServiceURL("volume", "connectors"), nil, nil)
		return err
	}
	scs := map[string]*gophercloud.ServiceClient{}
	first := map[string]string{}
	connect := func(name string, opts osauth.Options) {
		sc, err := osauth.BaremetalClient(ctx, opts)
		require.NoError(t, err, name)
		require.NoError(t, list(sc), "%s: the first call, with a fresh token", name)
		scs[name], first[name] = sc, sc.Token()
	}
	connect("password", password)
	connect("application credential", appCred)
	// The fixed token last, right before its first call: it must not
	// expire before that call.
	tok, err := k.Token(ctx, k.Member)
	require.NoError(t, err)
	fixed := region
	fixed.Token, fixed.ProjectID = secret.New(tok), k.ProjectID
	connect("token", fixed)
	start := time.Now()
	waitExpired(ctx, t, k.AuthURL, first, k.TokenExpiration+30*time.Second)
	for _, name := range []string{"password", "application credential"} {
		require.NoError(t, list(scs[name]), "%s: the expired token is renewed", name)
		require.NotEqual(t, first[name], scs[name].Token(), name)
	}
	err = list(scs["token"])
	require.True(t, gophercloud.ResponseCodeIs(err, 401), "%v", err)
	t.Logf("with an expired --os-token the service call fails: %v", err)
	// What brick prints for it: one line saying how to get a new token.
	_, err = ironicapi.AllConnectors(ctx, ironicapi.ListConnectors(scs["token"], nil), 1)
	require.ErrorIs(t, err, apierr.ErrUnauthorized)
	require.Equal(t, "ironic list volume connectors: The request you have made requires authentication. (HTTP 401); Ironic refused the token (none, expired or revoked): "+
		"with --os-token or OS_TOKEN get a new one ('openstack token issue'); with --os-auth-type noauth this Ironic wants Keystone credentials instead "+
		"(--os-cloud, or OS_AUTH_URL, OS_USERNAME, OS_PASSWORD, OS_PROJECT_NAME)", err.Error())
	t.Logf("tokens accepted by the service: %d; waited %s for expiry", len(ironic.acceptedTokens()), time.Since(start).Round(100*time.Millisecond))
}

// waitExpired polls Keystone until it refuses every token of tokens (each
// expired), or fails the test after limit.
func waitExpired(ctx context.Context, t *testing.T, authURL string, tokens map[string]string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for name, tok := range tokens {
		for tokenValid(ctx, authURL, tok) {
			require.True(t, time.Now().Before(deadline), "%s: Keystone still accepts the first token after %s", name, limit)
			time.Sleep(250 * time.Millisecond)
		}
	}
}
