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

// LibDir is the top of brick's persistent state (records, NFS mounts).
const LibDir = "/var/lib/brick"

// RunDir is the top of brick's runtime state (locks, short-lived Ceph
// credentials, NFS state). Its parent /run is root's alone, unlike the
// world-writable /run/lock, so no user can plant it first.
const RunDir = "/run/brick"

// ErrUnsafeDir marks a directory of brick's that someone else could have
// planted or could change: not a directory, another owner, or writable by
// group or others.
var ErrUnsafeDir = errors.New("unsafe directory")

// PrivateDir checks brick's directory dir, and every directory between
// LibDir (or RunDir) and dir when dir lies under it: each must be a real
// directory (not a symlink) owned by brick's user and writable by nobody
// else. With create, missing ones are made 0700; without it a missing dir
// is an fs.ErrNotExist error. A safe directory that others may read (made
// 0755 by an older brick) is closed to 0700; an unsafe one is refused,
// naming the fix, since what it holds may be someone else's.
func (f FS) PrivateDir(dir string, create bool) error {
	dir = filepath.Clean(dir)
	chain := dirChain(dir)
	if create {
		if err := os.MkdirAll(f.Path(filepath.Dir(chain[0])), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(chain[0]), err)
		}
	}
	for _, d := range chain {
		if err := checkPrivateDir(f, d, create); err != nil {
			return err
		}
	}
	return nil
}

// dirChain lists the directories from brick's top (LibDir or RunDir) down
// to dir, or dir alone when it lies under neither.
func dirChain(dir string) []string {
	for _, top := range []string{LibDir, RunDir} {
		rel, err := filepath.Rel(top, dir)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		var chain []string
		for d := dir; ; d = filepath.Dir(d) {
			chain = append([]string{d}, chain...)
			if d == top {
				return chain
			}
		}
	}
	return []string{dir}
}

// checkPrivateDir checks (and with create makes) one directory of the chain.
func checkPrivateDir(f FS, d string, create bool) error {
	p := f.Path(d)
	if create {
		if err := os.Mkdir(p, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return fmt.Errorf("check %s: %w", d, &fs.PathError{Op: "lstat", Path: d, Err: err})
	}
	const fix = "; check what it holds, then remove it (brick recreates it 0700)"
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("%w: %s is not a directory (a symlink?)%s", ErrUnsafeDir, d, fix)
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%w: %s is owned by uid %d, not %d%s", ErrUnsafeDir, d, st.Uid, os.Geteuid(), fix)
	case st.Mode&0o022 != 0:
		return fmt.Errorf("%w: %s has mode %04o, writable by others%s", ErrUnsafeDir, d, st.Mode&0o7777, fix)
	case st.Mode&0o077 != 0:
		// Ours and not writable by others: only readable, so tighten it.
		if err := unix.Chmod(p, 0o700); err != nil {
			return fmt.Errorf("chmod 0700 %s: %w", d, err)
		}
	}
	return nil
}
