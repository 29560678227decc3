package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// scratchLock is the file a Scratch's owner holds with flock while it
// uses the directory: a sweep that gets the lock knows the owner is gone
// (in any PID namespace sharing the directory).
const scratchLock = "lock"

// Scratch is a private directory for one short-lived use (a Ceph keyring
// for one rbd call), made 0700 under a directory of brick's and locked by
// its owner until Remove.
type Scratch struct {
	// Dir is the real path (under FS's root), for the programs brick runs.
	Dir  string
	lock *os.File
}

// NewScratch makes a fresh directory named prefix-<random> under parent
// (a host path, checked and created as PrivateDir does) and takes its lock.
func (f FS) NewScratch(parent, prefix string) (*Scratch, error) {
	if err := f.PrivateDir(parent, true); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(f.Path(parent), prefix)
	if err != nil {
		return nil, fmt.Errorf("create a private directory under %s: %w", parent, err)
	}
	s := &Scratch{Dir: dir}
	path := filepath.Join(dir, scratchLock)
	s.lock, err = os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err == nil {
		err = unix.Flock(int(s.lock.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	}
	if err != nil {
		_ = s.Remove()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return s, nil
}

// WriteFile creates name in the directory, 0600, never following a link
// or reusing a file, and returns its real path.
func (s *Scratch) WriteFile(name, data string) (string, error) {
	path := filepath.Join(s.Dir, name)
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return "", fmt.Errorf("create %s: %w", path, err)
	}
	_, werr := file.WriteString(data)
	if cerr := file.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", fmt.Errorf("write %s: %w", path, werr)
	}
	return path, nil
}

// Remove deletes the directory and all in it, then drops the lock;
// already gone is fine.
func (s *Scratch) Remove() error {
	if s == nil {
		return nil
	}
	err := os.RemoveAll(s.Dir)
	if s.lock != nil {
		_ = s.lock.Close()
	}
	if err != nil {
		return fmt.Errorf("remove %s: %w", s.Dir, err)
	}
	return nil
}

// ScratchAge bounds how long a Scratch may live: older ones are swept
// whatever their lock says, lock-less ones after Grace (their brick died
// between creating and locking them).
type ScratchAge struct{ Stale, Grace time.Duration }

// SweepScratch removes the prefix-* directories under parent (a host path
// brick owns) whose owner is gone, and returns their real paths. Best
// effort: what cannot be judged stays for later.
func (f FS) SweepScratch(parent, prefix string, age ScratchAge, now time.Time) []string {
	base := f.Path(parent)
	var st unix.Stat_t
	if unix.Lstat(base, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() {
		return nil // not ours: never delete in a directory someone else controls
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !e.IsDir() {
			continue
		}
		dir := filepath.Join(base, e.Name())
		fi, err := e.Info()
		if err != nil || !abandoned(dir, now.Sub(fi.ModTime()), age) {
			continue
		}
		if os.RemoveAll(dir) == nil {
			removed = append(removed, dir)
		}
	}
	return removed
}

// abandoned reports whether the brick that made dir (age old) is gone.
func abandoned(dir string, old time.Duration, age ScratchAge) bool {
	if old >= age.Stale {
		return true
	}
	file, err := os.OpenFile(filepath.Join(dir, scratchLock), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist) && old >= age.Grace
	}
	defer func() { _ = file.Close() }()
	// Getting the lock means its holder is gone; nobody locks an existing
	// directory again, so dropping it on return is safe.
	return unix.Flock(int(file.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil
}
