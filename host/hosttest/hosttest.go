// Package hosttest gives tests a *host.Host over a fixture tree and a
// scripted Runner, so protocol code is exercised without touching the machine.
package hosttest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/brick-storage/brick/host"
)

// RunFunc answers one command for a scripted Runner.
type RunFunc func(ctx context.Context, cmd host.Command) (host.Result, error)

// Runner records every command and answers with its RunFunc.
type Runner struct {
	mu    sync.Mutex
	calls []host.Command
	fn    RunFunc
}

// NewRunner returns a Runner answering with fn; nil fn answers every
// command with success and no output.
func NewRunner(fn RunFunc) *Runner { return &Runner{fn: fn} }

// Run records cmd and returns fn's answer.
func (r *Runner) Run(ctx context.Context, cmd host.Command) (host.Result, error) {
	r.mu.Lock()
	r.calls = append(r.calls, cmd)
	r.mu.Unlock()
	if r.fn == nil {
		return host.Result{}, nil
	}
	return r.fn(ctx, cmd)
}

// Calls returns the argv of every command run so far, in order.
func (r *Runner) Calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.calls))
	for i, c := range r.calls {
		out[i] = strings.Join(c.Argv(), " ")
	}
	return out
}

// Commands returns the commands run so far, in order.
func (r *Runner) Commands() []host.Command {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]host.Command(nil), r.calls...)
}

// Fail builds the error a real runner returns for a command that exited with code.
func Fail(cmd host.Command, code int, stderr string) error {
	return &host.ExitError{Argv: cmd.Argv(), ExitCode: code, Stderr: stderr, Err: fmt.Errorf("exit status %d", code)}
}

// Arg is cmd's argument i, counted from the end when negative (-1 is the
// last). When cmd has no such argument the test fails showing the whole
// command line and Arg returns "": a fake meeting a changed command line
// fails its test instead of panicking the test binary. Safe to call from
// the code under test's goroutines.
func Arg(t testing.TB, cmd host.Command, i int) string {
	t.Helper()
	a, ok := at(cmd.Args, i)
	if !ok {
		t.Errorf("fake: command has no argument %d: %s", i, strings.Join(cmd.Argv(), " "))
	}
	return a
}

// Word is words[i] (counted from the end when negative), or "" with the
// test failed showing all of words: for the fields of a line a fake splits.
func Word(t testing.TB, words []string, i int) string {
	t.Helper()
	w, ok := at(words, i)
	if !ok {
		t.Errorf("fake: no word %d in %q", i, words)
	}
	return w
}

func at(words []string, i int) (string, bool) {
	if i < 0 {
		i += len(words)
	}
	if i < 0 || i >= len(words) {
		return "", false
	}
	return words[i], true
}

// New returns a Host rooted at a fresh t.TempDir() that runs commands with r
// and logs to the test log.
func New(t testing.TB, r host.Runner) (*host.Host, string) {
	t.Helper()
	root := t.TempDir()
	return NewAt(t, root, r), root
}

// NewAt returns a Host rooted at root.
func NewAt(t testing.TB, root string, r host.Runner) *host.Host {
	t.Helper()
	if r == nil {
		r = NewRunner(nil)
	}
	red := host.NewRedactor()
	logger := slog.New(host.NewRedactingHandler(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}), red))
	return withViews(&host.Host{FS: host.NewFS(root), Runner: r, Log: logger, Redactor: red})
}

// NewQuiet returns a Host rooted at root that logs nothing and runs no
// command, for fuzz targets (which may not log to their *testing.F) and
// benchmarks (where per-call logging would be what is measured).
func NewQuiet(root string) *host.Host {
	return withViews(&host.Host{FS: host.NewFS(root), Runner: NewRunner(nil), Log: slog.New(slog.DiscardHandler), Redactor: host.NewRedactor()})
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// WriteFile creates hostPath under root with content, making parent
// directories. It replaces the file at once (a write beside it, then a
// rename), as sysfs changes a value: a test's goroutine changing a size
// while the code under test reads it never shows an empty file. A path
// that is a symlink is written through.
func WriteFile(t testing.TB, root, hostPath, content string) {
	t.Helper()
	p := filepath.Join(root, hostPath)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".*")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tmp.WriteString(content)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		t.Fatal(err)
	}
}

// Symlink creates hostPath under root pointing at target (written as given,
// so use relative targets as sysfs and udev do).
func Symlink(t testing.TB, root, hostPath, target string) {
	t.Helper()
	p := filepath.Join(root, hostPath)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// Mkdir creates hostPath under root.
func Mkdir(t testing.TB, root, hostPath string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, hostPath), 0o755); err != nil {
		t.Fatal(err)
	}
}

// withViews fills h's views from its FS.
func withViews(h *host.Host) *host.Host {
	h.Locks, h.Block, h.Sys = host.NewLocks(h.FS), host.NewBlockDevices(h.FS), host.NewSystem(h.FS)
	return h
}

// ChangeAfterRead makes hostPath under root read before for its first
// reader and after for every later one: a kernel attribute (a size) that
// changes once the code under test has recorded the old value, with no
// wall-clock race. The first read opens a FIFO; the value is swapped for
// a regular file before that read gets its bytes.
func ChangeAfterRead(t testing.TB, root, hostPath, before, after string) {
	t.Helper()
	p := filepath.Join(root, hostPath)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- serveOnce(p, before, after) }()
	t.Cleanup(func() {
		// Release the writer when nothing read the value.
		if r, err := os.OpenFile(p, os.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
			_ = r.Close()
		}
		if err := <-errc; err != nil {
			t.Errorf("ChangeAfterRead %s: %v", hostPath, err)
		}
	})
}

// serveOnce waits for p's first reader, puts after in p's place, then
// hands that reader before.
func serveOnce(p, before, after string) error {
	w, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer w.Close()
	tmp := p + ".after"
	if err := os.WriteFile(tmp, []byte(after), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		return err
	}
	_, _ = w.WriteString(before) // a reader released by Cleanup is gone
	return nil
}

// CPUTime is the user and system CPU time this process used so far. A
// speed bound on it, not on wall time, catches a slow algorithm without
// failing on a busy machine (other processes do not add to it).
func CPUTime(t testing.TB) time.Duration {
	t.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
