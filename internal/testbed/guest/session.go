package guest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Session is one guest that runs several scripts in turn, so a group of
// tests pays for one boot. Each Exec runs like Run's script (cwd /brick,
// BRICK_SHARE, BRICK_FIXTURES, the session's Env plus the Exec's); between
// Execs the guest kills every process the script left (daemons included),
// and an Exec that exits 0 but leaves kernel state (Result.Leftovers) fails
// with ErrLeftovers: the next Exec must start from nothing.
//
//	s, err := guest.Start(ctx, guest.Options{NICs: 1})
//	defer s.Close()
//	res, err := s.Exec(ctx, guest.Exec{Script: "...", Files: files})
type Session struct {
	mu      sync.Mutex // one Exec at a time
	m       *machine
	share   string
	tempDir bool
	n       int
	boot    time.Duration
	opts    Options
}

// Exec is one script of a Session.
type Exec struct {
	Script string
	// Files and Env as in Options, for this script only.
	Files map[string]string
	Env   map[string]string
	// Timeout bounds the script (default 5m); a longer run ends the
	// session (the guest may be wedged).
	Timeout time.Duration
}

// sessionLife bounds a session guest that is never closed.
const sessionLife = 2 * time.Hour

// sessionPoll is how often the host looks for an Exec's exit code.
const sessionPoll = 100 * time.Millisecond

// Start boots a session guest and returns once it waits for scripts. ctx
// bounds the boot only; the guest lives until Close. opts.Script,
// opts.Timeout and opts.RequireClean are ignored.
func Start(ctx context.Context, opts Options) (*Session, error) {
	opts = withDefaults(opts)
	s := &Session{share: opts.ShareDir, opts: opts}
	if s.share == "" {
		var err error
		if s.share, err = os.MkdirTemp("", "brick-guest-"); err != nil {
			return nil, fmt.Errorf("guest session: create share: %w", err)
		}
		s.tempDir = true
	}
	m, err := launch(ctx, opts, s.share, true, sessionLife)
	if err != nil {
		s.discard()
		return nil, fmt.Errorf("guest session: %w", err)
	}
	s.m = m
	start := time.Now()
	bootCtx, stop := context.WithTimeout(ctx, opts.BootTimeout)
	defer stop()
	if err := s.waitFile(bootCtx, filepath.Join(s.share, ctlDir, "ready")); err != nil {
		_, err := m.failer(&Result{Duration: time.Since(start)})(ErrNoExitCode, "session did not become ready: %v", err)
		s.discard()
		return nil, err
	}
	s.boot = time.Since(start)
	return s, nil
}

// Boot is how long the session's guest took to become ready.
func (s *Session) Boot() time.Duration { return s.boot }

// Exec runs e in the session's guest and returns its result. Errors are as
// Run's, plus ErrLeftovers for a script that exited 0 but left state.
func (s *Session) Exec(ctx context.Context, e Exec) (*Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		return nil, errors.New("guest session: closed")
	}
	if e.Timeout == 0 {
		e.Timeout = defaultTimeout
	}
	// The guest waits for exec-N's go file, so N moves on only once the
	// script is in place.
	dir := filepath.Join(s.share, ctlDir, "exec-"+strconv.Itoa(s.n+1))
	if err := prepareExec(dir, s.share, e); err != nil {
		return nil, fmt.Errorf("guest session exec %d: %w", s.n+1, err)
	}
	s.n++
	start := time.Now()
	hard := e.Timeout + killGrace + time.Minute
	waitCtx, cancel := context.WithTimeout(ctx, hard)
	defer cancel()
	waitErr := s.waitFile(waitCtx, filepath.Join(dir, "rc"))
	res := &Result{Console: s.m.console.Bytes(), Duration: time.Since(start), KernelVersion: s.m.kernel.Version}
	readReports(dir, res)
	fail := s.m.failer(res)
	if waitErr != nil {
		// The guest may be running the script still: it cannot take another.
		s.discard()
		return fail(ErrNoExitCode, "exec %d: %v", s.n, waitErr)
	}
	rcText, err := os.ReadFile(filepath.Join(dir, "rc"))
	if err != nil {
		return fail(ErrNoExitCode, "exec %d: %v", s.n, err)
	}
	if err := checkExit(res, rcText, e.Timeout, true, fail); err != nil {
		return res, err
	}
	return res, nil
}

// prepareExec writes e into dir (the guest reads it as exec-N) and, last,
// the go file the guest waits for.
func prepareExec(dir, share string, e Exec) error {
	env, err := envScript(e.Env)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := copyFiles(share, e.Files); err != nil {
		return err
	}
	timeout := strconv.Itoa(int(math.Ceil(e.Timeout.Seconds())))
	for name, data := range map[string]string{"script.sh": e.Script, "env.sh": env, "timeout": timeout} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
}

// waitFile waits until path exists, the guest ends, or ctx ends.
func (s *Session) waitFile(ctx context.Context, path string) error {
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		select {
		case <-s.m.done:
			if _, err := os.Stat(path); err == nil {
				return nil
			}
			return fmt.Errorf("guest ended (qemu: %v)", s.m.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(sessionPoll):
		}
	}
}

// Close asks the guest to power off, waits for it (killing qemu after the
// boot timeout) and removes a temporary share.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		return nil
	}
	var err error
	if werr := os.WriteFile(filepath.Join(s.share, ctlDir, "close"), nil, 0o644); werr != nil {
		err = fmt.Errorf("guest session close: %w", werr)
	}
	select {
	case <-s.m.done:
	case <-time.After(s.opts.BootTimeout):
		err = errors.Join(err, errors.New("guest session close: the guest did not power off; qemu killed"))
	}
	s.discard()
	return err
}

// discard kills qemu if it still runs, waits for it and removes a temporary
// share.
func (s *Session) discard() {
	if s.m != nil {
		s.m.cancel()
		<-s.m.done
		s.m = nil
	}
	if s.tempDir {
		os.RemoveAll(s.share)
	}
}
