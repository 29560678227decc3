package host

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Files the user names on the command line (an image, connection info,
// --host-root itself) are on the caller's filesystem and read as the
// caller, not host paths under FS's root: these open them.

// OpenInput opens a file the user named, read-only.
func OpenInput(path string) (*os.File, error) { return os.Open(path) }

// StatInput describes a path the user named, following links.
func StatInput(path string) (fs.FileInfo, error) { return os.Stat(path) }

// LstatInput describes a path the user named, not following a final link.
func LstatInput(path string) (fs.FileInfo, error) { return os.Lstat(path) }

// ReadInput reads a file the user named, refusing one over max bytes.
func ReadInput(path string, max int64) ([]byte, error) {
	f, err := OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	return data, nil
}

// OpenDeviceExclusive opens a block device brick attached (a path under
// the real /) for writing with O_EXCL, which the kernel refuses while
// anything has it mounted or claimed.
func OpenDeviceExclusive(devPath string) (*os.File, error) {
	return os.OpenFile(devPath, os.O_WRONLY|os.O_EXCL, 0)
}
