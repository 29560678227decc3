package host

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// SetReadOnly marks a block device read-only in the kernel (the BLKROSET
// ioctl, what "blockdev --setro" does, without starting a process), so a
// volume Cinder exported read-only is not written by mistake. A path that is
// not a block device (a file in a fixture tree) is left alone.
func (b BlockDevices) SetReadOnly(devPath string) error {
	return b.blockIoctl(devPath, "set read-only", "BLKROSET", func(fd int) error {
		return unix.IoctlSetPointerInt(fd, unix.BLKROSET, 1)
	}, func(*os.File) error { return nil })
}

// blockIoctl opens devPath read-only and runs ioctl on it when it is a
// block device, else notBlock (fixture trees hold plain files).
func (b BlockDevices) blockIoctl(devPath, what, op string, ioctl func(fd int) error, notBlock func(*os.File) error) error {
	file, err := os.OpenFile(b.fs.Path(devPath), os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, devPath, err)
	}
	if st.Mode()&os.ModeDevice == 0 || st.Mode()&os.ModeCharDevice != 0 {
		return notBlock(file)
	}
	if err := ioctl(int(file.Fd())); err != nil {
		return fmt.Errorf("%s %s: %s: %w", what, devPath, op, err)
	}
	return nil
}
