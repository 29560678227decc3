package multipath_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/multipath"
)

// forceRunner answers multipath -f and dmsetup remove as told: "ok",
// "fail" (map in use) or "remove" (succeeds and the map goes).
func forceRunner(t *testing.T, root *string, flush, dmsetup string) *hosttest.Runner {
	act := func(cmd host.Command, what string) (host.Result, error) {
		switch what {
		case "fail":
			return host.Result{}, hosttest.Fail(cmd, 1, "mpatha: map in use")
		case "remove":
			removeMap(t, *root)
		}
		return host.Result{}, nil
	}
	return hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
		switch cmd.Name {
		case "multipath":
			return act(cmd, flush)
		case "dmsetup":
			return act(cmd, dmsetup)
		}
		return host.Result{}, nil
	})
}

// stuckDevice turns a fixture device into a FIFO nobody writes to: opening
// it blocks, as BLKFLSBUF does on a map that queues I/O with no path left,
// so the flush runs into its deadline. Cleanup opens the writing end, which
// lets the blocked flush finish.
func stuckDevice(t *testing.T, root, dev string) {
	t.Helper()
	p := filepath.Join(root, dev)
	require.NoError(t, os.Remove(p))
	require.NoError(t, unix.Mkfifo(p, 0o600))
	t.Cleanup(func() {
		if fd, err := unix.Open(p, unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			unix.Close(fd)
		}
	})
}

func TestRemoveForced(t *testing.T) {
	tests := []struct {
		name     string
		flush    string
		wantHeld bool
	}{
		{name: "removed at once", flush: "remove"},
		{name: "held open: one attempt, no retries", flush: "fail", wantHeld: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var root string
			r := forceRunner(t, &root, tt.flush, "ok")
			h, root0 := hosttest.New(t, r)
			root = root0
			fixtureMap(t, root, "0")
			stuckDevice(t, root, "/dev/dm-0")
			// A flush timeout far above the test's run time: the forced
			// path must not wait it out.
			m := multipath.New(h, multipath.Options{FlushTimeout: time.Hour, CommandTimeout: 50 * time.Millisecond})
			mp, err := m.Maps().MapOf("sdb")
			require.NoError(t, err)
			held, err := m.Remove(context.Background(), mp, true)
			require.NoError(t, err, "forced: a failed buffer flush and a held map only warn")
			require.Equal(t, tt.wantHeld, held)
			require.Equal(t, []string{"multipathd disablequeueing map mpatha", "multipath -f mpatha"}, r.Calls())
		})
	}
}

func TestRemoveUnforced(t *testing.T) {
	t.Run("a failed buffer flush stops the detach before the map is touched", func(t *testing.T) {
		r := hosttest.NewRunner(nil)
		h, root := hosttest.New(t, r)
		fixtureMap(t, root, "0")
		stuckDevice(t, root, "/dev/dm-0")
		m := multipath.New(h, multipath.Options{CommandTimeout: 50 * time.Millisecond})
		mp, err := m.Maps().MapOf("sdb")
		require.NoError(t, err)
		_, err = m.Remove(context.Background(), mp, false)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorContains(t, err, "flush /dev/dm-0")
		require.Empty(t, r.Calls())
	})
	t.Run("the map is flushed", func(t *testing.T) {
		var root string
		r := forceRunner(t, &root, "remove", "fail")
		h, root0 := hosttest.New(t, r)
		root = root0
		fixtureMap(t, root, "0")
		m := multipath.New(h, multipath.Options{})
		mp, err := m.Maps().MapOf("sdb")
		require.NoError(t, err)
		held, err := m.Remove(context.Background(), mp, false)
		require.NoError(t, err)
		require.False(t, held)
		require.Equal(t, []string{"multipath -f mpatha"}, r.Calls())
	})
}

func TestRemoveWhenClosed(t *testing.T) {
	tests := []struct {
		name         string
		dmsetup      string
		pathsLeft    bool
		wantDeferred bool
		wantCalls    []string
	}{
		{name: "marked for removal at the last close", dmsetup: "ok", wantDeferred: true, wantCalls: []string{"dmsetup remove --deferred mpatha"}},
		{name: "the holder closed in between", dmsetup: "remove", wantCalls: []string{"dmsetup remove --deferred mpatha"}},
		{name: "refused: warned, the detach goes on", dmsetup: "fail", wantCalls: []string{"dmsetup remove --deferred mpatha"}},
		{name: "multipathd never dropped the paths: marked anyway after the wait", dmsetup: "ok", pathsLeft: true, wantDeferred: true, wantCalls: []string{"dmsetup remove --deferred mpatha"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var root string
			r := forceRunner(t, &root, "fail", tt.dmsetup)
			h, root0 := hosttest.New(t, r)
			root = root0
			fixtureMap(t, root, "0")
			m := multipath.New(h, multipath.Options{MapTimeout: 50 * time.Millisecond, Backoff: host.Backoff{Min: time.Millisecond, Max: 5 * time.Millisecond}})
			mp, err := m.Maps().MapOf("sdb")
			require.NoError(t, err)
			if !tt.pathsLeft {
				// What multipathd's reload does once the paths are deleted.
				for _, d := range []string{"sdb", "sdc"} {
					require.NoError(t, os.Remove(filepath.Join(root, "/sys/devices/virtual/block/dm-0/slaves", d)))
				}
			}
			require.Equal(t, tt.wantDeferred, m.RemoveWhenClosed(context.Background(), mp))
			require.Equal(t, tt.wantCalls, r.Calls())
		})
	}
}
