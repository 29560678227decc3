package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLightTree keeps get-connector's and version's start-up small (issue
// #27): a run of one builds only that command, without completions.
func TestLightTree(t *testing.T) {
	for _, name := range []string{"get-connector", "version"} {
		t.Run(name, func(t *testing.T) {
			root := newApp(io.Discard, io.Discard).rootCommand([]string{name, "-f", "json"})
			var names []string
			for _, c := range root.Commands() {
				names = append(names, c.Name())
			}
			require.Equal(t, []string{name}, names)
			require.True(t, root.CompletionOptions.DisableDefaultCmd)
			_, ok := root.Commands()[0].GetFlagCompletionFunc("format")
			require.False(t, ok, "completion functions registered")
		})
	}
	full := newApp(io.Discard, io.Discard).rootCommand([]string{"list"})
	require.Greater(t, len(full.Commands()), 10)
	c, _, err := full.Find([]string{"get-connector"})
	require.NoError(t, err)
	_, ok := c.GetFlagCompletionFunc("format")
	require.True(t, ok, "the full tree completes -f")
}
