package ironic

import (
	"context"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/cmd/factory/factorytest"
)

// parse runs build's flag parsing and validation (factorytest.Parse).
func parse[O any](t *testing.T, build func(*factory.Factory, func(context.Context, O) error) *cobra.Command, args ...string) (O, error) {
	t.Helper()
	return factorytest.Parse(t, factorytest.New(t.TempDir()), build, args...)
}

func TestNewCmdAttachVolume(t *testing.T) {
	av, err := parse(t, newCmdIronicAttachVolume, "--node", "n", "vol", "--boot-index", "1")
	require.NoError(t, err)
	require.Equal(t, "vol", av.Opts.Volume)
	require.Equal(t, 1, av.Opts.BootIndex)
	_, err = parse(t, newCmdIronicAttachVolume, "--node", "n", "vol", "--boot-index", "-1")
	require.ErrorContains(t, err, "--boot-index -1")
	var ue factory.UsageError
	require.ErrorAs(t, err, &ue, "a bad flag value exits 2")
	dv, err := parse(t, newCmdIronicDetachVolume, "--node", "n", "vol")
	require.NoError(t, err)
	require.Equal(t, "n", dv.Opts.Node)
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

func TestNewCmdRegister(t *testing.T) {
	reg, err := parse(t, newCmdIronicRegister, "--node", "node-1", "--prune")
	require.NoError(t, err)
	require.Equal(t, "node-1", reg.Node)
	require.True(t, reg.Prune)
	_, err = parse(t, newCmdIronicRegister, "--node", "../x")
	require.ErrorContains(t, err, "--node \"../x\" is not a node name or UUID")
}
