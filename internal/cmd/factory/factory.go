// Package factory is what brick's command packages share, as gh's
// cmdutil.Factory is: the clients, writers and flags a command asks for
// lazily (so --help and a usage error build nothing), the usage error
// that exits 2, and the RunE every options struct runs through.
package factory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/progress"
)

// Factory hands a command what it needs. The functions are evaluated when
// the command runs: flags, settings and the logger are applied by then.
type Factory struct {
	// Stdout is where results go.
	Stdout io.Writer
	// ErrWriter is where messages go: stderr, or the status line when up.
	ErrWriter func() io.Writer
	// Redactor masks secrets in everything printed or logged.
	Redactor *host.Redactor
	// Logger is the invocation's logger (after --debug and -v).
	Logger func() *slog.Logger
	// Output is the output format the flags and settings chose.
	Output func() output.Options
	// Cinder and Ironic build the cloud clients from the auth flags.
	Cinder func(ctx context.Context) (*cinderapi.Client, error)
	Ironic func(ctx context.Context) (*gophercloud.ServiceClient, error)
	// AddOutputFlags and AddAuthFlags give a command -f/-c/... and the
	// --os-* flags; AddRecordOutputFlags those of a command printing one
	// record (no sorting), AddHiddenOutputFlags accepts them unlisted on
	// a command printing nothing.
	AddOutputFlags       func(*pflag.FlagSet)
	AddRecordOutputFlags func(*pflag.FlagSet)
	AddHiddenOutputFlags func(*pflag.FlagSet)
	AddAuthFlags         func(*pflag.FlagSet)
	// FormatGiven: -f came from the command line, BRICK_FORMAT or brick.yaml.
	FormatGiven func(*cobra.Command) bool

	// Host is the machine (under --host-root), built once flags are applied.
	Host func() *host.Host
	// NeedRoot refuses, when not root, a command that changes the kernel's
	// state or reads brick's records.
	NeedRoot func(what string) error
	// Track puts operation op on volume on the status line; the returned
	// function ends it. TestHooks arms the e2e binary's testing aids.
	Track     func(ctx context.Context, op, volume string) (context.Context, func())
	TestHooks func(ctx context.Context) context.Context
	// Status is the live status line, nil when stderr shows none (its
	// methods accept nil).
	Status func() *progress.Status
	// Crypt is the key access of encrypted volumes for Cinder client c.
	Crypt func(ctx context.Context, c attach.Cinder, fixedKeyFile string) (*attach.Crypt, error)
	// IronicTargets is the Ironic target registry when an Ironic endpoint
	// or cloud is configured, nil otherwise.
	IronicTargets func(ctx context.Context) (attach.TargetRegistry, error)
	// Version is brick's version, as brick version prints it.
	Version func() string
}

// UsageError marks a mistake in the command line (exit status 2).
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef is a usage error naming the flag and what it takes.
func Usagef(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// RunE is a command's RunE: bind the positional arguments, validate (a
// failure is a usage error, exit status 2), then run, or runF when a test
// gave one.
func RunE[O any](o O, validate func() error, bind func(args []string), run, runF func(context.Context, O) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if bind != nil {
			bind(args)
		}
		if err := validate(); err != nil {
			var ue UsageError
			if errors.As(err, &ue) {
				return err
			}
			return UsageError{err}
		}
		if runF != nil {
			return runF(cmd.Context(), o)
		}
		return run(cmd.Context(), o)
	}
}

// NoChecks is validate for options with nothing to check locally.
func NoChecks() error { return nil }

// IsUsageError reports a mistake in the command line or the settings,
// which no retry fixes.
func IsUsageError(err error) bool {
	var ue UsageError
	return errors.As(err, &ue)
}

// HideFlags leaves flags out of every help; they are still accepted, so
// one set of flags fits every command.
func HideFlags(fs *pflag.FlagSet, names ...string) {
	for _, n := range names {
		_ = fs.MarkHidden(n)
	}
}

// suggestionsHeader is how cobra introduces its "did you mean" list.
const suggestionsHeader = "\n\nDid you mean this?\n"

// PrintError prints an error on one line, except that cobra's suggestions
// for a mistyped command keep a line each, as cobra lays them out.
func PrintError(w io.Writer, msg string) {
	first, rest, ok := strings.Cut(msg, suggestionsHeader)
	fmt.Fprintf(w, "brick: %s\n", output.OneLine(first))
	if !ok {
		return
	}
	fmt.Fprintf(w, "%s", strings.TrimPrefix(suggestionsHeader, "\n"))
	for _, s := range strings.Split(strings.TrimSpace(rest), "\n") {
		if s = strings.TrimSpace(s); s != "" {
			fmt.Fprintf(w, "\t%s\n", output.OneLine(s))
		}
	}
}
