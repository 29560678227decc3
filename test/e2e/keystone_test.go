//go:build e2e

package e2e

// brick's OpenStack authentication against the test bed's real Keystone
// (test/keystone/up.sh): clouds.yaml and openrc-style OS_* variables
// without domains, application credentials, tokens, and the one-line
// errors a cloud user meets. No guest and no Cinder: the catalog is what
// is checked, and the CLI's debug log shows the token request and the
// endpoint it then used.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/internal/testbed"
	"github.com/brick-storage/brick/ironicapi"
	"github.com/brick-storage/brick/osauth"
	"github.com/brick-storage/brick/secret"
)

// needKeystone returns the run's shared test bed Keystone with opts
// (testbed.EnsureKeystone: one start per run; TestMain stops it).
func needKeystone(t *testing.T, opts testbed.KeystoneOptions) *testbed.Keystone {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), serviceStartTimeout)
	defer cancel()
	start := time.Now()
	k, err := testbed.EnsureKeystone(ctx, opts)
	if err != nil {
		t.Fatalf("starting the test bed Keystone: %v", err)
	}
	t.Logf("Keystone %s (project %s %s, tokens for %s): ready in %s (started by this run: %v)",
		k.AuthURL, k.Project, k.ProjectID, k.TokenExpiration, time.Since(start).Round(time.Millisecond), k.Started)
	return k
}

func TestKeystone(t *testing.T) {
	lane(t, laneServices)
	k := needKeystone(t, testbed.KeystoneOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// RegionOne's public Cinder is the test bed's keystone-mode API (8786).
	cinderURL := func(hostPort string) string { return "http://" + hostPort + "/v3/" + k.ProjectID + "/" }
	// openrc as Horizon writes it, minus the domains.
	openrc := []string{
		"OS_AUTH_URL=" + k.AuthURL, "OS_USERNAME=" + k.Member.Name, "OS_PASSWORD=" + k.Member.Password,
		"OS_PROJECT_NAME=" + k.Project, "OS_REGION_NAME=RegionTwo", "OS_INTERFACE=public",
	}
	// Ironic's version discovery contacts the endpoint: serve the
	// addresses the catalog keeps for tests.
	ironic := map[string]*fakeIronic{}
	for _, host := range []string{"127.0.0.2", "127.0.0.3"} {
		ironic[host] = serveFakeIronic(t, host+":6385", "")
	}

	t.Run("CloudsYAMLWithoutDomains", func(t *testing.T) {
		dir := t.TempDir()
		file := filepath.Join(dir, "clouds.yaml")
		require.NoError(t, os.WriteFile(file, []byte(`clouds:
  brick:
    auth:
      auth_url: `+k.AuthURL+`
      username: `+k.Member.Name+`
      project_name: `+k.Project+`
    region_name: RegionOne
`), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "secure.yaml"), []byte(`clouds:
  brick:
    auth:
      password: `+k.Member.Password+`
`), 0o600))
		for _, tc := range []struct{ region, iface, cinder, ironic string }{
			// The test bed's Ironic may not run: its endpoint is not contacted.
			{"", "", cinderURL("127.0.0.1:8786"), ""},
			{"RegionOne", "internal", cinderURL("127.0.0.3:8776"), "http://127.0.0.3:6385/"},
			{"RegionTwo", "", cinderURL("127.0.0.2:8776"), "http://127.0.0.2:6385/"}, // Cinder as volumev3
		} {
			opts := osauth.Options{Cloud: "brick", CloudsFiles: []string{file}, RegionName: tc.region, Interface: tc.iface}
			sc, err := osauth.BlockStorageClient(ctx, opts)
			require.NoError(t, err)
			require.Equal(t, tc.cinder, sc.Endpoint, tc.region+" "+tc.iface)
			if tc.ironic == "" {
				continue
			}
			bm, err := osauth.BaremetalClient(ctx, opts)
			require.NoError(t, err)
			require.Equal(t, tc.ironic, bm.Endpoint, tc.region+" "+tc.iface)
		}
	})

	t.Run("OpenrcVariables", func(t *testing.T) {
		r := runBrickBin(t, ctx, openrc, "--debug", "ironic", "connector", "list")
		require.Equal(t, 0, r.code)
		requireAuthenticatedThenCalled(t, r, k.AuthURL, "http://127.0.0.2:6385/")
		require.NotEmpty(t, ironic["127.0.0.2"].lastToken(), "Ironic got the Keystone token")

		// OS_DEFAULT_DOMAIN is where a user named without a domain is looked for.
		r = runBrickBin(t, ctx, append(openrc, "OS_DEFAULT_DOMAIN=elsewhere"), "ironic", "connector", "list")
		require.Equal(t, 1, r.code)
		require.Equal(t, `brick: authenticate at `+k.AuthURL+`: wrong password, or no user "`+k.Member.Name+
			`" in domain id "elsewhere" (check --os-username or --os-user-id, --os-password and --os-user-domain-name)`+"\n", r.stderr)
	})

	t.Run("FlagsAndOverrides", func(t *testing.T) {
		// Flags as a script would pass them; the Ironic endpoint flag
		// overrides RegionOne's catalog entry (whose Ironic may not run).
		r := runBrickBin(t, ctx, nil, "--debug", "--os-auth-url", k.AuthURL, "--os-username", k.Member.Name,
			"--os-password", k.Member.Password, "--os-project-name", k.Project, "--os-region-name", "RegionOne",
			"--ironic-endpoint", "http://127.0.0.2:6385", "ironic", "connector", "list")
		require.Equal(t, 0, r.code)
		requireAuthenticatedThenCalled(t, r, k.AuthURL, "http://127.0.0.2:6385/")

		member := osauth.Options{AuthURL: k.AuthURL, Username: k.Member.Name, Password: secret.New(k.Member.Password), ProjectName: k.Project,
			CinderEndpoint: "http://127.0.0.9:8776/v3/$(project_id)s"}
		sc, err := osauth.BlockStorageClient(ctx, member)
		require.NoError(t, err)
		require.Equal(t, cinderURL("127.0.0.9:8776"), sc.Endpoint, "the override gets the token's project")
	})

	t.Run("ApplicationCredential", func(t *testing.T) {
		ac, err := k.CreateApplicationCredential(ctx, k.Member, "brick-e2e-"+randomHex(t))
		require.NoError(t, err)
		for _, opts := range []osauth.Options{
			{AuthURL: k.AuthURL, AppCredID: ac.ID, AppCredSecret: secret.New(ac.Secret)},
			{AuthURL: k.AuthURL, AppCredName: ac.Name, Username: k.Member.Name, AppCredSecret: secret.New(ac.Secret)},
		} {
			sc, err := osauth.BlockStorageClient(ctx, opts)
			require.NoError(t, err)
			require.Equal(t, cinderURL("127.0.0.1:8786"), sc.Endpoint)
		}
		r := runBrickBin(t, ctx, []string{"OS_AUTH_TYPE=v3applicationcredential", "OS_AUTH_URL=" + k.AuthURL,
			"OS_APPLICATION_CREDENTIAL_ID=" + ac.ID, "OS_APPLICATION_CREDENTIAL_SECRET=" + ac.Secret,
			"OS_REGION_NAME=RegionOne", "OS_INTERFACE=internal"}, "--debug", "ironic", "connector", "list")
		require.Equal(t, 0, r.code)
		requireAuthenticatedThenCalled(t, r, k.AuthURL, "http://127.0.0.3:6385/")
		require.NotEmpty(t, ironic["127.0.0.3"].lastToken(), "Ironic got the Keystone token")

		_, err = osauth.BlockStorageClient(ctx, osauth.Options{AuthURL: k.AuthURL, AppCredID: ac.ID, AppCredSecret: secret.New("wrong")})
		require.ErrorIs(t, err, apierr.ErrUnauthorized)
		require.Equal(t, `authenticate at `+k.AuthURL+`: application credential "`+ac.ID+
			`" was refused: wrong secret, or it expired or was deleted (check --os-application-credential-id or -name and --os-application-credential-secret)`, err.Error())
	})

	t.Run("Token", func(t *testing.T) {
		tok, err := k.Token(ctx, k.Member)
		require.NoError(t, err)
		sc, err := osauth.BlockStorageClient(ctx, osauth.Options{AuthURL: k.AuthURL, Token: secret.New(tok), ProjectID: k.ProjectID})
		require.NoError(t, err)
		require.Equal(t, cinderURL("127.0.0.1:8786"), sc.Endpoint)
		_, err = osauth.BlockStorageClient(ctx, osauth.Options{AuthURL: k.AuthURL, Token: secret.New("gAAAAAbogus"), ProjectID: k.ProjectID})
		require.ErrorIs(t, err, apierr.ErrUnauthorized)
		require.Equal(t, `authenticate at `+k.AuthURL+`: the token was refused: it expired or was revoked (get a new one, e.g. with 'openstack token issue', and pass it as --os-token or OS_TOKEN)`, err.Error())

		r := runBrickBin(t, ctx, []string{"OS_AUTH_URL=" + k.AuthURL, "OS_TOKEN=" + tok, "OS_PROJECT_ID=" + k.ProjectID, "OS_REGION_NAME=RegionTwo"},
			"--debug", "ironic", "connector", "list")
		require.Equal(t, 0, r.code)
		requireAuthenticatedThenCalled(t, r, k.AuthURL, "http://127.0.0.2:6385/")
		require.NotContains(t, r.stderr, tok, "the token is masked in the debug log")
	})

	t.Run("Errors", func(t *testing.T) {
		member := osauth.Options{AuthURL: k.AuthURL, Username: k.Member.Name, Password: secret.New(k.Member.Password), ProjectName: k.Project}
		for _, tc := range []struct {
			name string
			edit func(*osauth.Options)
			kind error
			want string
		}{
			{"wrong password", func(o *osauth.Options) { o.Password = secret.New("not-the-password") }, apierr.ErrUnauthorized,
				`authenticate at ` + k.AuthURL + `: wrong password, or no user "` + k.Member.Name +
					`" in domain id "default" (check --os-username or --os-user-id, --os-password and --os-user-domain-name)`},
			{"unknown project", func(o *osauth.Options) { o.ProjectName = "no-such-project" }, apierr.ErrUnauthorized,
				`authenticate at ` + k.AuthURL + `: user "` + k.Member.Name + `" in domain id "default" may not use project "no-such-project" in domain id "default": ` +
					`it does not exist there or the user has no role on it (check --os-project-name or --os-project-id and --os-project-domain-name)`},
			{"no Cinder in region", func(o *osauth.Options) { o.RegionName = "RegionThree" }, apierr.ErrNoEndpoint,
				`the service catalog has no Cinder endpoint (type block-storage, block-store, volume, volumev2, volumev3) for interface "public" in region "RegionThree"; ` +
					`it has: RegionGuest public, RegionOne internal, RegionOne public, RegionTwo public (set --os-region-name, --os-interface or --cinder-endpoint)`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				o := member
				tc.edit(&o)
				_, err := osauth.BlockStorageClient(ctx, o)
				require.ErrorIs(t, err, tc.kind)
				require.Equal(t, tc.want, err.Error())
				if tc.kind == apierr.ErrUnauthorized {
					require.True(t, gophercloud.ResponseCodeIs(err, 401), "the cause stays reachable")
				}
			})
		}
		o := member
		o.RegionName = "RegionThree"
		_, err := osauth.BaremetalClient(ctx, o)
		require.ErrorIs(t, err, apierr.ErrNoEndpoint)
		require.Equal(t, `the service catalog has no Ironic endpoint (type baremetal, bare-metal) for interface "public" in region "RegionThree"; `+
			`it has: RegionGuest public, RegionOne internal, RegionOne public, RegionTwo public (set --os-region-name, --os-interface or --ironic-endpoint)`, err.Error())

		// The CLI prints the same one line, exit code 1, no password.
		r := runBrickBin(t, ctx, append(openrc, "OS_PASSWORD=wrong-pw"), "ironic", "connector", "list")
		require.Equal(t, 1, r.code)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
		require.Contains(t, r.stderr, "wrong password")
		require.NotContains(t, r.stderr, "wrong-pw")
	})
}

// TestKeystoneIronicRegister: brick ironic register and connector list
// against the test bed's Ironic in keystone mode (tokens checked by
// keystonemiddleware, Ironic's policy applied), its endpoint taken from
// the Keystone catalog (RegionOne public). The node belongs to the brick
// project: the member user may see it but not create volume connectors
// (Ironic wants the owner project's admin), and says so in one line; the
// project admin registers; the member lists.
func TestKeystoneIronicRegister(t *testing.T) {
	lane(t, laneServices)
	k := needKeystone(t, testbed.KeystoneOptions{})
	ir := needIronic(t, testbed.IronicOptions{Keystone: true, MaxLimit: ironicMaxLimit})
	require.Equal(t, "http://127.0.0.1:6386", ir.Endpoint, "the catalog's RegionOne Ironic")
	ctx := testContext(t)
	sc := keystoneIronicClient(t, ctx, k, ir)
	node := newOwnedNode(t, ctx, sc, "ks", k.ProjectID)
	n := time.Now().UnixNano()
	iqn := iqnFor(node.Name, 0)
	root := registerHost(t, iqn, fmt.Sprintf("21%014x", n&0xffffffffffffff),
		fmt.Sprintf("20010db8000000000000%012x", n&0xffffffffffff), fmt.Sprintf("52:54:%02x:%02x:%02x:%02x", byte(n>>24), byte(n>>16), byte(n>>8), byte(n)))
	env := func(u testbed.KeystoneUser) []string {
		return []string{"OS_AUTH_URL=" + k.AuthURL, "OS_USERNAME=" + u.Name, "OS_PASSWORD=" + u.Password,
			"OS_PROJECT_NAME=" + k.Project, "OS_REGION_NAME=RegionOne", "BRICK_HOST_ROOT=" + root}
	}

	r := runBrickBin(t, ctx, env(k.Member), "ironic", "register", "--node", node.Name, "--nic", "eth1")
	t.Logf("member registers: exit %d: %s", r.code, r.stderr)
	require.Equal(t, 1, r.code, r.stderr)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %s", r.stderr)
	require.Equal(t, "brick: ironic create volume connector of node "+node.UUID+": Access was denied to the following resource: baremetal:volume:create (HTTP 403); "+
		"Ironic's policy does not allow this to the user: it needs the admin role on the node's owner or lessee project, or a system-scoped member; "+
		"use credentials with that role (--os-cloud, or --os-username and --os-project-name)\n", r.stderr)

	r = runBrickBin(t, ctx, env(k.ProjectAdmin), "--debug", "ironic", "register", "--node", node.Name, "--nic", "eth1", "-f", "value", "-c", "Action")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, strings.Repeat("created\n", 5), r.stdout)
	requireAuthenticatedThenCalled(t, r, k.AuthURL, ir.Endpoint+"/")

	r = runBrickBin(t, ctx, env(k.Member), "ironic", "connector", "list", "--node", node.UUID, "-f", "value", "-c", "Connector ID")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, iqn+"\n")

	// A token Ironic refuses: one line, not Ironic's JSON body.
	r = runBrickBin(t, ctx, []string{"OS_AUTH_TYPE=noauth", "BRICK_IRONIC_ENDPOINT=" + ir.Endpoint, "BRICK_HOST_ROOT=" + root},
		"ironic", "connector", "list", "--node", node.UUID)
	t.Logf("noauth client at a keystone Ironic: exit %d: %s", r.code, r.stderr)
	require.Equal(t, 1, r.code, r.stderr)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %s", r.stderr)
	require.Contains(t, r.stderr, "(HTTP 401)")
	require.NotContains(t, r.stderr, `{"error"`)
}

// keystoneIronicClient is a client of the keystone-mode Ironic with the
// project admin's token.
func keystoneIronicClient(t *testing.T, ctx context.Context, k *testbed.Keystone, ir *testbed.Ironic) *gophercloud.ServiceClient {
	t.Helper()
	tok, err := k.Token(ctx, k.ProjectAdmin)
	require.NoError(t, err)
	sc, _ := ironicBed{endpoint: ir.Endpoint}.client(t)
	sc.ProviderClient.SetToken(tok)
	return sc
}

// newOwnedNode is newNode for a node owned by project (Ironic 1.50), powered off.
func newOwnedNode(t *testing.T, ctx context.Context, sc *gophercloud.ServiceClient, prefix, project string) nodes.Node {
	t.Helper()
	c := *sc
	c.Microversion = "1.50"
	var n nodes.Node
	name := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	_, err := c.Post(ctx, c.ServiceURL("nodes"), map[string]any{"name": name, "driver": "fake-hardware", "owner": project}, &n, &gophercloud.RequestOpts{OkCodes: []int{201}})
	require.NoError(t, err, "create node %s", name)
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = c.Delete(cctx, c.ServiceURL("nodes", n.UUID), nil)
	})
	setPower(t, ctx, sc, n.UUID, ironicapi.PowerOff)
	return n
}

// requireAuthenticatedThenCalled checks the debug log of a brick run: a
// token was issued, then the service endpoint from the catalog was called.
func requireAuthenticatedThenCalled(t *testing.T, r brickRun, authURL, endpoint string) {
	t.Helper()
	i := strings.Index(r.stderr, "url="+authURL+"/auth/tokens status=201")
	require.GreaterOrEqual(t, i, 0, "no successful token request in the debug log")
	require.Contains(t, r.stderr[i:], "url="+endpoint, "the catalog's endpoint was not called after the token")
}

// fakeIronic answers Ironic's version discovery and an empty volume
// connector list, and remembers the token it was sent. With validateAt (a
// Keystone URL) it refuses (401) tokens Keystone no longer accepts, as
// keystonemiddleware does.
type fakeIronic struct {
	mu     sync.Mutex
	token  string
	tokens []string // every token accepted, in order, without repeats
}

func serveFakeIronic(t *testing.T, addr, validateAt string) *fakeIronic {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err, "the Keystone catalog keeps %s for tests", addr)
	f := &fakeIronic{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/":
			_, _ = w.Write([]byte(`{"name":"OpenStack Ironic API","versions":[{"id":"v1","status":"CURRENT","version":"1.82","min_version":"1.1"}]}`))
		case strings.HasPrefix(r.URL.Path, "/v1/volume/connectors"):
			tok := r.Header.Get("X-Auth-Token")
			if validateAt != "" && !tokenValid(r.Context(), validateAt, tok) {
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"error":{"code":401,"title":"Unauthorized","message":"The request you have made requires authentication."}}`))
				return
			}
			f.mu.Lock()
			f.token = tok
			if n := len(f.tokens); n == 0 || f.tokens[n-1] != tok {
				f.tokens = append(f.tokens, tok)
			}
			f.mu.Unlock()
			_, _ = w.Write([]byte(`{"connectors":[]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return f
}

// tokenValid asks Keystone whether tok is still valid (a token may
// validate itself).
func tokenValid(ctx context.Context, authURL, tok string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL+"/auth/tokens", nil)
	if err != nil {
		return false
	}
	req.Header.Set("X-Auth-Token", tok)
	req.Header.Set("X-Subject-Token", tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (f *fakeIronic) acceptedTokens() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.tokens)
}

func (f *fakeIronic) lastToken() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.token
}

func randomHex(t *testing.T) string {
	b := make([]byte, 4)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}
