package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// FS reads and writes the host's /etc, /sys, /dev, /proc and /run under a
// root directory: "/" on a real host, the host's / mounted into a container,
// or a fixture tree in a test. Paths given to its methods are absolute host
// paths such as "/sys/class/fc_host"; FS maps them under the root.
type FS struct {
	root string // cleaned; "" means the real "/"
}

// NewFS returns an FS rooted at dir ("" or "/" for the real root).
func NewFS(dir string) FS {
	dir = filepath.Clean(dir)
	if dir == "/" || dir == "." {
		dir = ""
	}
	return FS{root: dir}
}

// Root is the directory host paths are mapped under ("/" for the real root).
func (f FS) Root() string {
	if f.root == "" {
		return "/"
	}
	return f.root
}

// Path maps a host path to the path brick opens.
func (f FS) Path(hostPath string) string {
	if f.root == "" {
		return filepath.Clean(hostPath)
	}
	return filepath.Join(f.root, filepath.Clean("/"+hostPath))
}

// HostPath maps a path under the root back to the host path it stands for.
func (f FS) HostPath(p string) string {
	if f.root == "" {
		return p
	}
	rel, err := filepath.Rel(f.root, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return p
	}
	return filepath.Join("/", rel)
}

// ReadFile reads a whole file.
func (f FS) ReadFile(hostPath string) ([]byte, error) { return os.ReadFile(f.Path(hostPath)) }

// ReadString reads a small file such as a sysfs attribute and trims
// surrounding white space.
func (f FS) ReadString(hostPath string) (string, error) {
	b, err := f.ReadFile(hostPath)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// ReadDir lists a directory, sorted by name.
func (f FS) ReadDir(hostPath string) ([]fs.DirEntry, error) { return os.ReadDir(f.Path(hostPath)) }

// Lstat describes a path without following a final symlink.
func (f FS) Lstat(hostPath string) (fs.FileInfo, error) { return os.Lstat(f.Path(hostPath)) }

// Stat describes a path, following symlinks.
func (f FS) Stat(hostPath string) (fs.FileInfo, error) { return os.Stat(f.Path(hostPath)) }

// Exists reports whether a path exists (following symlinks).
func (f FS) Exists(hostPath string) bool {
	_, err := f.Stat(hostPath)
	return err == nil
}

// Readlink returns a symlink's target as written.
func (f FS) Readlink(hostPath string) (string, error) { return os.Readlink(f.Path(hostPath)) }

// maxSymlinks bounds link chains, as the kernel does.
const maxSymlinks = 40

// EvalSymlinks resolves every symlink in hostPath and returns the host path it
// names. Absolute link targets are resolved under the root, so a fixture tree
// or a container's view of the host never escapes to the real /.
func (f FS) EvalSymlinks(hostPath string) (string, error) {
	if f.root == "" {
		return filepath.EvalSymlinks(hostPath)
	}
	parts := strings.Split(strings.TrimPrefix(filepath.Clean("/"+hostPath), "/"), "/")
	resolved := "/"
	links := 0
	for len(parts) > 0 {
		part := parts[0]
		parts = parts[1:]
		if part == "" || part == "." {
			continue
		}
		if part == ".." {
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, part)
		info, err := os.Lstat(f.Path(next))
		if err != nil {
			return "", err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", &fs.PathError{Op: "evalsymlinks", Path: hostPath, Err: errors.New("too many links")}
		}
		target, err := os.Readlink(f.Path(next))
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		parts = append(strings.Split(target, "/"), parts...)
	}
	return resolved, nil
}

// WriteFile writes data to an existing file, as sysfs control files
// (scan, delete, rescan) require; it never creates one.
func (f FS) WriteFile(hostPath string, data []byte) error {
	file, err := os.OpenFile(f.Path(hostPath), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, werr := file.Write(data)
	cerr := file.Close()
	if werr != nil {
		return fmt.Errorf("write %s: %w", hostPath, werr)
	}
	return cerr
}

// OpenSize opens a file read-only and returns its size. Unlike Stat, the
// open makes an NFS client ask the server (close-to-open consistency), so
// a file grown on the server shows its new size.
func (f FS) OpenSize(hostPath string) (int64, error) {
	file, err := os.Open(f.Path(hostPath))
	if err != nil {
		return 0, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// Glob returns the host paths matching pattern, sorted.
func (f FS) Glob(pattern string) ([]string, error) {
	matches, err := filepath.Glob(f.Path(pattern))
	if err != nil {
		return nil, err
	}
	for i, m := range matches {
		matches[i] = f.HostPath(m)
	}
	return matches, nil
}

// MkdirAll creates a directory and any missing parents with mode perm.
func (f FS) MkdirAll(hostPath string, perm fs.FileMode) error {
	return os.MkdirAll(f.Path(hostPath), perm)
}
