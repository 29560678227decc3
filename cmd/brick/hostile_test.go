package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/cinderapi/cindertest"
	"github.com/brick-storage/brick/host/hosttest"
)

// TestHostileVolumeRefs: volume names from the command line are data, not
// paths, queries or options: each reaches Cinder only as an escaped name
// query (never as a URL path), nothing runs on the host, and the error is
// one line with control characters escaped.
func TestHostileVolumeRefs(t *testing.T) {
	root, fake := cinderHost(t)
	fake.AddVolume("11111111-1111-4111-8111-111111111111", "data")
	refs := []string{"../../attachments", "data/../../x", "data?all_tenants=1", "data&status=in-use", "data#x", "%2e%2e%2fx",
		"$(reboot)", "`id`", "data;reboot", "--force", "data\nline2", "data\x00", strings.Repeat("v", 10000)}
	for _, cmd := range []string{"local-attach", "local-detach", "get-volume-paths", "cleanup"} {
		for _, ref := range refs {
			r := hosttest.NewRunner(nil)
			a := newApp(&strings.Builder{}, &strings.Builder{})
			a.runner = r
			var errb strings.Builder
			a.stderr = &errb
			code := runApp(t.Context(), a, []string{"--host-root", root, "--config", "/dev/null", "--os-auth-type", "noauth", "--cinder-endpoint", fake.Endpoint(), cmd, "--", ref})
			require.NotEqual(t, 0, code, "%s %q", cmd, ref)
			require.Empty(t, r.Calls(), "%s %q: no command runs", cmd, ref)
			require.Equal(t, 1, strings.Count(strings.TrimSuffix(errb.String(), "\n"), "\n")+1, "%s %q: one line: %q", cmd, ref, errb.String())
			require.NotContains(t, errb.String(), "\x00")
			require.NotContains(t, strings.TrimSuffix(errb.String(), "\n"), "\n")
		}
	}
	for _, req := range fake.Requests() {
		require.True(t, strings.HasPrefix(req.Path, "/v3/"+cindertest.Project+"/volumes") || req.Path == "/" || strings.HasPrefix(req.Path, "/v3/"+cindertest.Project+"/attachments"), "request path %q", req.Path)
		require.NotContains(t, req.Path, "..")
		require.NotEqual(t, "POST", req.Method, "nothing was attached or reserved: %v", req)
	}
	st, n := fake.Status("11111111-1111-4111-8111-111111111111")
	require.Equal(t, "available", st)
	require.Zero(t, n)
}
