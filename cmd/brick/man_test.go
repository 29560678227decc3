package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// manSection is where brick's pages go: a command for the administrator,
// run as root.
const manSection = "8"

// TestManPages writes one man page per command with cobra's generator and
// checks each names its command and its flags. The generator lives in a
// test so the brick binary does not link it: its Markdown packages'
// initialisers cost every brick start about 2 ms. make man and
// packaging/deb.sh run this test with BRICK_MAN_DIR set (and
// SOURCE_DATE_EPOCH, which cobra honours, for reproducible dates).
func TestManPages(t *testing.T) {
	dir := os.Getenv("BRICK_MAN_DIR")
	if dir == "" {
		dir = t.TempDir()
		t.Setenv("SOURCE_DATE_EPOCH", "1764720000")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	root := newApp(io.Discard, io.Discard).rootCommand(nil)
	root.InitDefaultCompletionCmd()
	header := &doc.GenManHeader{Title: "BRICK", Section: manSection, Source: "brick " + readBuildInfo().Version, Manual: "brick manual"}
	require.NoError(t, doc.GenManTree(root, header, dir))

	want := availableCommands(root)
	require.Greater(t, len(want), 20)
	for _, c := range want {
		name := strings.ReplaceAll(c.CommandPath(), " ", "-") + "." + manSection
		page, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, "man page of %q", c.CommandPath())
		require.Contains(t, string(page), `.TH "BRICK" "8"`, name)
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

// availableCommands lists root and every command a user can run under it.
func availableCommands(root *cobra.Command) []*cobra.Command {
	var all []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c != root {
			return
		}
		all = append(all, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return all
}
