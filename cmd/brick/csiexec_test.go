//go:build !nocsi

package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/cmd/csi"
)

// execCall is what newCmdCSIExec asked its execF to run.
type execCall struct {
	name string
	args []string
}

// csiExecTree is brick's command tree as make builds it: brick csi is the
// stub that runs brick-csi (here: records what it would run).
func csiExecTree(t *testing.T, a *app, execErr error) (*cobra.Command, *[]execCall) {
	t.Helper()
	root := a.rootCommand(nil)
	real, _, err := root.Find([]string{"csi"})
	require.NoError(t, err)
	root.RemoveCommand(real)
	var calls []execCall
	root.AddCommand(newCmdCSIExec(a, func(name string, args []string) error {
		calls = append(calls, execCall{name, args})
		return execErr
	}))
	return root, &calls
}

// TestCSIExecPassesTheCommandLine: brick csi, its help and its completion
// run brick-csi on the same arguments.
func TestCSIExecPassesTheCommandLine(t *testing.T) {
	tests := []struct {
		args    []string
		helpAll bool
		want    []string
	}{
		{[]string{"csi", "--mode", "node", "--endpoint", "unix:///csi/csi.sock"}, false, []string{"csi", "--mode", "node", "--endpoint", "unix:///csi/csi.sock"}},
		{[]string{"--debug", "csi", "--mode=controller"}, false, []string{"csi", "--debug", "--mode=controller"}},
		{[]string{"csi", "--help"}, false, []string{"csi", "--help"}},
		{[]string{"csi", "--help"}, true, []string{"csi", "--help-all"}},
		{[]string{"help", "csi"}, false, []string{"csi", "--help"}},
		{[]string{"__complete", "csi", "--mo"}, false, []string{"__complete", "csi", "--mo"}},
		{[]string{"__complete", "csi", "--mode", ""}, false, []string{"__complete", "csi", "--mode", ""}},
	}
	for _, tt := range tests {
		a := newApp(io.Discard, io.Discard)
		a.helpAll = tt.helpAll
		root, calls := csiExecTree(t, a, nil)
		root.SetArgs(tt.args)
		root.SetOut(io.Discard)
		require.NoError(t, root.ExecuteContext(t.Context()), tt.args)
		require.Equal(t, []execCall{{csiBinary, tt.want}}, *calls, tt.args)
	}
}

// TestCSIExecMissingBinary: without brick-csi, brick csi says what to
// install; brick help csi says it too.
func TestCSIExecMissingBinary(t *testing.T) {
	missing := fmt.Errorf("start /usr/sbin/brick-csi: %w", fs.ErrNotExist)
	a := newApp(io.Discard, io.Discard)
	root, _ := csiExecTree(t, a, missing)
	root.SetArgs([]string{"csi", "--mode", "node"})
	err := root.ExecuteContext(t.Context())
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorContains(t, err, "the CSI driver is the brick-csi binary; install it beside brick")
	require.Equal(t, exitError, exitStatus(err, a.ready), "not a usage error")

	var stderr bytes.Buffer
	root, _ = csiExecTree(t, a, missing)
	root.SetArgs([]string{"help", "csi"})
	root.SetErr(&stderr)
	root.SetOut(io.Discard)
	require.NoError(t, root.ExecuteContext(t.Context()))
	require.Contains(t, stderr.String(), "brick: csi: start /usr/sbin/brick-csi")
}

// TestCSIExecKnowsCSIKeys: a brick.yaml key for brick csi is known to a
// brick without the driver, so its other commands do not refuse the file.
func TestCSIExecKnowsCSIKeys(t *testing.T) {
	a := newApp(io.Discard, io.Discard)
	root, _ := csiExecTree(t, a, nil)
	known := flagNames(root)
	real := csi.NewCmd(a.factory(), nil)
	require.Equal(t, real.Short, csiShort, "brick csi lists as brick-csi's does")
	real.LocalFlags().VisitAll(func(f *pflag.Flag) {
		require.Contains(t, known, f.Name, "brick csi's flag --%s: add it to csiOwnFlags", f.Name)
	})
	for _, name := range csiOwnFlags() {
		require.NotNil(t, real.Flags().Lookup(name), "csiOwnFlags lists --%s, which brick csi lacks", name)
	}
	require.True(t, slices.IsSorted(csiOwnFlags()))
}
