package guest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SlotLockPath is the machine-wide guest slot: test/guest-slot.sh (which
// test/e2e.sh takes for a whole run) and Run (around each boot) share it, so
// two suites or a suite and a benchmark queue instead of sharing 2 cores.
// BRICK_GUEST_SLOT_LOCK overrides it, as in the script.
const SlotLockPath = "/run/lock/brick-testbed-guest.lock"

// EnvSlotLock names the variable overriding SlotLockPath.
const EnvSlotLock = "BRICK_GUEST_SLOT_LOCK"

// slotPoll is how often a waiting Run retries the lock (flock has no
// timeout; polling keeps the caller's context in charge).
const slotPoll = 500 * time.Millisecond

// slot is the process's hold on the lock: boots running side by side in one
// process share one hold, which the last of them releases.
var slot struct {
	mu    sync.Mutex
	users int
	f     *os.File
}

// acquireSlot takes the guest slot for one boot and returns its release. It
// does not wait when an ancestor process holds the slot (test/e2e.sh around
// go test); otherwise it says who holds it and, once it got it, how long it
// waited, on log.
func acquireSlot(ctx context.Context, log io.Writer) (release func(), err error) {
	slot.mu.Lock()
	defer slot.mu.Unlock()
	if slot.users > 0 {
		slot.users++
		return releaseSlot, nil
	}
	path := os.Getenv(EnvSlotLock)
	if path == "" {
		path = SlotLockPath
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("guest slot %s: %w", path, err)
	}
	start := time.Now()
	for said := false; ; said = true {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("guest slot %s: flock: %w", path, err)
		}
		holder := readHolder(f)
		if ancestorHolds(path, holder) {
			f.Close()
			return func() {}, nil
		}
		if !said {
			fmt.Fprintf(log, "guest slot: waiting for %s, held by %s\n", path, holder)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("guest slot %s: waited %v for %s: %w", path, time.Since(start).Round(time.Second), holder, ctx.Err())
		case <-time.After(slotPoll):
		}
	}
	if waited := time.Since(start); waited > slotPoll {
		fmt.Fprintf(log, "guest slot: acquired after %v\n", waited.Round(time.Second))
	}
	wd, _ := os.Getwd()
	line := fmt.Sprintf("pid %d since %s: guest boot of %s (in %s)\n",
		os.Getpid(), time.Now().UTC().Format(time.RFC3339), os.Args[0], wd)
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(line), 0)
	}
	slot.f, slot.users = f, 1
	return releaseSlot, nil
}

func releaseSlot() {
	slot.mu.Lock()
	defer slot.mu.Unlock()
	slot.users--
	if slot.users == 0 && slot.f != nil {
		slot.f.Close() // closing the last descriptor drops the flock
		slot.f = nil
	}
}

func readHolder(f *os.File) string {
	b := make([]byte, 300)
	n, _ := f.ReadAt(b, 0)
	if s := strings.TrimSpace(string(b[:n])); s != "" {
		return s
	}
	return "an unnamed process"
}

// holderPID reads the pid of a holder line "pid N since ...".
func holderPID(holder string) (int, bool) {
	f := strings.Fields(holder)
	if len(f) < 2 || f[0] != "pid" {
		return 0, false
	}
	pid, err := strconv.Atoi(f[1])
	return pid, err == nil && pid > 0
}

// ancestorHolds reports whether the slot is held by an ancestor of this
// process: the one its holder line names (test/guest-slot.sh), or one that
// has the lock file open (a `flock <path> cmd` wrapper writes no line).
func ancestorHolds(path, holder string) bool {
	if pid, ok := holderPID(holder); ok && isAncestor(pid) {
		return true
	}
	for p, hops := os.Getppid(), 0; p > 1 && hops < 64; hops++ {
		if hasOpen(p, path) {
			return true
		}
		next, ok := parentOf(p)
		if !ok {
			return false
		}
		p = next
	}
	return false
}

// hasOpen reports whether process pid has path open.
func hasOpen(pid int, path string) bool {
	want, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && target == want {
			return true
		}
	}
	return false
}

// isAncestor reports whether pid is this process's parent, grandparent, ...
func isAncestor(pid int) bool {
	for p, hops := os.Getppid(), 0; p > 1 && hops < 64; hops++ {
		if p == pid {
			return true
		}
		next, ok := parentOf(p)
		if !ok {
			return false
		}
		p = next
	}
	return false
}

// parentOf reads the parent pid from /proc/PID/stat (the field after the
// parenthesised command name, which may itself contain spaces).
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}
