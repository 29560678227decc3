package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrUntrustedPath marks a path root should not act on: one of its
// directories is a symlink, belongs to another user or is writable by
// others, so someone else decides where it leads.
var ErrUntrustedPath = errors.New("untrusted path")

// CheckTrustedPath walks hostPath from / down and refuses it when a
// component that exists is a symlink, is not a directory (but the last),
// is owned by another user than brick's, or is writable by group or
// others without the sticky bit. mount(8) follows links in every
// component: a user who owns /home/alice/vols can point it at /var and
// have root mount over /var/www. Missing components are fine: brick
// creates them, 0755, in directories only it can change.
func (f FS) CheckTrustedPath(hostPath string) error {
	clean := filepath.Clean("/" + hostPath)
	cur := "/"
	for _, part := range strings.Split(strings.TrimPrefix(clean, "/"), "/") {
		if part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		var st unix.Stat_t
		err := unix.Lstat(f.Path(cur), &st)
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("check %s: %w", cur, &fs.PathError{Op: "lstat", Path: cur, Err: err})
		}
		if err := trustedDir(cur, st); err != nil {
			return err
		}
	}
	return nil
}

// trustedDir judges one existing component of a path.
func trustedDir(p string, st unix.Stat_t) error {
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return fmt.Errorf("%w: %s is a symlink: give the real path", ErrUntrustedPath, p)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("%w: %s is not a directory", ErrUntrustedPath, p)
	case st.Mode&unix.S_ISVTX != 0 && (int(st.Uid) == os.Geteuid() || st.Uid == 0):
		return nil // /tmp: others may write, but not redirect what is ours
	}
	return onlyRootChanges(p, st, "use a path whose directories only root can change")
}

// onlyRootChanges refuses p unless it belongs to root (or brick's user)
// and neither group nor others may write it; fix says what to do instead.
func onlyRootChanges(p string, st unix.Stat_t, fix string) error {
	switch {
	case int(st.Uid) != os.Geteuid() && st.Uid != 0:
		return fmt.Errorf("%w: %s is owned by uid %d, who could redirect it: %s", ErrUntrustedPath, p, st.Uid, fix)
	case st.Mode&0o022 != 0:
		return fmt.Errorf("%w: %s has mode %04o, writable by others: %s", ErrUntrustedPath, p, st.Mode&0o7777, fix)
	}
	return nil
}
