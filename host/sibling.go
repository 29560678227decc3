package host

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
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
// settings and credentials. It returns only when the program cannot be
// started; the error wraps fs.ErrNotExist when it is not installed.
func ExecSibling(name string, args []string) error {
	p, err := SiblingPath(name)
	if err != nil {
		return err
	}
	if err := syscall.Exec(p, append([]string{p}, args...), os.Environ()); err != nil {
		return fmt.Errorf("start %s: %w", p, err)
	}
	return nil
}
