package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWaitForWakesOnInotify(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "dev"), 0o755))
	fsys := NewFS(root)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	go func() {
		// Created while WaitFor sleeps its (long) gap: inotify must cut it short.
		timer := time.NewTimer(100 * time.Millisecond)
		<-timer.C
		_ = os.WriteFile(filepath.Join(root, "dev/sdb"), nil, 0o644)
	}()
	start := time.Now()
	err := fsys.WaitFor(ctx, []string{"/dev"}, Backoff{Min: 40 * time.Second, Max: 40 * time.Second}, func() (bool, error) {
		return fsys.Exists("/dev/sdb"), nil
	})
	require.NoError(t, err)
	require.Less(t, time.Since(start), 20*time.Second, "inotify should have woken the wait")
}

func TestWaitForTimeoutAndError(t *testing.T) {
	fsys := NewFS(t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	var calls atomic.Int32
	err := fsys.WaitFor(ctx, nil, Backoff{}, func() (bool, error) {
		calls.Add(1)
		return false, nil
	})
	require.ErrorIs(t, err, ErrWaitTimeout)
	require.Positive(t, calls.Load(), "checked before the deadline")

	// Polls again without inotify: done on the third check.
	calls.Store(0)
	err = fsys.WaitFor(context.Background(), nil, Backoff{}, func() (bool, error) {
		return calls.Add(1) == 3, nil
	})
	require.NoError(t, err)
	require.Equal(t, int32(3), calls.Load())

	boom := errors.New("boom")
	err = fsys.WaitFor(context.Background(), nil, Backoff{}, func() (bool, error) { return false, boom })
	require.ErrorIs(t, err, boom)
}

func TestBackoffGrowsFromSmallGaps(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct {
		name string
		b    Backoff
		want []time.Duration
	}{
		{"defaults", Backoff{}, []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 250 * ms, 250 * ms}},
		{"custom", Backoff{Min: 100 * ms, Max: 300 * ms}, []time.Duration{100 * ms, 200 * ms, 300 * ms, 300 * ms}},
		{"max below min", Backoff{Min: 400 * ms, Max: ms}, []time.Duration{400 * ms, 400 * ms}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b.withDefaults()
			gap := b.Min
			var got []time.Duration
			for range tc.want {
				got = append(got, gap)
				gap = b.next(gap)
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func TestLockSerialises(t *testing.T) {
	fsys := NewFS(t.TempDir())
	ctx := context.Background()
	unlock, err := NewLocks(fsys).Lock(ctx, "iqn.2010-10.org.openstack:volume-1")
	require.NoError(t, err)

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = NewLocks(fsys).Lock(short, "iqn.2010-10.org.openstack:volume-1")
	require.ErrorIs(t, err, ErrWaitTimeout)

	unlock()
	unlock2, err := NewLocks(fsys).Lock(ctx, "iqn.2010-10.org.openstack:volume-1")
	require.NoError(t, err)
	unlock2()

	_, err = NewLocks(fsys).Lock(ctx, "../escape")
	require.Error(t, err)
}
