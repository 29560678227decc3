package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// FlushBuffers writes a block device's dirty buffers out and drops its
// clean cached ones: the BLKFLSBUF ioctl, what "blockdev --flushbufs" does,
// without starting a process. A path that is not a block device (a file in
// a fixture tree) is fsynced instead. Like the command, it can block while
// the device cannot take writes (a map queueing I/O with no path):
// FlushBuffersContext bounds it.
func (b BlockDevices) FlushBuffers(devPath string) error {
	return FlushFailed(b.blockIoctl(devPath, "flush", "BLKFLSBUF", func(fd int) error {
		return unix.IoctlSetInt(fd, unix.BLKFLSBUF, 0)
	}, (*os.File).Sync))
}

// FlushBuffersContext is FlushBuffers bounded by ctx. The ioctl blocks
// while the device cannot take writes (a map queueing I/O with no path) and
// cannot be interrupted, so this returns when ctx ends and leaves it to
// finish (or fail, once a forced detach makes the map fail its I/O).
func (b BlockDevices) FlushBuffersContext(ctx context.Context, devPath string) error {
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- b.FlushBuffers(devPath) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return FlushFailed(fmt.Errorf("flush %s: timed out after %s: %w", devPath, time.Since(start).Round(time.Millisecond), ctx.Err()))
	}
}

// ErrFlush marks a device or multipath map whose buffers could not be
// written out, or not in time: its data may still be held, so a detach
// stops there unless forced.
var ErrFlush = errors.New("flush failed")

// FlushFailed marks err (nil stays nil) with ErrFlush without changing its
// text, so a caller decides on errors.Is and the message stays the cause's.
func FlushFailed(err error) error {
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return flushError{err}
}

type flushError struct{ error }

func (e flushError) Unwrap() []error { return []error{e.error, ErrFlush} }
