package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/completion"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/internal/settings"
	"github.com/brick-storage/brick/osauth"
	"github.com/brick-storage/brick/progress"
)

// app holds one invocation's state: flags, config, logger and host. Nothing
// lives in package variables, so tests run commands in parallel.
type app struct {
	stdout, stderr io.Writer
	redactor       *host.Redactor
	logger         *slog.Logger

	debug      bool
	hostRoot   string
	configFile string
	out        output.Options
	auth       authFlags
	// clouds builds the Cinder, Ironic and Barbican clients (cloud()).
	clouds *osauth.Clients

	host *host.Host
	// trust judges the config files and --host-root before brick uses
	// them (as root: root's only); tests inject another owner.
	trust osauth.FileTrust
	// euid decides needRoot (tests inject a user's).
	euid int
	// runner, when set, runs commands instead of the real runner: tests
	// drive whole commands against a fixture tree with a scripted one.
	runner host.Runner
	// ready is set once flags and config are applied: an error before that
	// (unknown command, wrong arguments) is a usage error.
	ready bool
	// formatSet: -f came from the environment or the config file.
	formatSet bool
	// helpAll: --help-all was given; help lists every flag.
	helpAll bool
	// op is the command run ("ironic connector list"), for the status line.
	op string
	// tracking: an operation's status line is up (track).
	tracking bool

	verbose bool
	timeout time.Duration
	cancel  context.CancelFunc
	// status is the live status line and -v's step lines; nil when
	// stderr shows neither.
	status *progress.Status
}

func newApp(stdout, stderr io.Writer) *app {
	a := &app{stdout: stdout, stderr: stderr, redactor: host.NewRedactor(), trust: osauth.ProcessTrust(), euid: os.Geteuid()}
	a.logger = a.newLogger(slog.LevelWarn)
	return a
}

// rootCommand builds the command tree for args. A run of get-connector or
// version (named first) gets a tree without the other commands: building
// them would cost get-connector's light path, and neither command's help
// or errors mention its siblings.
func (a *app) rootCommand(args []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "brick",
		Short: "Attach OpenStack Cinder volumes to this host, without Nova",
		Long: `brick attaches OpenStack Cinder volumes to the host it runs on — a workstation,
a standalone Ironic bare-metal node, a Docker or Magnum host — and detaches
them again without losing data or leaving sessions, devices or maps behind.

Start with 'brick get-connector': it prints what Cinder needs to know about
this host and needs no cloud credentials.

Configuration, highest precedence first: command-line flags, BRICK_*
environment variables (BRICK_HOST_ROOT for --host-root, BRICK_ENFORCE_MULTIPATH
for --enforce-multipath, ...), then the YAML file --config (default
` + settings.DefaultFile + `) whose keys are flag names. Flag names may be written
with underscores too (--enforce_multipath), as python-brick-cinderclient-ext
users type them.`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: a.setup,
	}
	root.SetOut(a.stdout)
	root.SetUsageFunc(func(c *cobra.Command) error { return usage(c, a.helpAll) })
	root.SetErr(a.stderr)
	pf := root.PersistentFlags()
	pf.BoolVar(&a.debug, "debug", false, "log every step and every command run to stderr (secrets masked)")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "print a line on stderr as each step starts (--debug: every command run too)")
	pf.DurationVar(&a.timeout, "timeout", 0, "give up after this long (e.g. 5m); an attach that runs out is undone (default: no limit)")
	pf.StringVar(&a.hostRoot, "host-root", "/", "read the host's /etc, /sys, /dev, /proc and /run under this directory (a container with the host's / mounted there, or a test fixture tree)")
	pf.StringVar(&a.configFile, "config", settings.DefaultFile, "YAML configuration file; keys are flag names")

	for _, c := range recordCommands(a, args) {
		a.addRecordOutputFlags(c.Flags())
		root.AddCommand(c)
	}
	if lightCommand(args) {
		// Completion runs as "brick __complete ...", never through this
		// tree: it needs neither completion functions nor the command.
		root.CompletionOptions.DisableDefaultCmd = true
	} else {
		// --version is a flag of the root alone ("brick get-connector
		// --version" is an unknown flag), so only this tree reads the
		// build information for it.
		root.Version = readBuildInfo().Version
		for _, c := range extraCommands(a) {
			root.AddCommand(c)
		}
		root.AddCommand(helpTopics()...)
		root.SetHelpCommand(newHelpCommand(root))
		root.InitDefaultCompletionCmd()
		strictGroups(root)
		completion.Register(root, a.completionSources())
	}
	root.SetFlagErrorFunc(flagError)
	// Accept --enforce_multipath for --enforce-multipath everywhere.
	root.SetGlobalNormalizationFunc(settings.NormalizeFlagName)
	return root
}

// lightCommand reports whether args run get-connector or version.
func lightCommand(args []string) bool {
	return len(args) > 0 && (args[0] == "get-connector" || args[0] == "version")
}

// recordCommands are version and get-connector, or only the one args run:
// neither mentions the other, and each costs a flag set to build.
func recordCommands(a *app, args []string) []*cobra.Command {
	switch {
	case !lightCommand(args):
		return []*cobra.Command{newCmdVersion(a), newCmdGetConnector(a)}
	case args[0] == "version":
		return []*cobra.Command{newCmdVersion(a)}
	default:
		return []*cobra.Command{newCmdGetConnector(a)}
	}
}

// setup applies config-file and environment values to flags the user did
// not set, then builds the logger and the host.
func (a *app) setup(cmd *cobra.Command, args []string) error {
	if cmd.Name() == cobra.ShellCompRequestCmd || cmd.Name() == cobra.ShellCompNoDescRequestCmd {
		return nil // the completed command's flags are not parsed yet: completionSetup
	}
	cfg, err := a.loadSettings(cmd)
	if err != nil {
		return err
	}
	if err := a.applySettings(cmd, cfg); err != nil {
		return err
	}
	if err := checkCommandLine(a, cmd); err != nil {
		return err
	}
	if a.timeout > 0 {
		ctx, cancel := context.WithTimeout(cmd.Context(), a.timeout)
		cmd.SetContext(ctx)
		a.cancel = cancel
	}
	a.op = strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	a.status = a.newStatus()
	a.out.Hints = a.errWriter()
	switch {
	case a.debug:
		a.logger = a.newLogger(slog.LevelDebug)
	case a.verbose:
		a.logger = a.newLogger(slog.LevelInfo)
	case a.status != nil:
		a.logger = a.newLogger(slog.LevelWarn)
	}
	if _, err := host.StatInput(a.hostRoot); errors.Is(err, fs.ErrNotExist) {
		return usageError{Err: fmt.Errorf("--host-root %s: no such directory", a.hostRoot)}
	}
	if err := a.trust.CheckDir(a.hostRoot); err != nil {
		return fmt.Errorf("--host-root: %w", err)
	}
	a.host = host.New(a.hostRoot, a.logger, a.redactor)
	a.host.Locks.Waiting = a.lockWaiting
	a.host.Locks.Doing = lockDoing(cmd, args)
	if a.runner != nil {
		a.host.Runner = a.runner
	}
	a.ready = true
	return nil
}

// checkCommandLine checks what the flags' types do not: the output
// options, required and exclusive flags, the cloud flags' values. Cobra
// checks the flags after setup; checking them here first makes their
// failures usage errors (exit status 2).
func checkCommandLine(a *app, cmd *cobra.Command) error {
	a.out.TermWidth = progress.Width(a.stdout)
	if a.out.TermWidth == 0 && a.out.FitWidth {
		a.out.TermWidth, _ = strconv.Atoi(os.Getenv("COLUMNS"))
	}
	if err := a.out.Validate(); err != nil {
		if env, ok := os.LookupEnv(settings.EnvName("format")); ok && env == a.out.Format && !cmd.Flags().Changed("format") {
			err = fmt.Errorf("%s: %w", settings.EnvName("format"), err)
		}
		return usageError{Err: err}
	}
	if err := cmd.ValidateRequiredFlags(); err != nil {
		return usageError{Err: err}
	}
	if err := cmd.ValidateFlagGroups(); err != nil {
		return usageError{Err: err}
	}
	return checkCloudFlags(cmd)
}

// newLogger writes masked lines to stderr (stdout stays clean for JSON):
// plain "brick: warning: ..." lines normally, slog's text format with
// timestamps under --debug.
func (a *app) newLogger(level slog.Level) *slog.Logger {
	w := a.errWriter()
	var h slog.Handler = newPlainHandler(w, level)
	if level <= slog.LevelDebug {
		h = slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})
	}
	if a.status != nil {
		h = statusHandler{next: h, status: a.status}
	}
	return slog.New(host.NewRedactingHandler(h, a.redactor))
}

// addOutputFlags adds openstackclient's output options to a command that
// prints something.
func (a *app) addOutputFlags(f *pflag.FlagSet) {
	o := &a.out
	f.StringVarP(&o.Format, "format", "f", output.FormatTable, "output format: "+strings.Join(output.Formats, ", "))
	f.StringArrayVarP(&o.Columns, "column", "c", nil, "print only this column (repeatable)")
	f.StringArrayVar(&o.SortColumns, "sort-column", nil, "sort a list by this column (repeatable)")
	f.BoolVar(&o.SortDescending, "sort-descending", false, "sort in descending order")
	f.BoolVar(&o.Noindent, "noindent", false, "json: print on one line")
	f.Var(factory.NewChoice(&o.Quote, output.QuoteNonnumeric, output.QuoteModes...), "quote", "csv: which fields to quote (cliff's default: all but numbers and booleans)")
	f.IntVar(&o.MaxWidth, "max-width", 0, "table: fit in this many columns (default: the terminal's width)")
	f.BoolVar(&o.FitWidth, "fit-width", false, "table: fit the terminal's width even when stdout is not a terminal (width from $COLUMNS)")
	// openstackclient users may have cliff's variables set for all its
	// commands; BRICK_* and the flags win.
	settings.WithEnv(f.Lookup("max-width"), "CLIFF_MAX_TERM_WIDTH")
	settings.WithEnv(f.Lookup("fit-width"), "CLIFF_FIT_WIDTH")
}

// addRecordOutputFlags is addOutputFlags for a command that prints one
// record: sorting means nothing there, so its flags are accepted unlisted.
func (a *app) addRecordOutputFlags(f *pflag.FlagSet) {
	a.addOutputFlags(f)
	for _, n := range []string{"sort-column", "sort-descending"} {
		_ = f.MarkHidden(n)
	}
}

// addHiddenOutputFlags accepts the output flags on a command that prints
// nothing, unlisted, so scripts passing -f json to every command still run.
func (a *app) addHiddenOutputFlags(f *pflag.FlagSet) {
	var o pflag.FlagSet
	a.addOutputFlags(&o)
	o.VisitAll(func(fl *pflag.Flag) {
		fl.Hidden = true
		f.AddFlag(fl)
	})
}

// formatGiven reports whether -f was given on the command line, in the
// environment (BRICK_FORMAT) or in the config file.
func (a *app) formatGiven(cmd *cobra.Command) bool {
	return cmd.Flags().Changed("format") || a.formatSet
}
