package host

import (
	"os"

	"golang.org/x/sys/unix"
)

// FlushBuffers writes a block device's dirty buffers out and drops its
// clean cached ones: the BLKFLSBUF ioctl, what "blockdev --flushbufs" does,
// without starting a process. A path that is not a block device (a file in
// a fixture tree) is fsynced instead. Like the command, it can block while
// the device cannot take writes (a map queueing I/O with no path); callers
// bound it.
func (f FS) FlushBuffers(devPath string) error {
	return f.blockIoctl(devPath, "flush", "BLKFLSBUF", func(fd int) error {
		return unix.IoctlSetInt(fd, unix.BLKFLSBUF, 0)
	}, (*os.File).Sync)
}
