package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/sys/unix"
)

// LockDir holds brick's cross-process locks on the host. It lies under
// root-only RunDir: in world-writable /run/lock any user could create it
// first and block every later root operation.
const LockDir = RunDir + "/lock"

// DefaultLockWait bounds a lock wait whose context has no deadline, so a
// holder that never lets go (or a planted lock) cannot hang brick forever.
const DefaultLockWait = 10 * time.Minute

var lockNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._:-]{1,200}$`) })

// Lock takes an exclusive flock on LockDir/<name>.lock, waiting until ctx
// ends (at most DefaultLockWait when ctx has no deadline). Two brick
// processes working on the same volume or target serialise here. The lock dies with the process, so a kill -9 never leaves it held.
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
	dir, err := l.dir()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	// O_NOFOLLOW: a symlink planted as the lock file must not make root
	// create or truncate the file it points to.
	file, err := os.OpenFile(filepath.Join(dir, name+".lock"), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.maxWait())
		defer cancel()
	}
	fd := int(file.Fd())
	if l.Waiting != nil && errors.Is(unix.Flock(fd, how|unix.LOCK_NB), unix.EWOULDBLOCK) {
		if holder, self := readHolder(file); !self {
			l.Waiting(name, holder)
		}
	}
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
		holder, _ := readHolder(file)
		file.Close()
		return nil, fmt.Errorf("lock %s: waiting for %s: %w", name, holder, err)
	}
	writeHolder(file, l.Doing)
	return func() {
		_ = unix.Flock(fd, unix.LOCK_UN)
		file.Close()
	}, nil
}

func (l Locks) maxWait() time.Duration {
	if l.wait > 0 {
		return l.wait
	}
	return DefaultLockWait
}

// dir creates LockDir (and RunDir) 0700 or checks the ones found: real
// directories owned by brick's user and writable by nobody else.
func (l Locks) dir() (string, error) {
	if err := l.fs.PrivateDir(LockDir, true); err != nil {
		return "", err
	}
	return l.fs.Path(LockDir), nil
}

// writeHolder records who holds the lock, for the error of those waiting.
func writeHolder(f *os.File, doing string) {
	if doing == "" {
		doing = holderCommand()
	}
	if f.Truncate(0) == nil {
		_, _ = f.WriteAt([]byte(fmt.Sprintf("%d %s\n", os.Getpid(), doing)), 0)
	}
}

// holderCommand is the program and its leading words (the subcommand and
// its operands), stopping at the first flag so no flag value is written.
func holderCommand() string {
	words := []string{filepath.Base(os.Args[0])}
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-") || len(words) == 4 {
			break
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

// readHolder describes the holder recorded in the lock file; self: it is
// this process (another of its goroutines, as restore's parallel connects).
func readHolder(f *os.File) (holder string, self bool) {
	buf := make([]byte, 256)
	n, _ := f.ReadAt(buf, 0)
	pid, what, _ := strings.Cut(strings.TrimSpace(string(buf[:n])), " ")
	id, err := strconv.Atoi(pid)
	if err != nil {
		return "another brick process", false
	}
	what = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, what)
	if id == os.Getpid() {
		return fmt.Sprintf("another task of this brick process (%s)", what), true
	}
	return fmt.Sprintf("brick pid %s (%s)", pid, what), false
}
