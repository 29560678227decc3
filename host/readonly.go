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
func (f FS) SetReadOnly(devPath string) error {
	file, err := os.OpenFile(f.Path(devPath), os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return fmt.Errorf("set %s read-only: %w", devPath, err)
	}
	if st.Mode()&os.ModeDevice == 0 || st.Mode()&os.ModeCharDevice != 0 {
		return nil
	}
	if err := unix.IoctlSetPointerInt(int(file.Fd()), unix.BLKROSET, 1); err != nil {
		return fmt.Errorf("set %s read-only: BLKROSET: %w", devPath, err)
	}
	return nil
}
