package guest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// machine is one running qemu, shared by Run (one script) and Session
// (several).
type machine struct {
	// ctx bounds qemu's life (Run: the hard limit; Session: until Close);
	// cancel kills it.
	ctx     context.Context
	cancel  context.CancelFunc
	kernel  Kernel
	console *tailBuffer
	stderr  bytes.Buffer // qemu's stderr; read only after done
	done    chan struct{}
	err     error         // qemu's exit error; read only after done
	elapsed time.Duration // qemu's wall time; read only after done
}

type failFunc func(cause error, format string, a ...any) (*Result, error)

// launch prepares share for opts (a session when session is set), takes
// the guest slot (waiting as long as ctx allows) and starts qemu. A run's
// qemu lives at most hard from then and dies with ctx; a session's lives
// until cancelled. The slot is released when qemu has exited and done is
// closed.
func launch(ctx context.Context, opts Options, share string, session bool, hard time.Duration) (*machine, error) {
	if opts.NICs < 0 || opts.NICs > maxNICs {
		return nil, fmt.Errorf("%d NICs, want 0..%d", opts.NICs, maxNICs)
	}
	qemu, err := exec.LookPath(opts.QEMU)
	if err != nil {
		return nil, fmt.Errorf("find qemu (install qemu-system-x86): %w", err)
	}
	k, err := findKernel("/boot", "/lib/modules", opts.KernelVersion)
	if err != nil {
		return nil, err
	}
	initrd, err := ensureInitramfs(ctx, opts.CacheDir, k, "/bin/busybox")
	if err != nil {
		return nil, err
	}
	k.Image = bootImage(ctx, opts.CacheDir, k)
	// Queue behind other test runs' guests before anything is started.
	release, err := acquireSlot(ctx, os.Stderr)
	if err != nil {
		return nil, err
	}
	base := ctx
	if session {
		base = context.Background()
	}
	life, cancel := context.WithTimeout(base, hard)
	m, err := startQemu(life, qemu, k, initrd, opts, share, session)
	if err != nil {
		cancel()
		release()
		return nil, err
	}
	m.ctx, m.cancel = life, cancel
	go func() {
		<-m.done
		release()
	}()
	return m, nil
}

// clearStale removes the results of an earlier run or session in a reused
// share (a session's exec-N directories too), which must not be mistaken
// for this run's.
func clearStale(share string) error {
	stale := []string{"rc", "rc.tmp", "output", "uptime", "leftovers", "session", "ready", "close"}
	execs, err := filepath.Glob(filepath.Join(share, ctlDir, "exec-*"))
	if err != nil {
		return fmt.Errorf("clear stale results: %w", err)
	}
	for _, f := range append(stale, execs...) {
		if err := os.RemoveAll(filepath.Join(share, ctlDir, filepath.Base(f))); err != nil {
			return fmt.Errorf("clear stale results: %w", err)
		}
	}
	return nil
}

func startQemu(ctx context.Context, qemu string, k Kernel, initrd string, opts Options, share string, session bool) (*machine, error) {
	if err := prepareShare(share, opts, int(math.Ceil(opts.Timeout.Seconds()))); err != nil {
		return nil, err
	}
	if err := clearStale(share); err != nil {
		return nil, err
	}
	if session {
		if err := os.WriteFile(filepath.Join(share, ctlDir, "session"), nil, 0o644); err != nil {
			return nil, fmt.Errorf("mark session: %w", err)
		}
	}
	args, err := qemuArgs(qemuConfig{
		Kernel: k.Image, Initrd: initrd,
		MemoryMB: opts.MemoryMB, CPUs: opts.CPUs, NICs: opts.NICs,
		RootDir: "/", ShareDir: share,
	})
	if err != nil {
		return nil, err
	}
	m := &machine{kernel: k, console: newTailBuffer(consoleTailBytes), done: make(chan struct{})}
	cmd := exec.CommandContext(ctx, qemu, args...)
	if opts.Console != nil {
		cmd.Stdout = io.MultiWriter(m.console, opts.Console)
	} else {
		cmd.Stdout = m.console
	}
	cmd.Stderr = &limitedBuffer{buf: &m.stderr, max: 64 << 10}
	// If the test process dies, qemu must not outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start qemu: %w", err)
	}
	go func() {
		m.err = cmd.Wait()
		m.elapsed = time.Since(start)
		close(m.done)
	}()
	return m, nil
}

// failer returns the error maker for res: the message, qemu's stderr once
// it has exited, and the console's last lines.
func (m *machine) failer(res *Result) failFunc {
	return func(cause error, format string, a ...any) (*Result, error) {
		msg := fmt.Sprintf(format, a...)
		select {
		case <-m.done:
			if s := strings.TrimSpace(m.stderr.String()); s != "" {
				msg += "\nqemu stderr: " + s
			}
		default:
		}
		return res, fmt.Errorf("guest run (%s, %v): %s: %w\n--- console tail ---\n%s",
			m.kernel.Version, res.Duration.Round(time.Millisecond), msg, cause, lastLines(m.console.Bytes(), errorTailLines))
	}
}
