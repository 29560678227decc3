package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/cinderapi/cindertest"
)

// TestFixedKeyFileChecked: a key file others may read, or one that is not
// hex, is a usage error naming the flag, and the key is not echoed.
func TestFixedKeyFileChecked(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	root := fixtureHost(t)
	fake := cindertest.New(t)
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
