package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
)

// parse builds one command with a runF that keeps its options, runs it
// on args and returns the options and the error: flag parsing and
// validation, tested apart from what the command does.
func parse[O any](t *testing.T, build func(*app, func(context.Context, O) error) *cobra.Command, args ...string) (O, error) {
	t.Helper()
	f := newApp(io.Discard, io.Discard)
	f.host = host.New(fixtureHost(t), nil, nil)
	var got O
	cmd := build(f, func(_ context.Context, o O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	return got, cmd.ExecuteContext(t.Context())
}

func TestNewCmdBootVolume(t *testing.T) {
	o, err := parse(t, newCmdBootVolume, "node-1", "--volume", "v", "--deploy", "--wait", "2m")
	require.NoError(t, err)
	require.Equal(t, "node-1", o.Boot.Node)
	require.Equal(t, "v", o.Boot.Volume)
	require.True(t, o.Boot.Deploy)
	require.Equal(t, 2*time.Minute, o.Boot.Wait)
	o, err = parse(t, newCmdBootVolume, "node-1", "--image", "disk.raw", "--size", "4")
	require.NoError(t, err)
	require.Equal(t, 4, o.Image.SizeGiB)
	_, err = parse(t, newCmdBootVolume, "node-1", "--undo", "--deploy")
	require.ErrorContains(t, err, "--undo takes no --initiator or --deploy")
}

func TestNewCmdIronic(t *testing.T) {
	reg, err := parse(t, newCmdIronicRegister, "--node", "node-1", "--prune")
	require.NoError(t, err)
	require.Equal(t, "node-1", reg.Node)
	require.True(t, reg.Prune)
	_, err = parse(t, newCmdIronicRegister, "--node", "../x")
	require.ErrorContains(t, err, "--node \"../x\" is not a node name or UUID")
}

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
