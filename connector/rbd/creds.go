package rbd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/brick-storage/brick/host"
)

// DefaultTempDir is the host directory (root-owned, 0700) under which a
// connection info's key briefly lives while rbd maps the image. /run is a
// tmpfs, so a key that a killed brick left behind does not survive a reboot.
const DefaultTempDir = "/run/brick/ceph"

// staleAfter: a credentials directory this old belongs to a brick process
// that died before its cleanup ran (a map never takes this long).
const staleAfter = time.Hour

// lockGrace: a credentials directory without its lock file is this old
// only when its brick died between creating it and locking it.
const lockGrace = time.Minute

// lockFile, held with flock by the brick using the directory, tells a
// sweep the owner is alive (in any PID namespace sharing the directory).
const lockFile = "lock"

// creds is a private directory holding a Ceph config and keyring for one
// rbd call. ConfPath is the real path handed to rbd.
type creds struct {
	Dir      string // real path
	ConfPath string
	KeyPath  string
	lock     *os.File
}

// remove deletes the directory and everything in it, then drops the lock;
// already gone is fine.
func (c *creds) remove() error {
	if c == nil {
		return nil
	}
	err := os.RemoveAll(c.Dir)
	if c.lock != nil {
		_ = c.lock.Close()
	}
	if err != nil {
		return fmt.Errorf("remove temporary ceph credentials %s: %w", c.Dir, err)
	}
	return nil
}

// writeCreds writes v's key into a fresh 0600 keyring and a 0600 config
// that names the monitors and that keyring, inside a new 0700 directory
// under tempDir (a host path). The key never reaches argv: rbd gets only
// --conf <path>. The caller must call remove as soon as rbd returns.
func writeCreds(fsys host.FS, tempDir string, v Volume, now time.Time) (*creds, error) {
	base := fsys.Path(tempDir)
	if err := ensurePrivateDir(base); err != nil {
		return nil, err
	}
	sweepStale(base, now)
	dir, err := os.MkdirTemp(base, "map-")
	if err != nil {
		return nil, fmt.Errorf("create temporary ceph credentials: %w", err)
	}
	c := &creds{Dir: dir, ConfPath: filepath.Join(dir, "ceph.conf"), KeyPath: filepath.Join(dir, "keyring")}
	if c.lock, err = lockCreds(dir); err != nil {
		_ = c.remove()
		return nil, err
	}
	user := v.User
	if user == "" {
		user = "admin"
	}
	keyring := fmt.Sprintf("[client.%s]\n\tkey = %s\n", user, v.Key.Reveal())
	var conf strings.Builder
	conf.WriteString("# Written by brick for one rbd call; removed when it returns.\n[global]\n")
	if len(v.Monitors) > 0 {
		fmt.Fprintf(&conf, "\tmon host = %s\n", strings.Join(v.Monitors, ","))
	}
	fmt.Fprintf(&conf, "\tkeyring = %s\n", c.KeyPath)
	for _, f := range []struct{ path, data string }{{c.KeyPath, keyring}, {c.ConfPath, conf.String()}} {
		if err := writePrivate(f.path, f.data); err != nil {
			_ = c.remove()
			return nil, err
		}
	}
	return c, nil
}

// ensurePrivateDir creates dir 0700, or accepts an existing one only if it
// is a real directory owned by us that nobody else can enter (a symlink or
// a group-writable directory there could hand the key to someone else).
func ensurePrivateDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(dir), err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("check %s: %w", dir, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory (symlink?): refusing to put a key there", dir)
	case !ok || int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s is not owned by uid %d: refusing to put a key there", dir, os.Geteuid())
	case fi.Mode().Perm()&0o077 != 0:
		// Ours, but too open (an old umask, a hand-made directory): tighten it.
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("restrict %s to 0700: %w", dir, err)
		}
	}
	return nil
}

// writePrivate creates path 0600 (never following a symlink, never
// reusing a file) and writes data.
func writePrivate(path, data string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	_, werr := f.WriteString(data)
	cerr := f.Close()
	if werr != nil {
		return fmt.Errorf("write %s: %w", path, werr)
	}
	if cerr != nil {
		return fmt.Errorf("write %s: %w", path, cerr)
	}
	return nil
}

// lockCreds creates dir's lock file and holds it until remove.
func lockCreds(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// SweepCredentials removes the temporary credentials directories under
// tempDir (a host path) whose brick is gone: killed (SIGKILL, OOM, power
// cut of a container) before it could remove them. It returns the
// directories removed. Best effort: what cannot be judged stays for later.
func SweepCredentials(fsys host.FS, tempDir string, now time.Time) []string {
	base := fsys.Path(tempDir)
	fi, err := os.Lstat(base)
	if err != nil || !fi.IsDir() {
		return nil
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
		return nil // not ours: never delete in a directory someone else controls
	}
	return sweepStale(base, now)
}

// sweepStale removes credentials directories nobody holds the lock of,
// lock-less ones past lockGrace, and any past staleAfter.
func sweepStale(base string, now time.Time) []string {
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "map-") || !e.IsDir() {
			continue
		}
		dir := filepath.Join(base, e.Name())
		fi, err := e.Info()
		if err != nil || !abandoned(dir, now.Sub(fi.ModTime())) {
			continue
		}
		if os.RemoveAll(dir) == nil {
			removed = append(removed, dir)
		}
	}
	return removed
}

// abandoned reports whether the brick that made dir (age old) is gone.
func abandoned(dir string, age time.Duration) bool {
	if age >= staleAfter {
		return true
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist) && age >= lockGrace
	}
	defer func() { _ = f.Close() }()
	// Getting the lock means its holder is gone; no brick locks an
	// existing directory again, so dropping it on return is safe.
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil
}
