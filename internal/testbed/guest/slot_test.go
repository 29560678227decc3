package guest

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHolderPID(t *testing.T) {
	for _, tt := range []struct {
		in   string
		pid  int
		want bool
	}{
		{"pid 42 since 2026-12-03T15:00:00Z: test/e2e.sh -short (in /x)", 42, true},
		{"pid 0 since now", 0, false},
		{"pid x", 0, false},
		{"an unnamed process", 0, false},
		{"", 0, false},
	} {
		pid, ok := holderPID(tt.in)
		require.Equal(t, tt.want, ok, tt.in)
		require.Equal(t, tt.pid, pid, tt.in)
	}
}

func TestIsAncestor(t *testing.T) {
	require.True(t, isAncestor(os.Getppid()))
	require.False(t, isAncestor(os.Getpid()), "the process itself is no ancestor")
	require.False(t, isAncestor(1), "init is never taken for the holder")
}

// holdSlot takes the lock file on a separate descriptor, as another process
// would, and writes holder as its holder line.
func holdSlot(t *testing.T, path, holder string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	_, err = f.WriteString(holder + "\n")
	require.NoError(t, err)
}

// testPoll is how often the tests' waiters retry the slot.
const testPoll = 20 * time.Millisecond

// acquireGivesUp waits for the slot for 3 polls, which must not be enough;
// it returns the error's text and what the waiter logged.
func acquireGivesUp(t *testing.T) (msg, log string) {
	t.Helper()
	var b strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 3*testPoll)
	defer cancel()
	_, err := acquireSlotEvery(ctx, &b, testPoll)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	return err.Error(), b.String()
}

func TestAcquireSlot(t *testing.T) {
	t.Run("free: taken, shared by boots of one process, released", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "slot.lock")
		t.Setenv(EnvSlotLock, path)
		var log strings.Builder
		r1, err := acquireSlot(context.Background(), &log)
		require.NoError(t, err)
		r2, err := acquireSlot(context.Background(), &log)
		require.NoError(t, err, "a second boot of the same process shares the hold")
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Contains(t, string(b), fmt.Sprintf("pid %d since ", os.Getpid()))
		r1()
		require.NotNil(t, slot.f, "still held by the second boot")
		r2()
		require.Nil(t, slot.f)
		require.Empty(t, log.String(), "no waiting, no message")
		holdSlot(t, path, "pid 1 since now: check") // free again: a new descriptor gets it
	})
	t.Run("held by another process: waits, names the holder, honours the context", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "slot.lock")
		t.Setenv(EnvSlotLock, path)
		holdSlot(t, path, "pid 1 since 2026-12-03T15:00:00Z: test/e2e.sh (in /elsewhere)")
		msg, log := acquireGivesUp(t)
		require.Contains(t, msg, "test/e2e.sh (in /elsewhere)")
		require.Contains(t, log, "guest slot: waiting for "+path+", held by pid 1 since")
	})
	t.Run("held by an ancestor: no wait", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "slot.lock")
		t.Setenv(EnvSlotLock, path)
		holdSlot(t, path, fmt.Sprintf("pid %d since now: go test's parent", os.Getppid()))
		var log strings.Builder
		release, err := acquireSlot(context.Background(), &log)
		require.NoError(t, err)
		release()
		require.Empty(t, log.String(), "any wait says so first")
	})
}

func TestHasOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "slot.lock")
	require.False(t, hasOpen(os.Getpid(), path), "missing file")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.True(t, hasOpen(os.Getpid(), path))
	link := filepath.Join(dir, "link.lock")
	require.NoError(t, os.Symlink(path, link))
	require.True(t, hasOpen(os.Getpid(), link), "the path is compared after resolving links")
	require.NoError(t, f.Close())
	require.False(t, hasOpen(os.Getpid(), path))
	require.False(t, ancestorHolds(path, "an unnamed process"))
}

func TestNonEmptyLines(t *testing.T) {
	require.Nil(t, nonEmptyLines(nil))
	require.Nil(t, nonEmptyLines([]byte("\n  \n")))
	require.Equal(t, []string{"iscsi session session1", "dm map dm-0 mpatha"},
		nonEmptyLines([]byte("iscsi session session1\n\ndm map dm-0 mpatha\n")))
}

// ticketName is a queue ticket of pid with the given age.
func ticketName(t *testing.T, age time.Duration, pid int) string {
	t.Helper()
	start, ok := procStart(pid)
	require.True(t, ok)
	return fmt.Sprintf("%020d-%d-%s", time.Now().Add(-age).UnixMicro(), pid, start)
}

func TestSlotQueue(t *testing.T) {
	t.Run("an older live ticket goes first, even with the lock free", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "slot.lock")
		t.Setenv(EnvSlotLock, path)
		queue := path + ".queue"
		require.NoError(t, os.MkdirAll(queue, 0o755))
		older := filepath.Join(queue, ticketName(t, time.Minute, os.Getppid()))
		require.NoError(t, os.WriteFile(older, []byte("pid 1 waiting since then: an earlier run\n"), 0o644))
		_, log := acquireGivesUp(t)
		require.Contains(t, log, "; 1 waiting before this run, first pid 1 waiting since then: an earlier run")
		entries, err := os.ReadDir(queue)
		require.NoError(t, err)
		require.Len(t, entries, 1, "the waiter that gave up left its ticket behind")

		require.NoError(t, os.Remove(older))
		release, err := acquireSlot(context.Background(), io.Discard)
		require.NoError(t, err, "its turn once the earlier ticket is gone")
		release()
	})
	t.Run("tickets of ended processes and strays are removed", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "slot.lock")
		t.Setenv(EnvSlotLock, path)
		queue := path + ".queue"
		require.NoError(t, os.MkdirAll(queue, 0o755))
		reused := ticketName(t, time.Hour, os.Getppid())
		reused = reused[:strings.LastIndexByte(reused, '-')] + "-1" // the pid now names another process
		for _, n := range []string{
			fmt.Sprintf("%020d-%d-1", time.Now().Add(-time.Hour).UnixMicro(), unusedPID(t)),
			reused,
			"00000000000000000001-stray",
		} {
			require.NoError(t, os.WriteFile(filepath.Join(queue, n), nil, 0o644))
		}
		var log strings.Builder
		release, err := acquireSlot(context.Background(), &log)
		require.NoError(t, err)
		release()
		require.Empty(t, log.String())
		entries, err := os.ReadDir(queue)
		require.NoError(t, err)
		require.Empty(t, entries)
	})
}

// unusedPID is a pid no process has (pids stay below pid_max).
func unusedPID(t *testing.T) int {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	require.NoError(t, err)
	max, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return max
}

func TestProcStart(t *testing.T) {
	a, ok := procStart(os.Getpid())
	require.True(t, ok)
	b, ok := procStart(os.Getpid())
	require.True(t, ok)
	require.Equal(t, a, b)
	_, ok = procStart(unusedPID(t))
	require.False(t, ok)
}

// TestSlotFirstComeFirstServed: runs of test/guest-slot.sh and acquireSlot
// get the slot in the order they asked for it. The shell runs are orphans
// (their parent exits at once), so none sees this process, which has the
// lock file open while it waits, as an ancestor holding the slot.
func TestSlotFirstComeFirstServed(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "slot.lock")
	t.Setenv(EnvSlotLock, path)
	t.Setenv("BRICK_GUEST_SLOT_POLL", "0.02") // the shell waiters' testPoll
	script, err := filepath.Abs("../../../test/guest-slot.sh")
	require.NoError(t, err)
	order := filepath.Join(dir, "order")
	tickets := func() int {
		entries, _ := os.ReadDir(path + ".queue")
		return len(entries)
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
			require.True(t, time.Now().Before(deadline), "timed out waiting for %s", what)
		}
	}
	// The first holder keeps the slot until the file release exists.
	orphan(t, dir, "holder", `exec 9>>"$BRICK_GUEST_SLOT_LOCK"; flock 9; : >holding; until [[ -e release ]]; do sleep 0.05; done`)
	waitFor("the first holder", func() bool { _, err := os.Stat(filepath.Join(dir, "holding")); return err == nil })
	waiter := fmt.Sprintf(`source %q; guest_slot_acquire "$1"; echo "$1" >>order`, script)
	orphan(t, dir, "shell-1", waiter)
	waitFor("the first shell's ticket", func() bool { return tickets() == 1 })
	done := make(chan error, 1)
	go func() {
		release, err := acquireSlotEvery(context.Background(), io.Discard, testPoll)
		if err == nil {
			f, ferr := os.OpenFile(order, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if ferr == nil {
				_, ferr = f.WriteString("go\n")
				f.Close()
			}
			err = ferr
			release()
		}
		done <- err
	}()
	waitFor("the Go waiter's ticket", func() bool { return tickets() == 2 })
	orphan(t, dir, "shell-2", waiter)
	waitFor("the second shell's ticket", func() bool { return tickets() == 3 })

	require.NoError(t, os.WriteFile(filepath.Join(dir, "release"), nil, 0o644))
	require.NoError(t, <-done)
	waitFor("both shells", func() bool { b, _ := os.ReadFile(order); return strings.Count(string(b), "\n") == 3 })
	b, err := os.ReadFile(order)
	require.NoError(t, err)
	require.Equal(t, "shell-1\ngo\nshell-2\n", string(b))
	require.Zero(t, tickets(), "every waiter removed its ticket")
}

// orphan runs script with bash in dir as an orphan process named name
// (its $1), logging to name.log; a cleanup kills it if it still runs.
func orphan(t *testing.T, dir, name, script string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", `bash -c "$0" bash "$1" >"$1.log" 2>&1 & echo $!`, script, name)
	cmd.Dir = dir
	out, err := cmd.Output()
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	require.NoError(t, err)
	t.Cleanup(func() {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	})
}
