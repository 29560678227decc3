package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ErrShell is returned for a command whose program is a shell.
var ErrShell = errors.New("refusing to run a shell: brick runs programs as argv lists")

// IsShell reports whether program names a command interpreter (sh, bash,
// dash, ... by any path).
func IsShell(program string) bool {
	switch filepath.Base(program) {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "csh", "tcsh", "fish", "busybox":
		return true
	}
	return false
}

// DefaultCommandTimeout bounds a command whose caller gave no timeout.
const DefaultCommandTimeout = 30 * time.Second

// Command is one external program run as an argv list; brick never runs a shell.
type Command struct {
	// Name is the program (looked up in PATH) and Args its arguments.
	Name string
	Args []string
	// Stdin, when set, is fed to the program: the way to hand a child a
	// secret without putting it into argv.
	Stdin []byte
	// Timeout bounds this command alone; zero means the runner's default.
	Timeout time.Duration
	// Secrets are masked, with the runner's known secrets, in logs and errors.
	Secrets []string
	// Env adds KEY=VALUE pairs to the child's environment, which is
	// otherwise only ChildEnv's: nothing of brick's own is inherited.
	Env []string
	// OKExitCodes are exit codes the caller treats as success (iscsiadm's 15,
	// "session exists", for instance); Run returns them without an error.
	OKExitCodes []int
}

// Argv is the command line, program first.
func (c Command) Argv() []string { return append([]string{c.Name}, c.Args...) }

// Result is what a finished command produced.
type Result struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
	Duration time.Duration
}

// Runner runs external commands. Protocol packages depend on this
// one-method interface so tests can script the answers.
type Runner interface {
	Run(ctx context.Context, cmd Command) (Result, error)
}

// ExitError reports a command that ran and failed, or could not be started
// or finished. Argv and Stderr are already masked.
type ExitError struct {
	Argv     []string
	ExitCode int // -1 when the program never exited on its own
	Stderr   string
	Err      error
}

func (e *ExitError) Error() string {
	var b strings.Builder
	b.WriteString(strings.Join(e.Argv, " "))
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Stderr != "" {
		b.WriteString(": ")
		b.WriteString(e.Stderr)
	}
	return b.String()
}

func (e *ExitError) Unwrap() error { return e.Err }

// ExitCodeOf returns the exit code inside err, or -1 when err does not come
// from a command that exited.
func ExitCodeOf(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode
	}
	return -1
}

// ExecRunner runs commands with os/exec. The zero value is usable.
type ExecRunner struct {
	Logger         *slog.Logger // nil: no logging
	Redactor       *Redactor    // nil: mask only each Command's Secrets
	DefaultTimeout time.Duration
}

// maxStderrInError keeps errors to a readable size; the tail is what matters.
const maxStderrInError = 2048

// Run starts cmd, waits for it within its timeout and returns its output.
// A non-zero exit (not listed in OKExitCodes) returns an *ExitError.
func (r *ExecRunner) Run(ctx context.Context, cmd Command) (Result, error) {
	timeout := cmd.Timeout
	if timeout <= 0 {
		timeout = r.DefaultTimeout
	}
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	masked := r.Redactor.RedactArgs(cmd.Argv(), cmd.Secrets...)
	if IsShell(cmd.Name) {
		// A second line behind internal/policy's static check: whatever
		// builds the command, brick never hands a string to a shell.
		return Result{ExitCode: -1}, &ExitError{Argv: masked, ExitCode: -1, Err: ErrShell}
	}
	c := exec.CommandContext(ctx, cmd.Name, cmd.Args...)
	c.Path, c.Err = lookPath(cmd.Name)
	c.Env = ChildEnv(cmd.Env...)
	if cmd.Stdin != nil {
		c.Stdin = bytes.NewReader(cmd.Stdin)
	}
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	// A child that forks a daemon keeps the pipes open; do not wait for it
	// forever once the command itself has gone.
	c.WaitDelay = time.Second

	start := time.Now()
	err := c.Run()
	res := Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), ExitCode: c.ProcessState.ExitCode(), Duration: time.Since(start)}
	if c.ProcessState == nil {
		res.ExitCode = -1
	}
	if err != nil && isOK(res.ExitCode, cmd.OKExitCodes) {
		err = nil
	}
	if r.Logger != nil {
		r.Logger.Debug("run", "argv", strings.Join(masked, " "), "rc", res.ExitCode, "took", res.Duration.Round(time.Millisecond),
			"stderr", r.Redactor.Redact(trimTail(string(res.Stderr), 512), cmd.Secrets...))
	}
	if err == nil {
		return res, nil
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = fmt.Errorf("timed out after %s: %w", timeout, context.DeadlineExceeded)
	case errors.Is(ctx.Err(), context.Canceled):
		err = fmt.Errorf("cancelled: %w", context.Canceled)
	}
	return res, &ExitError{
		Argv:     masked,
		ExitCode: res.ExitCode,
		Stderr:   r.Redactor.Redact(trimTail(strings.TrimSpace(string(res.Stderr)), maxStderrInError), cmd.Secrets...),
		Err:      err,
	}
}

func isOK(code int, ok []int) bool {
	for _, c := range ok {
		if c == code {
			return true
		}
	}
	return false
}

func trimTail(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return "..." + s[len(s)-max:]
}
