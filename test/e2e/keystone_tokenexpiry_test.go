//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed"
	"github.com/brick-storage/brick/ironicapi"
	"github.com/brick-storage/brick/osauth"
	"github.com/brick-storage/brick/secret"
)

// TestKeystoneTokenExpiry: with 20-second tokens, a client that logged in
// with a password or an application credential gets a new token when the
// service refuses the expired one, and the call succeeds; a fixed
// --os-token cannot be renewed and fails with 401.
//
// Its file name sorts after the other Keystone tests': they share the
// run's Keystone with default tokens, and this one restarts it (once, last).
func TestKeystoneTokenExpiry(t *testing.T) {
	lane(t, laneServices)
	k := needKeystone(t, testbed.KeystoneOptions{TokenExpiration: 20 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ironic := serveFakeIronic(t, "127.0.0.2:6385", k.AuthURL)
	ac, err := k.CreateApplicationCredential(ctx, k.Member, "brick-e2e-expiry-"+randomHex(t))
	require.NoError(t, err)
	tok, err := k.Token(ctx, k.Member)
	require.NoError(t, err)

	region := osauth.Options{AuthURL: k.AuthURL, RegionName: "RegionTwo"}
	clients := map[string]osauth.Options{}
	o := region
	o.Username, o.Password, o.ProjectName = k.Member.Name, secret.New(k.Member.Password), k.Project
	clients["password"] = o
	o = region
	o.AppCredID, o.AppCredSecret = ac.ID, secret.New(ac.Secret)
	clients["application credential"] = o
	o = region
	o.Token, o.ProjectID = secret.New(tok), k.ProjectID
	clients["token"] = o

	list := func(sc *gophercloud.ServiceClient) error {
		_, err := sc.Get(ctx, sc.ServiceURL("volume", "connectors"), nil, nil)
		return err
	}
	scs := map[string]*gophercloud.ServiceClient{}
	first := map[string]string{}
	for name, opts := range clients {
		sc, err := osauth.BaremetalClient(ctx, opts)
		require.NoError(t, err, name)
		require.NoError(t, list(sc), name)
		scs[name], first[name] = sc, sc.Token()
	}
	start := time.Now()
	time.Sleep(k.TokenExpiration + 3*time.Second)
	for _, name := range []string{"password", "application credential"} {
		require.NoError(t, list(scs[name]), "%s: the expired token is renewed", name)
		require.NotEqual(t, first[name], scs[name].Token(), name)
	}
	err = list(scs["token"])
	require.True(t, gophercloud.ResponseCodeIs(err, 401), "%v", err)
	t.Logf("with an expired --os-token the service call fails: %v", err)
	// What brick prints for it: one line saying how to get a new token.
	err = ironicapi.ConvertError("list", err)
	require.ErrorIs(t, err, ironicapi.ErrUnauthorized)
	require.Equal(t, "ironic list volume resources: The request you have made requires authentication. (HTTP 401); Ironic refused the token (none, expired or revoked): "+
		"with --os-token or OS_TOKEN get a new one ('openstack token issue'); with --os-auth-type noauth this Ironic wants Keystone credentials instead "+
		"(--os-cloud, or OS_AUTH_URL, OS_USERNAME, OS_PASSWORD, OS_PROJECT_NAME)", err.Error())
	t.Logf("tokens accepted by the service: %d; waited %s for expiry", len(ironic.acceptedTokens()), time.Since(start).Round(time.Second))
}
