package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// TestManPageForEveryCommand: gen-man writes one page per command a user
// can run (hidden ones aside), each naming its command and its flags.
func TestManPageForEveryCommand(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SOURCE_DATE_EPOCH", "1764720000")
	_, errOut, code := runBrick(t, nil, "gen-man", "--dir", dir)
	require.Equal(t, 0, code, errOut)

	root := newApp(io.Discard, io.Discard).rootCommand(nil)
	root.InitDefaultCompletionCmd()
	var want []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c != root {
			return
		}
		want = append(want, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	require.Greater(t, len(want), 20)
	for _, c := range want {
		name := strings.ReplaceAll(c.CommandPath(), " ", "-") + "." + manSection
		page, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, "man page of %q", c.CommandPath())
		require.Contains(t, string(page), `.TH "BRICK" "8" "Dec 2025" "brick dev"`, name)
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				require.Contains(t, string(page), `\fB--`+f.Name+`\fP`, "%s documents --%s", name, f.Name)
			}
		})
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, len(want), "no page for a hidden command")
}
