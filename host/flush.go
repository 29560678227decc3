package host

import (
	"fmt"
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
	file, err := os.OpenFile(f.Path(devPath), os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return fmt.Errorf("flush %s: %w", devPath, err)
	}
	if st.Mode()&os.ModeDevice == 0 || st.Mode()&os.ModeCharDevice != 0 {
		return file.Sync()
	}
	if err := unix.IoctlSetInt(int(file.Fd()), unix.BLKFLSBUF, 0); err != nil {
		return fmt.Errorf("flush %s: BLKFLSBUF: %w", devPath, err)
	}
	return nil
}
