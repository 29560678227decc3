package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// CreateFile creates an empty regular file (mode 0640) for a bind mount
// of a device; one that exists is left as it is, a symlink is refused.
func (f FS) CreateFile(hostPath string) error {
	file, err := os.OpenFile(f.Path(hostPath), os.O_CREATE|os.O_WRONLY|unix.O_NOFOLLOW, 0o640)
	if err != nil {
		return fmt.Errorf("create file %s: %w", hostPath, err)
	}
	return file.Close()
}

// Usage is a filesystem's capacity: bytes and inodes.
type Usage struct {
	TotalBytes, AvailableBytes, UsedBytes int64
	TotalInodes, FreeInodes, UsedInodes   int64
}

// ErrNoFilesystem: the path does not exist.
var ErrNoFilesystem = errors.New("no such path")

// Statfs reports the capacity of the filesystem holding hostPath.
func (f FS) Statfs(hostPath string) (Usage, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(f.Path(hostPath), &st); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Usage{}, fmt.Errorf("statfs %s: %w", hostPath, ErrNoFilesystem)
		}
		return Usage{}, fmt.Errorf("statfs %s: %w", hostPath, err)
	}
	bs := int64(st.Bsize)
	u := Usage{
		TotalBytes: int64(st.Blocks) * bs, AvailableBytes: int64(st.Bavail) * bs,
		UsedBytes:   int64(st.Blocks-st.Bfree) * bs,
		TotalInodes: int64(st.Files), FreeInodes: int64(st.Ffree), UsedInodes: int64(st.Files - st.Ffree),
	}
	return u, nil
}
