package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host/hosttest"
)

// TestLockAll: every name is locked once, whatever the order given; one
// name held elsewhere fails the call and leaves none of the others held;
// unlock frees them all.
func TestLockAll(t *testing.T) {
	h, _ := hosttest.New(t, nil)
	ctx := context.Background()
	short := func() context.Context {
		c, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		t.Cleanup(cancel)
		return c
	}

	unlock, err := h.Locks.LockAll(ctx, "b", "a", "b")
	require.NoError(t, err, "a name given twice is locked once")
	for _, n := range []string{"a", "b"} {
		_, err := h.Locks.Lock(short(), n)
		require.Error(t, err, "%s is held", n)
	}
	unlock()
	for _, n := range []string{"a", "b"} {
		u, err := h.Locks.Lock(ctx, n)
		require.NoError(t, err, "%s is free after unlock", n)
		u()
	}

	held, err := h.Locks.Lock(ctx, "c")
	require.NoError(t, err)
	_, err = h.Locks.LockAll(short(), "a", "c", "d")
	require.Error(t, err, "c is held elsewhere")
	for _, n := range []string{"a", "d"} {
		u, err := h.Locks.Lock(short(), n)
		require.NoError(t, err, "%s was released when c could not be had", n)
		u()
	}
	held()

	_, err = h.Locks.LockAll(ctx, "ok", "no/slash")
	require.Error(t, err)
	u, err := h.Locks.Lock(short(), "ok")
	require.NoError(t, err, "a bad name releases the good ones")
	u()

	unlock, err = h.Locks.LockAll(ctx)
	require.NoError(t, err, "no names: nothing to lock")
	unlock()
}
