package host

import "time"

// The machine is reached through small views over one rooted FS, each
// for one concern, so a package asks only for what it uses.

// Locks are brick's cross-process locks: flock files under LockDir.
type Locks struct {
	fs   FS
	wait time.Duration // bound of a wait without deadline; 0: DefaultLockWait
	// Waiting, when set, hears at once that a lock is held by another
	// process (holder as in the timeout error), so the user learns why
	// brick waits.
	Waiting func(name, holder string)
	// Doing is what this process does ("brick local-attach data"),
	// recorded with each lock it holds for those who wait. Empty: the
	// program and its leading words.
	Doing string
}

// NewLocks returns the locks of the machine fs is rooted at.
func NewLocks(fs FS) Locks { return Locks{fs: fs} }

// BlockDevices opens block devices for the checks and ioctls brick needs:
// in-use (O_EXCL), flush, read-only.
type BlockDevices struct{ fs FS }

// NewBlockDevices returns the block devices under fs's root.
func NewBlockDevices(fs FS) BlockDevices { return BlockDevices{fs} }

// System reads the kernel's view of the machine: mounts, network
// addresses and routes, running processes, abstract unix sockets.
type System struct{ fs FS }

// NewSystem returns the system view of the machine fs is rooted at.
func NewSystem(fs FS) System { return System{fs} }
