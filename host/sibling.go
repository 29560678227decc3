package host

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// SiblingPath is where brick's companion program name is installed: the
// directory of the running binary (/usr/sbin/brick-csi beside
// /usr/sbin/brick, bin/brick-csi beside bin/brick). Never PATH: root's
// PATH must not choose which binary continues brick's work.
func SiblingPath(name string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find %s: brick's own path: %w", name, err)
	}
	return filepath.Join(filepath.Dir(self), name), nil
}

// ExecSibling replaces the running process with the companion program
// name (SiblingPath), passing args and the environment on unchanged: it
// is brick going on in a second binary, not a child, so it keeps brick's
// settings and credentials. Whoever can change that program runs as root
// next, so it must pass TrustedProgram first. It returns only when the
// program cannot be started; the error wraps fs.ErrNotExist when it is
// not installed and ErrUntrustedPath when it is not trusted.
func ExecSibling(name string, args []string) error {
	p, err := SiblingPath(name)
	if err != nil {
		return err
	}
	if err := TrustedProgram(p); err != nil {
		return fmt.Errorf("start %s: %w", p, err)
	}
	if err := syscall.Exec(p, append([]string{p}, args...), os.Environ()); err != nil {
		return fmt.Errorf("start %s: %w", p, err)
	}
	return nil
}

// TrustedProgram refuses a program root should not run: after its links,
// it must be a regular file owned by root (or brick's user), writable by
// no one else, in directories only they can change (CheckTrustedPath).
func TrustedProgram(p string) error {
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Stat(resolved, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: resolved, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("%w: %s is not a regular file", ErrUntrustedPath, resolved)
	}
	if err := onlyRootChanges(resolved, st, "reinstall it owned by root, mode 0755"); err != nil {
		return err
	}
	return NewFS("").CheckTrustedPath(filepath.Dir(resolved))
}
