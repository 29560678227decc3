package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/osauth"
	"github.com/brick-storage/brick/progress"
	"github.com/brick-storage/brick/rollback"
)

// newStatus sets up what stderr shows while a command works: the live
// status line on a terminal (not under --debug, whose trace is the record,
// nor with -f json, whose consumers are programs) and, with -v, a line per
// step.
func (a *app) newStatus() *progress.Status {
	live := progress.IsTerminal(a.stderr) && !a.debug && a.out.Format != output.FormatJSON
	if !live && !a.verbose {
		return nil
	}
	return progress.New(a.stderr, progress.Options{Live: live, Steps: a.verbose})
}

// errWriter is where log lines and notes go: through the status line when
// there is one, so neither garbles the other.
func (a *app) errWriter() io.Writer {
	if a.status != nil {
		return a.status
	}
	return a.stderr
}

// track reports the steps of operation op on volume (local-attach VOL...)
// on the status line; the returned function ends it. A trace already on
// ctx (the e2e test hooks) keeps seeing every step.
func (a *app) track(ctx context.Context, op, volume string) (context.Context, func()) {
	if a.status == nil {
		return ctx, func() {}
	}
	a.status.Begin(op, volume)
	a.tracking = true
	parent := ctx
	ctx = rollback.WithTrace(ctx, func(step string) {
		a.status.Step(step)
		rollback.Trace(parent, step)
	})
	return ctx, func() {
		a.tracking = false
		a.status.End()
	}
}

// authenticating puts "authenticating at URL" on the status line while a
// cloud client is built (Keystone's URL, or with noauth the service's), so
// a slow or hanging cloud is never a silent wait. It begins the line when
// no operation tracks one; the returned function ends what it began.
func (a *app) authenticating(service string) func() {
	if a.status == nil {
		return func() {}
	}
	o, err := a.cloud().Options()
	if err != nil {
		return func() {}
	}
	where := o.AuthURL
	if o.AuthType == osauth.AuthNoAuth || o.AuthType == osauth.AuthHTTPBasic || where == "" {
		where = map[string]string{"cinder": o.CinderEndpoint, "ironic": o.IronicEndpoint}[service]
	}
	step := "authenticating"
	if where != "" {
		step += " at " + ident.Clip(where, 120)
	}
	if a.tracking {
		a.status.Step(step)
		return a.status.EndStep
	}
	a.status.Begin(a.op, "")
	a.status.Step(step)
	return a.status.End
}

// lockWaiting tells the user at once that another brick process holds the
// lock this one needs.
func (a *app) lockWaiting(name, holder string) {
	who := describeHolder(holder)
	fmt.Fprintf(a.errWriter(), "brick: waiting for %s (lock %s)\n", who, name)
	a.status.Detail("waiting for " + who)
}

// lockDoing is what this command records with the locks it holds: its
// path and first operand ("brick local-attach data"), never a flag's value
// (flags may come before the subcommand, or carry a secret).
func lockDoing(cmd *cobra.Command, args []string) string {
	doing := cmd.CommandPath()
	if len(args) > 0 {
		doing += " " + ident.Clip(args[0], 80)
	}
	return doing
}

var holderRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^brick pid (\d+) \(\S+ (local-attach|local-detach|cleanup|connect|disconnect|extend)(?: (.*))?\)$`)
})

// describeHolder turns host's "brick pid 42 (brick local-attach data)"
// into "brick pid 42 attaching data".
func describeHolder(holder string) string {
	m := holderRE().FindStringSubmatch(holder)
	if m == nil {
		return holder
	}
	verb := map[string]string{
		"local-attach": "attaching", "local-detach": "detaching", "cleanup": "cleaning up",
		"connect": "connecting", "disconnect": "disconnecting", "extend": "extending",
	}[m[2]]
	return strings.TrimSpace(fmt.Sprintf("brick pid %s %s %s", m[1], verb, m[3]))
}

// statusHandler shows each log record's message as the status line's
// detail (what the step is doing now), and passes on those next enables.
type statusHandler struct {
	next   slog.Handler
	status *progress.Status
}

func (h statusHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h statusHandler) Handle(ctx context.Context, r slog.Record) error {
	h.status.Detail(recordDetail(r))
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h statusHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return statusHandler{next: h.next.WithAttrs(as), status: h.status}
}

func (h statusHandler) WithGroup(name string) slog.Handler {
	return statusHandler{next: h.next.WithGroup(name), status: h.status}
}

// recordDetail is a record's message, or for a command run the program's
// name ("ran iscsiadm").
func recordDetail(r slog.Record) string {
	if r.Message != "run" {
		return r.Message
	}
	detail := "ran a command"
	r.Attrs(func(at slog.Attr) bool {
		if at.Key == "argv" {
			if f := strings.Fields(at.Value.String()); len(f) > 0 {
				detail = "ran " + f[0]
			}
			return false
		}
		return true
	})
	return detail
}

// timeoutError says that --timeout ended the command.
func (a *app) timeoutError(err error) error {
	if a.timeout > 0 && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w (--timeout %s reached)", err, a.timeout)
	}
	return err
}
