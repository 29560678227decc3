package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/osauth"
)

// TestConfigAndHostRootTrust: as root, a brick.yaml or --host-root another
// user owns or can write is refused with the path and the fix named; a
// brick.yaml holding a password that every user can read draws a warning.
// Root's ownership is simulated by the trusted owner, so any user runs it.
func TestConfigAndHostRootTrust(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	me := uint32(os.Geteuid())
	root := fixtureHost(t)
	require.NoError(t, os.Chmod(root, 0o755))
	cfgDir := t.TempDir()
	plain := filepath.Join(cfgDir, "plain.yaml")
	require.NoError(t, os.WriteFile(plain, []byte("format: json\n"), 0o600))
	open := filepath.Join(cfgDir, "open.yaml")
	require.NoError(t, os.WriteFile(open, []byte("format: json\n"), 0o600))
	require.NoError(t, os.Chmod(open, 0o666))
	secret := filepath.Join(cfgDir, "secret.yaml")
	require.NoError(t, os.WriteFile(secret, []byte("os_password: pw\n"), 0o644))
	require.NoError(t, os.Chmod(secret, 0o644))
	openRoot := t.TempDir()
	require.NoError(t, os.Chmod(openRoot, 0o777))

	for _, tc := range []struct {
		name, config, hostRoot string
		owner                  uint32
		code                   int
		want                   string
	}{
		{"trusted", plain, root, me, 0, ""},
		{"config of another user", plain, root, me + 1, 2, plain + " is owned by uid"},
		{"config writable by others", open, root, me, 2, "chmod go-w " + open},
		{"password readable by others", secret, root, me, 0, secret + " holds a password or token and every local user can read it"},
		{"host root writable by others", "/dev/null", openRoot, me, 2, "--host-root: untrusted configuration: directory " + openRoot},
		{"host root of another user", "/dev/null", root, me + 1, 2, "directory " + root + " is owned by uid"},
	} {
		var out, errb strings.Builder
		a := newApp(&out, &errb)
		a.trust = osauth.FileTrust{Enforce: true, Owner: tc.owner}
		code := runApp(t.Context(), a, []string{"get-connector", "--host-root", tc.hostRoot, "--config", tc.config})
		require.Equal(t, tc.code, code, "%s: %s", tc.name, errb.String())
		if tc.want == "" {
			require.Empty(t, errb.String(), tc.name)
		} else {
			require.Contains(t, errb.String(), tc.want, tc.name)
		}
	}
}
