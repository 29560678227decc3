//go:build e2e

package e2e

// The errors a cloud user meets (issue 17's table), each produced by the
// brick binary on the host against the test bed's real Keystone and its
// keystone-mode Cinder, or against small servers that misbehave the way
// proxies and hung services do. Every case fails before any kernel work,
// so a fixture host tree stands in for the host. The test logs the table
// docs/clouds.md quotes.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/internal/testbed"
	"github.com/brick-storage/brick/osauth"
	"github.com/brick-storage/brick/secret"
)

// TestKeystoneReaderRefused: a user with only the reader role on the
// volume's project asks the keystone-mode Cinder (enforce_new_defaults)
// to attach; Cinder refuses with 403, brick prints one line naming the
// volume, the step and the role it needs, exits 1, and leaves nothing in
// Cinder. A member's force-detach (admin only) says it needs admin.
func TestKeystoneReaderRefused(t *testing.T) {
	lane(t, laneServices)
	k := needKeystone(t, testbed.KeystoneOptions{})
	c := needCinder(t, guestCinderOptions)
	require.NotEmpty(t, c.KeystoneEndpoint, "the keystone-mode Cinder API runs")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	inProject := c.InProject(k.ProjectID)
	vol := newVolume(t, inProject, fmt.Sprintf("brick-e2e-reader-%d", time.Now().UnixNano()))
	root := errorsHostRoot(t)
	reader := []string{"OS_AUTH_URL=" + k.AuthURL, "OS_USERNAME=" + k.Reader.Name, "OS_PASSWORD=" + k.Reader.Password,
		"OS_PROJECT_NAME=" + k.Project, "OS_REGION_NAME=RegionOne", "BRICK_HOST_ROOT=" + root}
	hint := "Cinder's policy does not allow %s to this user: it needs the member role on the volume's project (a reader may only read); " +
		"use credentials with it (--os-cloud, or --os-username and --os-project-name)"
	for _, tc := range []struct{ flow, step, policy string }{
		{"", "attachment create", "volume:attachment_create"},
		{"3.0", "reserve", "volume_extension:volume_actions:reserve"},
	} {
		args := []string{"local-attach", vol.ID}
		if tc.flow != "" {
			args = append(args, "--os-volume-api-version", tc.flow)
		}
		r := runBrickBin(t, ctx, reader, args...)
		require.Equal(t, 1, r.code, r.stderr)
		require.Empty(t, r.stdout)
		require.Equal(t, "brick: local-attach "+vol.ID+": cinder "+tc.step+" volume "+vol.ID+": Policy doesn't allow "+tc.policy+
			" to be performed (HTTP 403); "+fmt.Sprintf(hint, tc.step)+"\n", r.stderr)
		require.NotContains(t, r.stderr, k.Reader.Password)
		v, err := inProject.GetVolume(ctx, vol.ID)
		require.NoError(t, err)
		require.Equal(t, "available", v.Status, "nothing left in Cinder")
		require.Empty(t, v.Attachments)
	}

	// Another project's volume: Cinder hides it (404), so the line says
	// whose volumes these credentials see.
	other := newVolume(t, c, fmt.Sprintf("brick-e2e-other-project-%d", time.Now().UnixNano()))
	memberEnv := []string{"OS_AUTH_URL=" + k.AuthURL, "OS_USERNAME=" + k.Member.Name, "OS_PASSWORD=" + k.Member.Password,
		"OS_PROJECT_NAME=" + k.Project, "OS_REGION_NAME=RegionOne", "BRICK_HOST_ROOT=" + root}
	r := runBrickBin(t, ctx, memberEnv, "local-attach", other.ID)
	require.Equal(t, 1, r.code, r.stderr)
	require.Equal(t, "brick: local-attach "+other.ID+": cinder find volume "+other.ID+": no volume with this ID or name; these credentials see the volumes of project "+
		k.ProjectID+" only: for another project's volume use credentials for that project (--os-project-name, --os-cloud) or an admin's\n", r.stderr)
	v, err := c.GetVolume(ctx, other.ID)
	require.NoError(t, err)
	require.Equal(t, "available", v.Status)

	// force_detach is admin only: a member gets the line that says so.
	sc, err := osauth.BlockStorageClient(ctx, osauth.Options{AuthURL: k.AuthURL, Username: k.Member.Name,
		Password: secret.New(k.Member.Password), ProjectName: k.Project, RegionName: "RegionOne"})
	require.NoError(t, err)
	require.Equal(t, c.KeystoneEndpoint+"/"+k.ProjectID+"/", sc.Endpoint)
	cl, err := cinderapi.NewClient(ctx, sc, "")
	require.NoError(t, err)
	err = cl.ForceDetach(ctx, vol.ID, "00000000-0000-4000-8000-000000000017", cinderapi.HostConnector{"host": "brick-errors"})
	require.ErrorIs(t, err, apierr.ErrForbidden)
	require.Equal(t, "cinder force_detach volume "+vol.ID+": Policy doesn't allow volume_extension:volume_admin_actions:force_detach to be performed (HTTP 403); "+
		"Cinder's policy does not allow force_detach to this user: it needs the admin role; use credentials with it (--os-cloud, or --os-username and --os-project-name)", err.Error())
}

// errorsHostRoot is a fixture host tree with an initiator name and a host
// name: enough for brick to build its connector.
func errorsHostRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	hosttest.WriteFile(t, root, "/etc/iscsi/initiatorname.iscsi", "InitiatorName=iqn.1993-08.org.debian:01:brickkserrors\n")
	hosttest.WriteFile(t, root, "/proc/sys/kernel/hostname", "brick-ks-errors\n")
	return root
}

// errorCase is one row of the error table: what the user did, the brick
// command line (env and args), and the line and exit code brick gives.
type errorCase struct {
	name string
	env  []string
	args []string
	want string // the whole stderr line, without "\n"; "" = log only
	code int
}

// TestKeystoneErrorTable runs each error case of issue 17 through the
// brick binary and asserts the one line it prints and its exit code; the
// log ends with the table as Markdown (docs/clouds.md).
func TestKeystoneErrorTable(t *testing.T) {
	lane(t, laneServices)
	k := needKeystone(t, testbed.KeystoneOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root := errorsHostRoot(t)
	vol := "00000000-0000-4000-8000-000000000017" // never reached: each case fails before
	member := []string{"OS_AUTH_URL=" + k.AuthURL, "OS_USERNAME=" + k.Member.Name, "OS_PASSWORD=" + k.Member.Password,
		"OS_PROJECT_NAME=" + k.Project, "OS_REGION_NAME=RegionOne", "BRICK_HOST_ROOT=" + root}
	with := func(env []string, more ...string) []string { return append(append([]string{}, env...), more...) }
	html500 := faultServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("<html><head><title>500 Internal Server Error</title></head>\n<body><h1>Internal Server Error</h1><p>proxy</p></body></html>\n"))
	})
	nonJSON := faultServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("this is not JSON\n"))
	})
	hung := faultServer(t, false, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second): // srv.Close waits for it
		}
	})
	tlsSrv := faultServer(t, true, func(w http.ResponseWriter, r *http.Request) {})
	closed := closedPort(t)
	connInfo := func(name, body string) string {
		p := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}

	cinder := func(name, endpoint, want string) errorCase {
		return errorCase{name: name, env: with(member, "BRICK_API_TIMEOUT=2s"), args: []string{"local-attach", vol, "--cinder-endpoint", endpoint}, want: want, code: 1}
	}
	ironic := func(name, endpoint, want string) errorCase {
		return errorCase{name: name, env: with(member, "BRICK_API_TIMEOUT=2s"), args: []string{"ironic", "connector", "list", "--ironic-endpoint", endpoint}, want: want, code: 1}
	}
	cases := []errorCase{
		{name: "no credentials at all", env: []string{"BRICK_HOST_ROOT=" + root}, args: []string{"local-attach", vol}, code: 2,
			want: "brick: local-attach " + vol + ": openstack auth configuration: no OpenStack credentials: set OS_CLOUD (a clouds.yaml entry), " +
				"or OS_AUTH_URL with OS_USERNAME, OS_PASSWORD and OS_PROJECT_NAME (an openrc file), or use --os-auth-type noauth with --cinder-endpoint when Cinder runs without Keystone"},
		{name: "wrong password (401)", env: with(member, "OS_PASSWORD=not-the-password"), args: []string{"local-attach", vol}, code: 1,
			want: `brick: local-attach ` + vol + `: authenticate at ` + k.AuthURL + `: wrong password, or no user "` + k.Member.Name +
				`" in domain id "default" (check --os-username or --os-user-id, --os-password and --os-user-domain-name)`},
		{name: "unknown project", env: with(member, "OS_PROJECT_NAME=no-such-project"), args: []string{"local-attach", vol}, code: 1,
			want: `brick: local-attach ` + vol + `: authenticate at ` + k.AuthURL + `: user "` + k.Member.Name + `" in domain id "default" may not use project "no-such-project" in domain id "default": ` +
				`it does not exist there or the user has no role on it (check --os-project-name or --os-project-id and --os-project-domain-name)`},
		{name: "unknown domain", env: with(member, "OS_USER_DOMAIN_NAME=no-such-domain", "OS_PROJECT_DOMAIN_NAME=no-such-domain"), args: []string{"local-attach", vol}, code: 1},
		{name: "no Cinder endpoint in the region", env: with(member, "OS_REGION_NAME=RegionThree"), args: []string{"local-attach", vol}, code: 1,
			want: `brick: local-attach ` + vol + `: the service catalog has no Cinder endpoint (type block-storage, block-store, volume, volumev2, volumev3) for interface "public" in region "RegionThree"; ` +
				`it has: RegionGuest public, RegionOne internal, RegionOne public, RegionTwo public (set --os-region-name, --os-interface or --cinder-endpoint)`},
		{name: "no Ironic endpoint for the interface", env: with(member, "OS_INTERFACE=admin"), args: []string{"ironic", "connector", "list"}, code: 1},
		{name: "Keystone port closed", env: with(member, "OS_AUTH_URL=http://"+closed+"/v3"), args: []string{"local-attach", vol}, code: 1,
			want: "brick: local-attach " + vol + ": authenticate at http://" + closed + "/v3: cannot reach http://" + closed + "/v3/auth/tokens: connection refused; " +
				"check --os-auth-url (OS_AUTH_URL, or auth_url in clouds.yaml) and that Keystone runs there"},
		cinder("Cinder port closed", "http://"+closed+"/v3", "brick: local-attach "+vol+": cinder version discovery: cannot reach http://"+closed+"/: connection refused; "+
			"check --cinder-endpoint, or the catalog's block-storage endpoint for --os-region-name and --os-interface, and that Cinder runs there"),
		ironic("Ironic port closed", "http://"+closed, ""),
		cinder("Cinder TLS certificate not trusted", tlsSrv+"/v3", ""),
		ironic("Ironic TLS certificate not trusted", tlsSrv, ""),
		cinder("Cinder behind a proxy's HTML 500 page", html500+"/v3", "brick: local-attach "+vol+": cinder version discovery: an HTML page: 500 Internal Server Error (HTTP 500); "+
			"Cinder (or a proxy in front of it) failed: try again later; if it persists, Cinder's log says why"),
		ironic("Ironic behind a proxy's HTML 500 page", html500, ""),
		cinder("Cinder answers with a non-JSON body", nonJSON+"/v3", "brick: local-attach "+vol+": cinder version discovery: the answer is not Cinder's JSON; "+
			"check --cinder-endpoint, or the catalog's block-storage endpoint for --os-region-name and --os-interface"),
		ironic("Ironic answers with a non-JSON body", nonJSON, ""),
		cinder("Cinder hangs (--api-timeout 2s)", hung+"/v3", "brick: local-attach "+vol+": cinder version discovery: no answer from "+hung+"/ within 2s (the time limit of one request, --api-timeout); "+
			"check --cinder-endpoint, or the catalog's block-storage endpoint for --os-region-name and --os-interface, and that Cinder runs there"),
		ironic("Ironic hangs (--api-timeout 2s)", hung, ""),
		{name: "expired or revoked --os-token", env: []string{"OS_AUTH_URL=" + k.AuthURL, "OS_TOKEN=gAAAAAexpired", "OS_PROJECT_ID=" + k.ProjectID, "BRICK_HOST_ROOT=" + root},
			args: []string{"local-attach", vol}, code: 1,
			want: "brick: local-attach " + vol + ": authenticate at " + k.AuthURL + ": the token was refused: it expired or was revoked (get a new one, e.g. with 'openstack token issue', and pass it as --os-token or OS_TOKEN)"},
		{name: "--connection-info file missing", env: []string{"BRICK_HOST_ROOT=" + root}, args: []string{"connect", "--connection-info", "/nonexistent/conn.json"}},
		{name: "--connection-info file empty", env: []string{"BRICK_HOST_ROOT=" + root}, args: []string{"connect", "--connection-info", connInfo("empty.json", "")}},
		{name: "--connection-info file truncated", env: []string{"BRICK_HOST_ROOT=" + root}, args: []string{"connect", "--connection-info", connInfo("cut.json", `{"driver_volume_type": "iscsi", "data": {"target_portal": "10.0.0.1:3260", "targ`)}},
		{name: "--connection-info holds a JSON array", env: []string{"BRICK_HOST_ROOT=" + root}, args: []string{"connect", "--connection-info", connInfo("array.json", `[{"driver_volume_type": "iscsi"}]`)}},
	}
	var table strings.Builder
	table.WriteString("| case | exit | brick's line |\n|---|---|---|\n")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r := runBrickBin(t, ctx, tc.env, tc.args...)
			line := strings.TrimSuffix(r.stderr, "\n")
			fmt.Fprintf(&table, "| %s | %d | `%s` |\n", tc.name, r.code, strings.ReplaceAll(line, "|", `\|`))
			t.Logf("took %s", time.Since(start).Round(time.Millisecond))
			require.NotEqual(t, 0, r.code)
			if tc.code != 0 {
				require.Equal(t, tc.code, r.code)
			}
			require.Empty(t, r.stdout)
			require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
			require.True(t, strings.HasPrefix(r.stderr, "brick: "), r.stderr)
			for _, raw := range []string{"<html", "dial tcp", `{"error`, "Traceback", k.Member.Password, "not-the-password", "gAAAAAexpired"} {
				require.NotContains(t, r.stderr, raw)
			}
			if tc.want != "" {
				require.Equal(t, tc.want, line)
			}
		})
	}
	t.Logf("error table:\n%s", table.String())
}

// faultServer serves h on a fresh loopback port (TLS with a certificate
// nobody trusts when tls) and returns its base URL.
func faultServer(t *testing.T, tls bool, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv.URL
}

// closedPort is a loopback host:port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}
