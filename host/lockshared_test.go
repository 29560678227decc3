package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host/hosttest"
)

// TestLockShared: shared holders coexist; an exclusive lock waits for all
// of them, and a shared one waits for the exclusive holder.
func TestLockShared(t *testing.T) {
	h, _ := hosttest.New(t, nil)
	ctx := context.Background()
	u1, err := h.Locks.LockShared(ctx, "db")
	require.NoError(t, err)
	u2, err := h.Locks.LockShared(ctx, "db")
	require.NoError(t, err, "two shared holders at once")

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = h.Locks.Lock(short, "db")
	require.Error(t, err, "exclusive while shared is held")

	u1()
	u2()
	ux, err := h.Locks.Lock(ctx, "db")
	require.NoError(t, err)
	short2, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	_, err = h.Locks.LockShared(short2, "db")
	require.Error(t, err, "shared while exclusive is held")
	ux()
}
