package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// LineFile is a text file of one entry a line that other programs edit
// too, such as multipath's wwids file: each change is made under the
// whole-file fcntl write lock multipath-tools takes on that file.
type LineFile struct {
	fs     FS
	path   string
	header string
}

// LineFile returns the line file at hostPath; one it creates starts with
// header.
func (f FS) LineFile(hostPath, header string) LineFile {
	return LineFile{fs: f, path: hostPath, header: header}
}

// open opens the file read-write (creating it, and its directory, with
// the header when create is set) and takes the lock, retried until ctx
// ends.
func (l LineFile) open(ctx context.Context, create bool) (*os.File, error) {
	hostPath, header := l.path, l.header
	p := l.fs.Path(hostPath)
	flags := os.O_RDWR | unix.O_CLOEXEC
	if create {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		flags |= os.O_CREATE
	}
	file, err := os.OpenFile(p, flags, 0o644)
	if err != nil {
		return nil, err
	}
	lock := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	err = l.fs.WaitFor(ctx, nil, Backoff{Min: 10 * time.Millisecond, Max: 200 * time.Millisecond}, func() (bool, error) {
		err := unix.FcntlFlock(file.Fd(), unix.F_SETLK, &lock)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("lock %s: %w", hostPath, err)
	}
	if create && header != "" {
		if st, err := file.Stat(); err == nil && st.Size() == 0 {
			if _, err := file.WriteString(header); err != nil {
				file.Close()
				return nil, err
			}
		}
	}
	return file, nil
}

// Append appends line (a newline is added) under the lock, unless the
// file already holds that exact line. A missing file is created, starting
// with the header. It reports whether it wrote.
func (l LineFile) Append(ctx context.Context, line string) (bool, error) {
	hostPath := l.path
	file, err := l.open(ctx, true)
	if err != nil {
		return false, err
	}
	defer file.Close()
	data, err := io.ReadAll(file)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", hostPath, err)
	}
	for _, l := range bytes.Split(data, []byte("\n")) {
		if string(l) == line {
			return false, nil
		}
	}
	buf := []byte(line + "\n")
	if len(data) > 0 && data[len(data)-1] != '\n' {
		buf = append([]byte("\n"), buf...)
	}
	if _, err := file.Write(buf); err != nil {
		_ = file.Truncate(int64(len(data)))
		return false, fmt.Errorf("write %s: %w", hostPath, err)
	}
	return true, nil
}

// CommentOut turns each line equal to line into a comment by overwriting
// its first byte with "#", in place and under the lock: how
// multipath-tools forgets a WWID. A missing file or line is success; it
// reports whether it changed the file.
func (l LineFile) CommentOut(ctx context.Context, line string) (bool, error) {
	hostPath := l.path
	file, err := l.open(ctx, false)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	defer file.Close()
	data, err := io.ReadAll(file)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", hostPath, err)
	}
	changed := false
	off := int64(0)
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		if string(bytes.TrimSuffix(l, []byte("\n"))) == line && len(l) > 0 {
			if _, err := file.WriteAt([]byte("#"), off); err != nil {
				return changed, fmt.Errorf("write %s: %w", hostPath, err)
			}
			changed = true
		}
		off += int64(len(l))
	}
	return changed, nil
}
