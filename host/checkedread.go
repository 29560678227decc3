package host

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ReadChecked reads a small file through the descriptor that check
// judged, so the file read is the file checked: nothing can swap it in
// between. The open never blocks (a FIFO) and, with noFollow, refuses a
// final symlink. A missing file's error wraps fs.ErrNotExist; a file over
// max bytes is refused.
func (f FS) ReadChecked(hostPath string, noFollow bool, max int64, check func(fs.FileInfo) error) ([]byte, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if noFollow {
		flags |= syscall.O_NOFOLLOW
	}
	file, err := os.OpenFile(f.Path(hostPath), flags, 0)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if err := check(fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(file, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		clear(data)
		return nil, fmt.Errorf("%s is larger than %d bytes", hostPath, max)
	}
	return data, nil
}
