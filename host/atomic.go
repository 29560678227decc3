package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// WriteFileAtomic replaces hostPath with data, mode 0600, so that a reader
// or a crash sees the old file or the new one, never a mix: a temp file in
// the same directory (created 0700 if missing), fsync, rename, fsync of the
// directory. Temp files a crash left behind for this name are removed
// first; callers hold the lock that serializes writers of one name.
func (f FS) WriteFileAtomic(hostPath string, data []byte) error {
	target := f.Path(hostPath)
	dir, base := filepath.Dir(target), filepath.Base(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write %s: create directory: %w", hostPath, err)
	}
	pattern := "." + base + ".*.tmp"
	if stale, err := filepath.Glob(filepath.Join(dir, pattern)); err == nil {
		for _, s := range stale {
			_ = os.Remove(s)
		}
	}
	tmp, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return fmt.Errorf("write %s: %w", hostPath, err)
	}
	if err := writeAndSync(tmp, data); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", hostPath, err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", hostPath, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("write %s: sync directory: %w", hostPath, err)
	}
	return nil
}

// writeAndSync writes data to a fresh 0600 file, flushes it and closes it.
func writeAndSync(file *os.File, data []byte) error {
	err := file.Chmod(0o600)
	if err == nil {
		_, err = file.Write(data)
	}
	if err == nil {
		err = file.Sync()
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fsync(fd)
}

// RemoveFileDurable deletes hostPath (missing is success) and makes the
// removal durable, the counterpart of WriteFileAtomic for records.
func (f FS) RemoveFileDurable(hostPath string) error {
	err := os.Remove(f.Path(hostPath))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove %s: %w", hostPath, err)
	}
	if err := syncDir(filepath.Dir(f.Path(hostPath))); err != nil {
		return fmt.Errorf("remove %s: sync directory: %w", hostPath, err)
	}
	return nil
}
