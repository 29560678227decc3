// Package guest boots a throwaway qemu guest with Debian's kernel on the
// host's own root filesystem and runs one bash script in it as root.
//
// brick's e2e tests need a real kernel with SCSI, iSCSI, dm-multipath, NFS,
// RBD and FC, which the host's kernel lacks. The guest sees the host's / read
// only through virtio-9p with a tmpfs overlay on top, so everything installed
// or built on the host runs in the guest and every boot starts clean. A
// second, writable 9p share (mounted at /brick) carries the script, files and
// fixtures in and the output and exit code out.
//
//	res, err := guest.Run(ctx, guest.Options{
//		Script: `source "$BRICK_FIXTURES/iscsi.sh"; /brick/brick version`,
//		Files:  map[string]string{brickBinary: "brick"},
//		NICs:   1,
//	})
//	if err != nil { t.Fatal(err) }   // boot failure, hang, panic, timeout
//	if res.ExitCode != 0 { t.Fatalf("%s", res.Output) }
//
// Inside the guest the script runs with cwd /brick and these variables:
// BRICK_SHARE (/brick, writable, visible on the host as Options.ShareDir) and
// BRICK_FIXTURES (the fixture scripts of test/guest/fixtures).
package guest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Options describe one guest run. The zero value of every field but Script
// means "use the default".
type Options struct {
	// Script is bash source, run as root in the guest with cwd /brick.
	Script string
	// Files maps a host path to a path relative to the share; the file is
	// copied there before boot (the guest finds it under /brick/<name>).
	// Test binaries must travel this way (or live in a host path other than
	// /tmp and /run, which are fresh tmpfs in the guest).
	Files map[string]string
	// NICs is the number of slirp user-mode NICs (0..2). NIC 0 is eth0 with
	// 10.0.2.15/24, the host's loopback answering at 10.0.2.2; NIC 1 is eth1
	// with 10.0.3.15/24 and the host at 10.0.3.2. There is no default route
	// and no DNS: the guest reaches nothing else.
	NICs int
	// Timeout bounds the script inside the guest (default 5m). A script that
	// runs longer is killed and Run returns ErrTimeout.
	Timeout time.Duration
	// BootTimeout is added to Timeout for boot and power-off before the host
	// kills qemu (default 5m: a boot takes 5-15 s on an idle 2-core host but
	// over a minute when several guests share it). Panics end the run at
	// once whatever this is; it only bounds a guest that hangs.
	BootTimeout time.Duration
	// MemoryMB is the guest's RAM (default 3072). tmpfs files, the overlay's
	// upper layer and Ceph's memstore all live in it.
	MemoryMB int
	// CPUs is the number of vCPUs (default 2).
	CPUs int
	// Env adds environment variables for the script.
	Env map[string]string
	// ShareDir is the host directory shared at /brick. Empty: a fresh
	// temporary directory, removed when Run returns. Pass t.TempDir() to
	// read what the script left in $BRICK_SHARE.
	ShareDir string
	// Console, if set, receives the serial console as it happens (kernel
	// messages and the runner's progress lines), e.g. os.Stderr while
	// debugging a boot.
	Console io.Writer

	// KernelVersion selects /boot/vmlinuz-<version>; default: the newest
	// kernel in /boot whose modules are installed.
	KernelVersion string
	// CacheDir holds built initramfs images (default
	// /var/tmp/brick-testbed/guest).
	CacheDir string
	// QEMU is the emulator binary (default qemu-system-x86_64 from PATH).
	QEMU string
	// RequireClean makes a run whose script exited 0 but left iSCSI
	// sessions, SCSI disks, dm maps, RBD/NBD/NVMe devices or storage
	// mounts behind fail with ErrLeftovers (see Result.Leftovers).
	RequireClean bool
}

// Result is what a finished guest run produced.
type Result struct {
	// Output is the script's stdout and stderr, interleaved.
	Output []byte
	// ExitCode is the script's exit status (124 after a guest-side timeout).
	ExitCode int
	// Console is the tail of the serial console (up to 256 KiB).
	Console []byte
	// Duration is the host's wall time from starting qemu to its exit.
	Duration time.Duration
	// Boot is the guest's uptime when the script started.
	Boot time.Duration
	// ScriptTime is how long the script ran, measured in the guest.
	ScriptTime time.Duration
	// KernelVersion is the kernel that was booted.
	KernelVersion string
	// Leftovers lists what the script left in the guest's kernel when it
	// ended, one item a line ("iscsi session session1", "dm map dm-0
	// mpatha", "mount /dev/sda on /mnt (ext4)"): what a test sharing the
	// guest with the next one would hand on.
	Leftovers []string
}

var (
	// ErrTimeout: the script outlived Options.Timeout and was killed.
	ErrTimeout = errors.New("guest script timed out")
	// ErrNoExitCode: the guest ended (panic, failed init, killed qemu)
	// without reporting the script's exit code.
	ErrNoExitCode = errors.New("guest ended without an exit code")
	// ErrLeftovers: Options.RequireClean was set and the script left
	// sessions, devices, maps or mounts behind.
	ErrLeftovers = errors.New("guest script left state behind")
)

const (
	defaultTimeout     = 5 * time.Minute
	defaultBootTimeout = 5 * time.Minute
	defaultMemoryMB    = 3072
	defaultCPUs        = 2
	defaultCacheDir    = "/var/tmp/brick-testbed/guest"
	consoleTailBytes   = 256 << 10
	errorTailLines     = 60
	// killGrace is how long the guest's timeout waits after SIGTERM before
	// SIGKILL (the -k of test/guest/init.sh).
	killGrace = 10 * time.Second
)

// Run boots a guest, runs opts.Script in it and returns when the guest has
// powered off. A non-zero exit code is not an error (check
// Result.ExitCode); an error means the run itself failed: the script timed
// out (ErrTimeout), the guest died or hung (ErrNoExitCode), or the run could
// not start. Whenever qemu ran, the Result is returned too, and errors carry
// the console's last lines.
func Run(ctx context.Context, opts Options) (*Result, error) {
	opts = withDefaults(opts)
	if opts.Timeout < time.Second {
		return nil, fmt.Errorf("guest run: timeout %v is below 1s", opts.Timeout)
	}
	share := opts.ShareDir
	if share == "" {
		var err error
		if share, err = os.MkdirTemp("", "brick-guest-"); err != nil {
			return nil, fmt.Errorf("guest run: create share: %w", err)
		}
		defer os.RemoveAll(share)
	}
	// The hard limit: the guest gets the script's budget plus its grace
	// period plus boot and power-off, then qemu is killed.
	hard := opts.Timeout + killGrace + opts.BootTimeout
	m, err := launch(ctx, opts, share, false, hard)
	if err != nil {
		return nil, fmt.Errorf("guest run: %w", err)
	}
	defer m.cancel()
	<-m.done
	res := &Result{
		Console:       m.console.Bytes(),
		Duration:      m.elapsed,
		KernelVersion: m.kernel.Version,
	}
	readReports(filepath.Join(share, ctlDir), res)
	rcText, rcErr := os.ReadFile(filepath.Join(share, ctlDir, "rc"))
	fail := m.failer(res)
	if rcErr != nil {
		switch {
		case ctx.Err() != nil:
			return fail(ErrNoExitCode, "caller's context ended (%v), qemu killed", ctx.Err())
		case m.ctx.Err() != nil:
			return fail(ErrNoExitCode, "guest did not finish within %v, qemu killed", hard)
		case m.err != nil:
			return fail(ErrNoExitCode, "qemu failed: %v", m.err)
		default:
			return fail(ErrNoExitCode, "guest powered off or panicked before the script finished")
		}
	}
	if err := checkExit(res, rcText, opts.Timeout, opts.RequireClean, fail); err != nil {
		return res, err
	}
	if m.err != nil && m.ctx.Err() == nil {
		// The exit code is in, but qemu itself reported a failure: say so
		// rather than hide a broken emulator behind a passing test.
		return fail(m.err, "qemu failed after the script finished")
	}
	return res, nil
}

// checkExit parses the exit code into res and turns a timed-out script, and
// leftovers when they must not be, into errors made by fail.
func checkExit(res *Result, rcText []byte, timeout time.Duration, requireClean bool, fail failFunc) error {
	rc, err := strconv.Atoi(strings.TrimSpace(string(rcText)))
	if err != nil {
		_, err := fail(ErrNoExitCode, "unreadable exit code %q", rcText)
		return err
	}
	res.ExitCode = rc
	if rc == 124 || (rc == 137 && res.ScriptTime >= timeout) {
		_, err := fail(ErrTimeout, "script ran longer than %v (exit %d); output tail:\n%s",
			timeout, rc, lastLines(res.Output, errorTailLines))
		return err
	}
	if requireClean && rc == 0 && len(res.Leftovers) > 0 {
		_, err := fail(ErrLeftovers, "the script left:\n%s", strings.Join(res.Leftovers, "\n"))
		return err
	}
	return nil
}

// readReports fills in what the guest left in dir (the runner's directory,
// or a session's exec-N) besides the exit code: the script's output, its
// uptimes and the leftovers list.
func readReports(dir string, res *Result) {
	if out, err := os.ReadFile(filepath.Join(dir, "output")); err == nil {
		res.Output = out
	}
	if up, err := os.ReadFile(filepath.Join(dir, "uptime")); err == nil {
		res.Boot, res.ScriptTime = parseUptimes(up)
	}
	if lo, err := os.ReadFile(filepath.Join(dir, "leftovers")); err == nil {
		res.Leftovers = nonEmptyLines(lo)
	}
}

func withDefaults(o Options) Options {
	if o.Timeout == 0 {
		o.Timeout = defaultTimeout
	}
	if o.BootTimeout == 0 {
		o.BootTimeout = defaultBootTimeout
	}
	if o.MemoryMB == 0 {
		o.MemoryMB = defaultMemoryMB
	}
	if o.CPUs == 0 {
		o.CPUs = defaultCPUs
	}
	if o.CacheDir == "" {
		o.CacheDir = defaultCacheDir
	}
	if o.QEMU == "" {
		o.QEMU = "qemu-system-x86_64"
	}
	return o
}

// parseUptimes reads "<start> <end>" (seconds of guest uptime, as in
// /proc/uptime) into boot time and script run time.
func parseUptimes(b []byte) (boot, script time.Duration) {
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0
	}
	s, err1 := strconv.ParseFloat(f[0], 64)
	e, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || e < s {
		return 0, 0
	}
	return time.Duration(s * float64(time.Second)), time.Duration((e - s) * float64(time.Second))
}

// nonEmptyLines splits b into its non-blank lines.
func nonEmptyLines(b []byte) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// lastLines returns at most n trailing lines of b.
func lastLines(b []byte, n int) string {
	s := strings.TrimRight(string(b), "\n")
	idx := len(s)
	for i := 0; i < n; i++ {
		j := strings.LastIndexByte(s[:idx], '\n')
		if j < 0 {
			return s
		}
		idx = j
	}
	return s[idx+1:]
}
