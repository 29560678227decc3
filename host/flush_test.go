package host_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
)

// TestFlushBuffersContext: a flush that cannot finish (opening a FIFO
// nobody writes to blocks, as BLKFLSBUF does on a map with no path) returns
// when ctx ends; a plain file is fsynced.
func TestFlushBuffersContext(t *testing.T) {
	h, root := hosttest.New(t, nil)
	hosttest.WriteFile(t, root, "/dev/sdb", "")
	require.NoError(t, h.Block.FlushBuffersContext(context.Background(), "/dev/sdb"))

	fifo := filepath.Join(root, "/dev/dm-0")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	t.Cleanup(func() { // lets the blocked open return
		if fd, err := unix.Open(fifo, unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			unix.Close(fd)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := h.Block.FlushBuffersContext(ctx, "/dev/dm-0")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 20*time.Second, "the limit, not the hang")
}

func TestFlushFailedKeepsTextAndCause(t *testing.T) {
	cause := fmt.Errorf("flush /dev/sdx: BLKFLSBUF: %w", unix.EIO)
	err := host.FlushFailed(cause)
	require.ErrorIs(t, err, host.ErrFlush)
	require.ErrorIs(t, err, unix.EIO)
	require.Equal(t, cause.Error(), err.Error())
	require.NoError(t, host.FlushFailed(nil))
	require.NotErrorIs(t, host.FlushFailed(fs.ErrNotExist), host.ErrFlush, "a device already gone has nothing to flush")
}
