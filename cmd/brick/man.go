package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// manSection is where brick's pages go: a command for the administrator,
// run as root.
const manSection = "8"

// manCommand writes one man page per command (cobra's doc generator) for
// `make man` and the Debian package. Hidden: it is a build step, not a
// user's command. SOURCE_DATE_EPOCH, when set, dates the pages (the
// Makefile passes the last commit's time, so builds are reproducible).
func (a *app) manCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:    "gen-man --dir DIR",
		Short:  "Write brick's man pages (section 8) into DIR",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("man pages: %w", err)
			}
			header := &doc.GenManHeader{
				Title:   "BRICK",
				Section: manSection,
				Source:  "brick " + readBuildInfo().Version,
				Manual:  "brick manual",
			}
			if err := doc.GenManTree(cmd.Root(), header, dir); err != nil {
				return fmt.Errorf("man pages in %s: %w", dir, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "directory for the pages (created when missing)")
	_ = cmd.MarkFlagRequired("dir")
	return cmd
}
