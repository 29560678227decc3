package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// LockDir holds brick's cross-process locks on the host.
const LockDir = "/run/lock/brick"

var lockNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._:-]{1,200}$`) })

// Lock takes an exclusive flock on LockDir/<name>.lock, waiting until ctx
// ends. Two brick processes working on the same volume or target serialise
// here. The lock dies with the process, so a kill -9 never leaves it held.
// Names may hold letters, digits and . _ : - (an IQN or a volume ID fits).
func (l Locks) Lock(ctx context.Context, name string) (unlock func(), err error) {
	return l.lock(ctx, name, unix.LOCK_EX)
}

// LockShared takes a shared flock on the same file as Lock: any number of
// shared holders at once, none while someone holds it exclusively. It lets
// many brick processes use a resource that only some operations (deleting
// iSCSI node records) must have to themselves.
func (l Locks) LockShared(ctx context.Context, name string) (unlock func(), err error) {
	return l.lock(ctx, name, unix.LOCK_SH)
}

// LockAll takes the exclusive locks of every name, in sorted order and
// each name once, so two processes wanting overlapping sets never deadlock.
// It is all or nothing: when one lock cannot be had before ctx ends, those
// already taken are released. unlock releases them all, newest first.
func (l Locks) LockAll(ctx context.Context, names ...string) (unlock func(), err error) {
	sorted := slices.Compact(slices.Sorted(slices.Values(names)))
	unlocks := make([]func(), 0, len(sorted))
	release := func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	for _, n := range sorted {
		u, err := l.Lock(ctx, n)
		if err != nil {
			release()
			return nil, err
		}
		unlocks = append(unlocks, u)
	}
	return release, nil
}

func (l Locks) lock(ctx context.Context, name string, how int) (unlock func(), err error) {
	if !lockNameRE().MatchString(name) {
		return nil, fmt.Errorf("lock %q: invalid lock name", name)
	}
	dir := l.fs.Path(LockDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	file, err := os.OpenFile(filepath.Join(dir, name+".lock"), os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	fd := int(file.Fd())
	err = l.fs.WaitFor(ctx, nil, Backoff{Min: 2 * time.Millisecond, Max: 100 * time.Millisecond}, func() (bool, error) {
		err := unix.Flock(fd, how|unix.LOCK_NB)
		if err == nil {
			return true, nil
		}
		if errors.Is(err, unix.EWOULDBLOCK) || errors.Is(err, unix.EINTR) {
			return false, nil
		}
		return false, err
	})
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("lock %s: waiting for another brick process: %w", name, err)
	}
	return func() {
		_ = unix.Flock(fd, unix.LOCK_UN)
		file.Close()
	}, nil
}
