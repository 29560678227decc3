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
// go test); otherwise it queues first come, first served (slotQueue), says
// who holds the slot and, once it got it, how long it waited, on log.
func acquireSlot(ctx context.Context, log io.Writer) (release func(), err error) {
	return acquireSlotEvery(ctx, log, slotPoll)
}

// acquireSlotEvery is acquireSlot retrying every poll (tests wait briefly).
func acquireSlotEvery(ctx context.Context, log io.Writer, poll time.Duration) (release func(), err error) {
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
	wd, _ := os.Getwd()
	what := fmt.Sprintf("guest boot of %s (in %s)", os.Args[0], wd)
	q := slotQueue{dir: path + ".queue"}
	defer q.leave()
	start := time.Now()
	for said := false; ; said = true {
		ahead := q.ahead()
		if len(ahead) == 0 {
			err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			if err == nil {
				break
			}
			if !errors.Is(err, syscall.EWOULDBLOCK) {
				f.Close()
				return nil, fmt.Errorf("guest slot %s: flock: %w", path, err)
			}
		}
		holder := readHolder(f)
		if ancestorHolds(path, holder) {
			f.Close()
			return func() {}, nil
		}
		q.join(fmt.Sprintf("pid %d waiting since %s: %s", os.Getpid(), time.Now().UTC().Format(time.RFC3339), what))
		if !said {
			fmt.Fprintf(log, "guest slot: waiting for %s, held by %s%s\n", path, holder, queueNote(ahead))
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("guest slot %s: waited %v for %s: %w", path, time.Since(start).Round(time.Second), holder, ctx.Err())
		case <-time.After(poll):
		}
	}
	if waited := time.Since(start); waited > slotPoll { // a wait worth a line
		fmt.Fprintf(log, "guest slot: acquired after %v\n", waited.Round(time.Second))
	}
	line := fmt.Sprintf("pid %d since %s: %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339), what)
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(line), 0)
	}
	slot.f, slot.users = f, 1
	return releaseSlot, nil
}

// queueNote says who waits before this process.
func queueNote(ahead []string) string {
	if len(ahead) == 0 {
		return ""
	}
	return fmt.Sprintf("; %d waiting before this run, first %s", len(ahead), ahead[0])
}

// slotQueue makes the slot first come, first served (flock alone is not:
// with three waiters some waited half an hour while later ones went
// first). A waiter puts a ticket into dir, the directory beside the lock,
// named "<µs since the epoch, 20 digits>-<pid>-<pid's start time>" and
// holding its line; only the waiter whose ticket is the oldest of a live
// process tries the lock. Tickets of ended processes are removed by whoever
// sees them. test/guest-slot.sh queues in the same directory.
type slotQueue struct {
	dir    string
	ticket string // this process's ticket file, once joined
	failed bool   // no ticket could be made: wait unqueued, as before
}

// join takes a ticket unless this process has one.
func (q *slotQueue) join(line string) {
	if q.ticket != "" || q.failed {
		return
	}
	start, ok := procStart(os.Getpid())
	if ok && os.MkdirAll(q.dir, 0o777) == nil {
		_ = os.Chmod(q.dir, 0o777|os.ModeSticky) // shared by every user's runs
		name := fmt.Sprintf("%020d-%d-%s", time.Now().UnixMicro(), os.Getpid(), start)
		f, err := os.OpenFile(filepath.Join(q.dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, err = f.WriteString(line + "\n")
			if cerr := f.Close(); err == nil && cerr == nil {
				q.ticket = f.Name()
				return
			}
			os.Remove(f.Name())
		}
	}
	q.failed = true
}

// leave removes this process's ticket.
func (q *slotQueue) leave() {
	if q.ticket != "" {
		os.Remove(q.ticket)
		q.ticket = ""
	}
}

// ahead lists the lines of the live tickets before this process's (all of
// them before it joined), oldest first, and removes dead ones on the way.
func (q *slotQueue) ahead() []string {
	entries, err := os.ReadDir(q.dir) // sorted by name: oldest first
	if err != nil {
		return nil
	}
	var lines []string
	for _, e := range entries {
		p := filepath.Join(q.dir, e.Name())
		if p == q.ticket {
			break
		}
		if !ticketLive(e.Name()) {
			os.Remove(p)
			continue
		}
		b, _ := os.ReadFile(p)
		lines = append(lines, strings.TrimSpace(string(b)))
	}
	return lines
}

// ticketLive reports whether a ticket's process still runs: its pid exists
// and started when the ticket says (a reused pid is another process).
// Names that are no ticket count as dead.
func ticketLive(name string) bool {
	f := strings.Split(name, "-")
	if len(f) != 3 {
		return false
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil || pid <= 0 {
		return false
	}
	start, ok := procStart(pid)
	return ok && start == f[2]
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

// procStat reads /proc/PID/stat's fields after the parenthesised command
// name (which may itself contain spaces): field 3 (state) is the first.
func procStat(pid int) ([]string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(s[i+1:]), true
}

// parentOf reads the parent pid (field 4).
func parentOf(pid int) (int, bool) {
	f, ok := procStat(pid)
	if !ok || len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}

// procStart reads the process's start time in clock ticks since boot
// (field 22), which tells a reused pid from the process it once was.
func procStart(pid int) (string, bool) {
	f, ok := procStat(pid)
	if !ok || len(f) < 20 {
		return "", false
	}
	return f[19], true
}
