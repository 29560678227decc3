package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLocalInputBeforeTheNetwork: every local mistake exits 2 with one
// line naming the flag, before any cloud is asked (the endpoints here do
// not answer: reaching them would exit 1 with "cannot reach").
func TestLocalInputBeforeTheNetwork(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	root := fixtureHost(t)
	base := []string{"--host-root", root, "--config", "/dev/null", "--os-auth-type", "noauth",
		"--cinder-endpoint", "http://127.0.0.1:1/v3", "--ironic-endpoint", "http://127.0.0.1:1"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"local-attach", "v", "--mkfs", "ext4"}, "brick: --mkfs needs --mountpoint\n"},
		{[]string{"local-attach", "v", "--mountpoint", "data"}, "brick: --mountpoint \"data\": must be an absolute path\n"},
		{[]string{"local-attach", "v", "--mountpoint", "/proc/data"}, "brick: --mountpoint \"/proc/data\": under /proc"},
		{[]string{"local-attach", "v", "--nic", "nosuch0"}, "brick: --nic \"nosuch0\": "},
		{[]string{"local-attach", "v", "--mountpoint", "/srv/d", "--mkfs", "ntfsbrick"}, "brick: --mkfs ntfsbrick: mkfs.ntfsbrick not found"},
		{[]string{"local-attach", "v", "--boot-index", "1"}, "brick: --boot-index goes with --ironic-node\n"},
		{[]string{"local-attach", "v", "--os-volume-api-version", "2"}, "brick: --os-volume-api-version \"2\": want 3.N"},
		{[]string{"local-attach", "v", "--max-width", "x"}, "brick: --max-width \"x\": want a whole number\n"},
		{[]string{"ironic", "connector", "create", "--node", "n", "--type", "foo", "--connector-id", "x"}, "brick: --type \"foo\": want one of iqn, "},
	} {
		code, out, errs := runVolumeCmd(t, append(base, tt.args...)...)
		require.Equal(t, exitUsage, code, "%v: %s", tt.args, errs)
		require.Empty(t, out)
		require.True(t, strings.HasPrefix(errs, tt.want), "%v:\n got %q\nwant %q", tt.args, errs, tt.want)
		require.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
	}
}
