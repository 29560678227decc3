package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/internal/cmd/factory"
)

// Each command is built the way gh builds its commands: newCmdX(f, runF)
// makes the cobra command and fills an xOptions; xOptions.validate checks
// everything local (flag combinations, values, files, interfaces) before
// any client is built; xRun does the work, asking f for the host and the
// cloud clients as it needs them, so --help and a usage error build
// nothing. Tests pass a runF to see the parsed options without running.

// options is what every command's options struct provides.
type options interface {
	validate() error
}

// runE is a command's RunE: bind the positional arguments, validate (a
// failure is a usage error, exit status 2), then run, or runF when a test
// gave one.
func runE[O options](o O, bind func(args []string), run, runF func(context.Context, O) error) func(*cobra.Command, []string) error {
	return factory.RunE(o, o.validate, bind, run, runF)
}

// noChecks is validate for options with nothing to check locally.
type noChecks struct{}

func (noChecks) validate() error { return nil }
