package host

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// BlankSpan is how much of each end of a device must read zero before
// brick writes a filesystem or a LUKS header on a device blkid finds no
// signature on.
const BlankSpan = 1 << 20

// ErrNotZero marks a device whose first or last BlankSpan holds data.
var ErrNotZero = errors.New("the device is not blank")

// CheckZeroEnds returns nil when the first and last BlankSpan bytes of
// devPath are all zeros, else an error wrapping ErrNotZero that names the
// offset of the first byte found and its end of the device.
func (b BlockDevices) CheckZeroEnds(devPath string) error {
	off, err := b.FirstNonZero(devPath, BlankSpan)
	if err != nil {
		return fmt.Errorf("check %s is blank: %w", devPath, err)
	}
	if off < 0 {
		return nil
	}
	where := "first"
	if off >= BlankSpan {
		where = "last"
	}
	return fmt.Errorf("%w (a non-zero byte at offset %d, in its %s MiB)", ErrNotZero, off, where)
}

// FirstNonZero reads the first and the last span bytes of devPath (a block
// device, or a file such as an NFS volume) and returns the offset of the
// first byte that is not zero, or -1 when both ends are all zeros. Plain
// dm-crypt and raw data carry no signature blkid knows; zeros at both ends
// are what a fresh volume from Cinder holds.
func (b BlockDevices) FirstNonZero(devPath string, span int64) (int64, error) {
	file, err := os.OpenFile(b.fs.Path(devPath), os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", devPath, err)
	}
	defer file.Close()
	size, err := file.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", devPath, err)
	}
	starts := []int64{0}
	if size > span {
		starts = append(starts, max(span, size-span))
	}
	buf := make([]byte, 64<<10)
	for _, start := range starts {
		end := min(start+span, size)
		for off := start; off < end; {
			n, err := file.ReadAt(buf[:min(int64(len(buf)), end-off)], off)
			if i := firstNonZero(buf[:n]); i >= 0 {
				return off + int64(i), nil
			}
			if err != nil && (err != io.EOF || n == 0) {
				return 0, fmt.Errorf("read %s at %d: %w", devPath, off, err)
			}
			off += int64(n)
		}
	}
	return -1, nil
}

func firstNonZero(b []byte) int {
	for i, c := range b {
		if c != 0 {
			return i
		}
	}
	return -1
}
