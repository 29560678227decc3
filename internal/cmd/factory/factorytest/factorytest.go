// Package factorytest builds brick's commands in the command packages'
// tests: a Factory over a fixture tree, and Parse, which runs a command's
// flag parsing and validation without running it.
package factorytest

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/progress"
)

// New is a Factory over the host tree under root that writes nowhere,
// builds no cloud client and adds no shared flags (cmd/brick's tests
// cover those through the whole command tree).
func New(root string) *factory.Factory {
	h := host.New(root, nil, nil)
	none := func(*pflag.FlagSet) {}
	return &factory.Factory{
		Stdout:               io.Discard,
		ErrWriter:            func() io.Writer { return io.Discard },
		Redactor:             host.NewRedactor(),
		Logger:               func() *slog.Logger { return slog.New(slog.DiscardHandler) },
		Output:               func() output.Options { return output.Options{Format: output.FormatTable} },
		AddOutputFlags:       none,
		AddRecordOutputFlags: none,
		AddHiddenOutputFlags: none,
		AddAuthFlags:         none,
		FormatGiven:          func(*cobra.Command) bool { return false },
		Host:                 func() *host.Host { return h },
		NeedRoot:             func(string) error { return nil },
		Track:                func(ctx context.Context, _, _ string) (context.Context, func()) { return ctx, func() {} },
		TestHooks:            func(ctx context.Context) context.Context { return ctx },
		Status:               func() *progress.Status { return nil },
		Version:              func() string { return "test" },
	}
}

// Parse builds one command with a runF that keeps its options, runs it
// on args and returns the options and the error: flag parsing and
// validation, tested apart from what the command does.
func Parse[O any](t *testing.T, f *factory.Factory, build func(*factory.Factory, func(context.Context, O) error) *cobra.Command, args ...string) (O, error) {
	t.Helper()
	var got O
	cmd := build(f, func(_ context.Context, o O) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	return got, cmd.ExecuteContext(t.Context())
}
