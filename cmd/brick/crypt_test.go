package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/cinderapi/cindertest"
	"github.com/brick-storage/brick/osauth"
)

// TestFixedKeyFileChecked: a key file others may read, or one that is not
// hex, is a usage error naming the flag, and the key is not echoed.
func TestFixedKeyFileChecked(t *testing.T) {
	root, fake := cinderHost(t)
	fake.AddVolume("11111111-1111-4111-8111-111111111111", "data")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "etc/brick"), 0o700))
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(root, "etc/brick", name)
		require.NoError(t, os.WriteFile(p, []byte(content), mode))
		require.NoError(t, os.Chmod(p, mode))
		return "/etc/brick/" + name
	}
	base := []string{"--host-root", root, "--config", "/dev/null", "--os-auth-type", "noauth", "--cinder-endpoint", fake.Endpoint(), "local-attach", "data"}
	for _, tc := range []struct {
		file, want string
	}{
		{write("open", "00112233", 0o644), "brick: --fixed-key-file: fixed key file /etc/brick/open: mode 0644 lets others read it: chmod 600 /etc/brick/open\n"},
		{write("text", "not-a-key-zz", 0o600), "brick: --fixed-key-file: fixed key file /etc/brick/text: want the key as hex digits on one line, as Cinder's [key_manager] fixed_key\n"},
	} {
		code, out, errs := runVolumeCmd(t, append(base, "--fixed-key-file", tc.file)...)
		require.Equal(t, 2, code, errs)
		require.Empty(t, out)
		require.Equal(t, tc.want, errs)
	}
}

// TestFixedKeyFileTrust: as root, a fixed key file another user owns is
// refused like a clouds.yaml would be (that user could swap the key of
// every volume brick formats or opens).
func TestFixedKeyFileTrust(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	me := uint32(os.Geteuid())
	if me != 0 {
		t.Skip("giving the key file to another user needs root")
	}
	root := fixtureHost(t)
	require.NoError(t, os.Chmod(root, 0o755))
	fake := cindertest.New(t)
	fake.AddVolume("11111111-1111-4111-8111-111111111111", "data")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "etc/brick"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(root, "etc/brick/key"), []byte("00112233\n"), 0o600))
	require.NoError(t, os.Chown(filepath.Join(root, "etc/brick/key"), 65534, -1))
	var out, errb strings.Builder
	a := newApp(&out, &errb)
	a.trust = osauth.FileTrust{Enforce: true, Owner: me}
	code := runApp(t.Context(), a, []string{"--host-root", root, "--config", "/dev/null", "--os-auth-type", "noauth",
		"--cinder-endpoint", fake.Endpoint(), "local-attach", "data", "--fixed-key-file", "/etc/brick/key"})
	require.Equal(t, 2, code, errb.String())
	require.Contains(t, errb.String(), "brick: --fixed-key-file: fixed key file /etc/brick/key: untrusted configuration: file /etc/brick/key is owned by uid")
	require.NotContains(t, fake.Ops(), "attachment-create", "refused before anything is exported")
}
