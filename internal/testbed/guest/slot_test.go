package guest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
		var log strings.Builder
		ctx, cancel := context.WithTimeout(context.Background(), 3*slotPoll)
		defer cancel()
		_, err := acquireSlot(ctx, &log)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Contains(t, err.Error(), "test/e2e.sh (in /elsewhere)")
		require.Contains(t, log.String(), "guest slot: waiting for "+path+", held by pid 1 since")
	})
	t.Run("held by an ancestor: no wait", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "slot.lock")
		t.Setenv(EnvSlotLock, path)
		holdSlot(t, path, fmt.Sprintf("pid %d since now: go test's parent", os.Getppid()))
		var log strings.Builder
		start := time.Now()
		release, err := acquireSlot(context.Background(), &log)
		require.NoError(t, err)
		release()
		require.Less(t, time.Since(start), slotPoll)
		require.Empty(t, log.String())
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
