package host

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ErrDeviceBusy means a device is mounted or held open exclusively.
var ErrDeviceBusy = errors.New("device busy")

// CheckNotInUse opens a block device with O_EXCL, which the kernel refuses
// with EBUSY while the device is mounted, part of a dm/md device, or held
// exclusively by another opener. A device that no longer exists is not in use.
func (b BlockDevices) CheckNotInUse(devPath string) error {
	file, err := os.OpenFile(b.fs.Path(devPath), os.O_RDONLY|unix.O_EXCL|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if errors.Is(err, unix.EBUSY) {
			return fmt.Errorf("%s: %w", devPath, ErrDeviceBusy)
		}
		return fmt.Errorf("check %s in use: %w", devPath, err)
	}
	return file.Close()
}
