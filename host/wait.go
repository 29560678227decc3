package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// Backoff is the gap between checks of a bounded wait: it starts at Min and
// doubles up to Max. Zero fields take the defaults below, which react within
// milliseconds when the event arrives early and cost little when it is late.
type Backoff struct {
	Min time.Duration
	Max time.Duration
}

const (
	defaultBackoffMin = 5 * time.Millisecond
	defaultBackoffMax = 250 * time.Millisecond
)

func (b Backoff) withDefaults() Backoff {
	if b.Min <= 0 {
		b.Min = defaultBackoffMin
	}
	if b.Max < b.Min {
		b.Max = defaultBackoffMax
		if b.Max < b.Min {
			b.Max = b.Min
		}
	}
	return b
}

// ErrWaitTimeout is returned (wrapped) when a wait runs out of time.
var ErrWaitTimeout = errors.New("timed out")

// WaitFor calls check until it reports done, returns an error, or ctx ends.
// Between checks it sleeps for a growing gap, cut short by any change in the
// watched directories (inotify): a device node appearing in /dev wakes the
// wait at once, and the bounded poll covers what inotify cannot see (sysfs).
// This is the only place in brick that sleeps on a connect or disconnect path.
//
// On timeout the error wraps ErrWaitTimeout and, when check had failed
// before, the last failure.
func (f FS) WaitFor(ctx context.Context, watchDirs []string, b Backoff, check func() (bool, error)) error {
	b = b.withDefaults()
	w := newDirWatch(f, watchDirs)
	defer w.close()

	gap := b.Min
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for {
		done, err := check()
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		timer.Reset(gap)
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("%w", ErrWaitTimeout)
			}
			return ctx.Err()
		case <-w.events:
			if !timer.Stop() {
				<-timer.C
			}
		case <-timer.C:
		}
		gap = b.next(gap)
	}
}

// next is the gap after gap: doubled, capped at Max.
func (b Backoff) next(gap time.Duration) time.Duration {
	return min(2*gap, b.Max)
}

// dirWatch turns inotify events on a few directories into wake-ups. When
// inotify is unavailable (fixture trees on odd filesystems, exhausted
// watches) it yields no events and the caller's poll does the work.
type dirWatch struct {
	fd     int
	events chan struct{}
	stop   chan struct{}
	done   chan struct{}
}

// newDirWatch watches dirs (host paths under f's root) for changes.
func newDirWatch(f FS, dirs []string) *dirWatch {
	w := &dirWatch{fd: -1, events: make(chan struct{}, 1)}
	if len(dirs) == 0 {
		return w
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return w
	}
	added := 0
	for _, d := range dirs {
		if _, err := unix.InotifyAddWatch(fd, f.Path(d), unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_DELETE|unix.IN_ATTRIB|unix.IN_CLOSE_WRITE); err == nil {
			added++
		}
	}
	if added == 0 {
		unix.Close(fd)
		return w
	}
	w.fd = fd
	w.stop = make(chan struct{})
	w.done = make(chan struct{})
	go w.loop()
	return w
}

func (w *dirWatch) loop() {
	defer close(w.done)
	buf := make([]byte, 4096)
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
	for {
		select {
		case <-w.stop:
			return
		default:
		}
		// A short poll timeout lets close() stop the goroutine promptly
		// without a second wake-up descriptor.
		n, err := unix.Poll(fds, 50)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		if n <= 0 {
			continue
		}
		if _, err := unix.Read(w.fd, buf); err != nil {
			continue
		}
		select {
		case w.events <- struct{}{}:
		default:
		}
	}
}

func (w *dirWatch) close() {
	if w.fd < 0 {
		return
	}
	close(w.stop)
	<-w.done
	unix.Close(w.fd)
}
