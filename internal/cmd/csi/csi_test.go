package csi

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/cmd/factory/factorytest"
)

func TestNewCmd(t *testing.T) {
	f := factorytest.New(t.TempDir())
	o, err := factorytest.Parse(t, f, NewCmd, "--mode", "node", "--endpoint", "unix:///run/csi.sock", "--max-volumes", "4", "--multipath")
	require.NoError(t, err)
	require.Equal(t, "node", o.Config.Mode)
	require.Equal(t, int64(4), o.Config.MaxVolumes)
	require.True(t, o.Attacher.Volume.Opts.Multipath)
	for args, want := range map[string]string{
		"--mode nosuch":      `--mode "nosuch": use controller, node or all`,
		"--max-volumes -1":   "--max-volumes -1: 0 (no limit) or more",
		"--endpoint tcp://x": "",
	} {
		_, err := factorytest.Parse(t, f, NewCmd, strings.Fields(args)...)
		require.Error(t, err, args)
		require.ErrorContains(t, err, want, args)
	}
}
