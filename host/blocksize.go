package host

import (
	"fmt"
	"strconv"

	"github.com/brick-storage/brick/ident"
)

// Size returns the size in bytes of block device name ("sdb", "dm-3",
// "nvme0n1", "loop0") as the kernel reports it now
// (/sys/block/<name>/size, in 512-byte sectors).
func (b BlockDevices) Size(name string) (int64, error) {
	if !ident.DiskName(name) && !ident.DMName(name) {
		return 0, fmt.Errorf("size of %q: not a block device name", name)
	}
	v, err := b.fs.ReadString("/sys/block/" + name + "/size")
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", name, err)
	}
	n, ok := SectorsToBytes(v)
	if !ok {
		return 0, fmt.Errorf("size of %s: %s is not a sector count", name, strconv.Quote(ident.Clip(v, 64)))
	}
	return n, nil
}

// SectorsToBytes reads a sysfs size attribute (a count of 512-byte
// sectors) as bytes; false when it is no plausible count.
func SectorsToBytes(v string) (int64, bool) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > 1<<54 {
		return 0, false
	}
	return n * 512, true
}
