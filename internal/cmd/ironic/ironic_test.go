package ironic

import (
	"context"
	"testing"

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
