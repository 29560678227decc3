// Package rollback is brick's step journal: a use case runs named steps,
// each with the way to take it back, and on failure undoes what it did,
// newest first, under a deadline of its own.
//
//	var j rollback.Journal
//	err := j.Run(ctx,
//		rollback.Step{Name: "reserve", Do: reserve, Undo: unreserve},
//		rollback.Step{Name: "connect", Do: connect, Undo: disconnect},
//	)
//	if err != nil {
//		if uerr := j.Rollback(ctx); uerr != nil { ... }
//	}
package rollback

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// DefaultTimeout bounds a whole rollback. It is sized for the slowest undo
// brick runs, a forced local disconnect (multipath flush, SCSI delete,
// iSCSI logout, each with its own budget) followed by Cinder calls; undos
// that only call APIs finish long before it.
const DefaultTimeout = 5 * time.Minute

// Step is one step of a use case.
type Step struct {
	Name string
	// Do does the step; nil for a step that only marks progress (Begin and
	// the trace still see it).
	Do func(ctx context.Context) error
	// Undo takes the step back; nil when there is nothing to take back.
	// It is pushed before Do runs, so it also runs when Do failed half
	// way: it must treat "never happened" as done.
	Undo func(ctx context.Context) error
	// UndoName names the undo in logs and errors (Name when empty), e.g.
	// "disconnect" for a step "connect".
	UndoName string
}

// StepError is a failed step: its name and its error.
type StepError struct {
	Step string
	Err  error
}

func (e *StepError) Error() string { return e.Step + ": " + e.Err.Error() }
func (e *StepError) Unwrap() error { return e.Err }

// Journal runs steps in order and keeps their undos. The zero value is
// ready to use.
type Journal struct {
	// Begin, when set, runs before each step (a state record naming the
	// step, so a crash inside it is visible later). Its error fails the
	// step.
	Begin func(step string) error
	// Timeout bounds Rollback (DefaultTimeout when zero).
	Timeout time.Duration
	// Log gets a debug line per undo (none when nil).
	Log *slog.Logger

	undo []namedUndo
}

type namedUndo struct {
	name string
	fn   func(ctx context.Context) error
}

// Run runs steps in order and stops at the first failure, returning it as
// a *StepError. It undoes nothing itself: the caller decides whether to
// Rollback.
func (j *Journal) Run(ctx context.Context, steps ...Step) error {
	for _, s := range steps {
		if err := j.run(ctx, s); err != nil {
			return &StepError{Step: s.Name, Err: err}
		}
	}
	return nil
}

func (j *Journal) run(ctx context.Context, s Step) error {
	if j.Begin != nil {
		if err := j.Begin(s.Name); err != nil {
			return err
		}
	}
	Trace(ctx, s.Name)
	if s.Undo != nil {
		name := s.UndoName
		if name == "" {
			name = s.Name
		}
		j.Push(name, s.Undo)
	}
	if s.Do == nil {
		return nil
	}
	return s.Do(ctx)
}

// Push adds an undo outside Run.
func (j *Journal) Push(name string, undo func(ctx context.Context) error) {
	j.undo = append(j.undo, namedUndo{name, undo})
}

// Len is the number of undos waiting.
func (j *Journal) Len() int { return len(j.undo) }

// Forget drops every undo: what was done stays done (a point of no
// return, or a step whose failure proved there is nothing of ours to undo).
func (j *Journal) Forget() { j.undo = nil }

// Rollback runs the undos newest first and forgets them. It runs under its
// own deadline, even when ctx is already cancelled (a user's Ctrl-C must
// not leave half an attach behind), and goes on past failures: the error
// names every undo that failed, the first one first.
func (j *Journal) Rollback(ctx context.Context) error {
	timeout := j.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	undo := j.undo
	j.undo = nil
	var errs []error
	for i := len(undo) - 1; i >= 0; i-- {
		u := undo[i]
		start := time.Now()
		err := u.fn(ctx)
		if j.Log != nil {
			j.Log.Debug("rollback", "step", u.name, "duration", time.Since(start).Round(time.Millisecond), "ok", err == nil)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", u.name, err))
		}
	}
	return Join(errs...)
}

// Join joins errors on one line, "a; b"; nil when there are none. The
// result unwraps to each of them.
func Join(errs ...error) error {
	var msgs []string
	var kept []error
	for _, e := range errs {
		if e != nil {
			msgs = append(msgs, e.Error())
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return &joined{msg: strings.Join(msgs, "; "), errs: kept}
}

type joined struct {
	msg  string
	errs []error
}

func (j *joined) Error() string   { return j.msg }
func (j *joined) Unwrap() []error { return j.errs }

type traceKey struct{}

// WithTrace returns a context whose journals call fn with each step's name
// after Begin and just before the step runs, like net/http/httptrace.
// Tests use it to stop a use case at a chosen step.
func WithTrace(ctx context.Context, fn func(step string)) context.Context {
	return context.WithValue(ctx, traceKey{}, fn)
}

// Trace tells ctx's trace function about a point that is not a step of
// its own (a step's inside).
func Trace(ctx context.Context, name string) {
	if fn, ok := ctx.Value(traceKey{}).(func(string)); ok && fn != nil {
		fn(name)
	}
}
