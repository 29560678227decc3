package ironic

import (
	"context"
	"io"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/cmd/factory"
)

// parse builds one command with a runF that keeps its options, runs it
// on args and returns the options and the error: flag parsing and
// validation, tested apart from what the command does.
func parse[O any](t *testing.T, build func(*factory.Factory, func(context.Context, O) error) *cobra.Command, args ...string) (O, error) {
	t.Helper()
	var got O
	cmd := build(&factory.Factory{Stdout: io.Discard}, func(_ context.Context, o O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	return got, cmd.ExecuteContext(t.Context())
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
