// Package multipath drives dm-multipath for the SCSI connectors, and owns
// the steps both protocols share around it: Assemble makes multipathd build
// the map over a volume's paths (udev first, then the WWID, all paths at
// once, N of M), FindVolume and Teardown take a volume away in order
// (in-use refusal, buffers flushed with a deadline, map removed, paths
// deleted, WWID forgotten). See docs/scsi-multipath.md for why.
//
// Maps are named by their kernel name ("dm-3"); Map.DevPath gives "/dev/dm-3"
// and Map.ByIDPath the stable /dev/disk/by-id/dm-uuid-mpath-<wwid> link.
package multipath

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
)

// Options tune multipath operations; the zero value means the defaults.
type Options struct {
	// CommandTimeout bounds one multipath/multipathd/udevadm command. Default 30 s.
	CommandTimeout time.Duration
	// MapTimeout bounds the wait for multipathd to build a map. Default
	// DefaultMapTimeout.
	MapTimeout time.Duration
	// ReadWriteTimeout bounds the wait for a new map to turn read-write. Default 10 s.
	ReadWriteTimeout time.Duration
	// FlushTimeout is the overall deadline of Flush, across retries. Default 60 s.
	FlushTimeout time.Duration
	// SettleTimeout bounds the wait for udev's queue to empty before a
	// flush. Default 10 s.
	SettleTimeout time.Duration
	// Backoff paces polls and flush retries.
	Backoff host.Backoff
	// Daemon carries multipathd commands. Default: multipathd's socket
	// (on the real root only), falling back to the multipathd command.
	Daemon Daemon
}

// DefaultMapTimeout is Options.MapTimeout's default, and the CLI's.
const DefaultMapTimeout = 30 * time.Second

func (o Options) withDefaults() Options {
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = 30 * time.Second
	}
	if o.MapTimeout <= 0 {
		o.MapTimeout = DefaultMapTimeout
	}
	if o.ReadWriteTimeout <= 0 {
		o.ReadWriteTimeout = 10 * time.Second
	}
	if o.FlushTimeout <= 0 {
		o.FlushTimeout = 60 * time.Second
	}
	if o.SettleTimeout <= 0 {
		o.SettleTimeout = 10 * time.Second
	}
	return o
}

// Multipath works on the host's dm-multipath maps.
type Multipath struct {
	fs     host.FS
	sys    host.System
	block  host.BlockDevices
	runner host.Runner
	log    *slog.Logger
	opts   Options
}

// New returns a Multipath over h.
func New(h *host.Host, opts Options) *Multipath {
	log := h.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts = opts.withDefaults()
	if opts.Daemon == nil {
		opts.Daemon = socketDaemon{sys: h.Sys, timeout: opts.CommandTimeout}
	}
	return &Multipath{fs: h.FS, sys: h.Sys, block: h.Block, runner: h.Runner, log: log, opts: opts}
}

// ErrNoDaemon means multipathd is not running.
var ErrNoDaemon = errors.New("multipathd is not running")

// ErrNoMap means no multipath map exists over the given paths or WWID.
var ErrNoMap = errors.New("no multipath map")

// Map is one dm-multipath device.
type Map struct {
	// Device is the kernel name, "dm-3".
	Device string
	// Name is the device-mapper name ("mpatha", or the WWID with
	// user_friendly_names off): what multipath -f takes.
	Name string
	// WWID is the map's WWID (its dm uuid without "mpath-").
	WWID string
	// Paths are the component disks ("sdb", "sdc") from dm-N/slaves.
	Paths []string
	// ReadOnly is the map's /sys/block/dm-N/ro.
	ReadOnly bool
}

// DevPath returns "/dev/dm-N".
func (m *Map) DevPath() string { return "/dev/" + m.Device }

// ByIDPath returns the udev link that names the map by WWID.
func (m *Map) ByIDPath() string { return "/dev/disk/by-id/dm-uuid-mpath-" + m.WWID }

// DaemonRunning reports whether multipathd runs on the host (from /proc;
// no command is run).
func (m *Multipath) DaemonRunning() bool { return m.sys.ProcessRunning("multipathd") }

// daemonGone reports that multipathd is known not to run: /proc shows
// processes (PID 1 at least) and none of them is multipathd.
func (m *Multipath) daemonGone() bool {
	return m.fs.Exists("/proc/1") && !m.DaemonRunning()
}

// Use says whether to attach through dm-multipath: want (or enforce) and
// multipathd running. Without multipathd, enforce is an error wrapping
// ErrNoDaemon, and want alone falls back to a single path with a warning.
func (m *Multipath) Use(want, enforce bool) (bool, error) {
	use, warning, err := m.Choose(want, enforce)
	if warning != "" {
		m.log.Warn("multipath: " + warning)
	}
	return use, err
}

// Choose is Use without the log line: it returns the fallback's warning,
// so a dry run can put it in its plan.
func (m *Multipath) Choose(want, enforce bool) (use bool, warning string, err error) {
	switch {
	case !want && !enforce:
		return false, "", nil
	case m.DaemonRunning():
		return true, "", nil
	case enforce:
		return false, "", fmt.Errorf("multipath enforced: %w", ErrNoDaemon)
	}
	return false, "multipathd is not running; attaching over a single path", nil
}

// Map reads what sysfs knows about a dm device; ErrNoMap when it does not
// exist or is not a multipath map.
func (m *Multipath) Map(dm string) (*Map, error) {
	dm = strings.TrimPrefix(dm, "/dev/")
	if !ident.DMName(dm) {
		return nil, fmt.Errorf("multipath map %q: not a dm device name", dm)
	}
	base := "/sys/block/" + dm
	uuid, err := m.fs.ReadString(base + "/dm/uuid")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("multipath map %s: %w", dm, ErrNoMap)
		}
		return nil, fmt.Errorf("multipath map %s: %w", dm, err)
	}
	wwid, ok := strings.CutPrefix(uuid, "mpath-")
	if !ok {
		return nil, fmt.Errorf("multipath map %s: dm uuid %q is not multipath's: %w", dm, uuid, ErrNoMap)
	}
	name, err := m.fs.ReadString(base + "/dm/name")
	if err != nil {
		return nil, fmt.Errorf("multipath map %s: %w", dm, err)
	}
	mp := &Map{Device: dm, Name: name, WWID: wwid}
	if entries, err := m.fs.ReadDir(base + "/slaves"); err == nil {
		for _, e := range entries {
			mp.Paths = append(mp.Paths, e.Name())
		}
	}
	if ro, err := m.fs.ReadString(base + "/ro"); err == nil {
		mp.ReadOnly = ro == "1"
	}
	return mp, nil
}

// MapOf returns the multipath map stacked on any of the given disks
// ("sdb" or "/dev/sdb"), found through /sys/block/<disk>/holders, or an
// error wrapping ErrNoMap.
func (m *Multipath) MapOf(disks ...string) (*Map, error) {
	for _, d := range disks {
		d = strings.TrimPrefix(d, "/dev/")
		if !ident.DiskName(d) {
			return nil, fmt.Errorf("multipath map of %q: not a disk name", d)
		}
		entries, err := m.fs.ReadDir("/sys/block/" + d + "/holders")
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !ident.DMName(e.Name()) {
				continue
			}
			if mp, err := m.Map(e.Name()); err == nil {
				return mp, nil
			}
		}
	}
	return nil, fmt.Errorf("multipath map over %s: %w", strings.Join(disks, ", "), ErrNoMap)
}

// MapByWWID finds the multipath map with the given WWID by its dm uuid, or
// returns an error wrapping ErrNoMap.
func (m *Multipath) MapByWWID(wwid string) (*Map, error) {
	if !ident.WWID(wwid) {
		return nil, fmt.Errorf("multipath map of WWID %q: invalid WWID", wwid)
	}
	// The udev link is the fast path; sysfs covers hosts without udev.
	if target, err := m.fs.EvalSymlinks("/dev/disk/by-id/dm-uuid-mpath-" + wwid); err == nil {
		if mp, err := m.Map(strings.TrimPrefix(target, "/dev/")); err == nil && mp.WWID == wwid {
			return mp, nil
		}
	}
	// One listing and one read per dm device: cheaper than a glob of
	// /sys/block/dm-*/dm/uuid (BenchmarkMapLookup500).
	entries, err := m.fs.ReadDir("/sys/block")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("multipath map of WWID %s: %w", wwid, err)
	}
	for _, e := range entries {
		dm := e.Name()
		if !strings.HasPrefix(dm, "dm-") || !ident.DMName(dm) {
			continue
		}
		uuid, err := m.fs.ReadString("/sys/block/" + dm + "/dm/uuid")
		if err != nil || uuid != "mpath-"+wwid {
			continue
		}
		return m.Map(dm)
	}
	return nil, fmt.Errorf("multipath map of WWID %s: %w", wwid, ErrNoMap)
}

func (m *Multipath) run(ctx context.Context, name string, args ...string) (host.Result, error) {
	return m.runner.Run(ctx, host.Command{Name: name, Args: args, Timeout: m.opts.CommandTimeout})
}

// WWIDsFile is multipath-tools' list of WWIDs it may build maps for (its
// default wwids_file).
const WWIDsFile = "/etc/multipath/wwids"

const wwidsHeader = "# Multipath wwids, Version : 1.0\n# Maintained by multipath and multipathd; brick adds and forgets the WWIDs of the volumes it attaches.\n#\n# Valid WWIDs:\n"

// AddWWID records the WWID in multipath's wwids file, so multipathd builds
// a map for it even with find_multipaths strict or on. brick appends the
// line under the fcntl lock multipath-tools takes on that file, saving a
// process start; if that fails it runs "multipath -a".
func (m *Multipath) AddWWID(ctx context.Context, wwid string) error {
	if !ident.WWID(wwid) {
		return fmt.Errorf("multipath add wwid %q: invalid WWID", wwid)
	}
	lctx, cancel := context.WithTimeout(ctx, m.opts.CommandTimeout)
	_, err := m.fs.AppendLineLocked(lctx, WWIDsFile, "/"+wwid+"/", wwidsHeader)
	cancel()
	if err == nil {
		m.log.Debug("multipath: wwid added", "file", WWIDsFile, "wwid", wwid)
		return nil
	}
	m.log.Debug("multipath: cannot write the wwids file; running multipath -a", "err", err.Error())
	if _, err := m.run(ctx, "multipath", "-a", wwid); err != nil {
		return fmt.Errorf("multipath add wwid %s: %w", wwid, err)
	}
	return nil
}

// RemoveWWID forgets the WWID again, so a later unrelated LUN reusing it
// is not grabbed: its line in the wwids file becomes a comment, as
// "multipath -w" does it, under the same lock (that command is the
// fallback). An unknown WWID is success.
func (m *Multipath) RemoveWWID(ctx context.Context, wwid string) error {
	if !ident.WWID(wwid) {
		return fmt.Errorf("multipath remove wwid %q: invalid WWID", wwid)
	}
	lctx, cancel := context.WithTimeout(ctx, m.opts.CommandTimeout)
	_, err := m.fs.CommentOutLineLocked(lctx, WWIDsFile, "/"+wwid+"/")
	cancel()
	if err == nil {
		m.log.Debug("multipath: wwid forgotten", "file", WWIDsFile, "wwid", wwid)
		return nil
	}
	m.log.Debug("multipath: cannot write the wwids file; running multipath -w", "err", err.Error())
	if _, err := m.run(ctx, "multipath", "-w", wwid); err != nil {
		return fmt.Errorf("multipath remove wwid %s: %w", wwid, err)
	}
	return nil
}

// AddPath tells multipathd about a path (multipathd add path /dev/sdX): the
// udev event for the disk may have reached multipathd before its WWID was
// added, and then multipathd ignored it.
func (m *Multipath) AddPath(ctx context.Context, disk string) error {
	disk = strings.TrimPrefix(disk, "/dev/")
	if !ident.DiskName(disk) {
		return fmt.Errorf("multipathd add path %q: not a disk name", disk)
	}
	out, err := m.daemon(ctx, "add", "path", "/dev/"+disk)
	if err != nil {
		return fmt.Errorf("multipathd add path %s: %w", disk, err)
	}
	// multipathd reports failures on stdout with exit code 0 in some versions.
	if out != "" && out != "ok" {
		return fmt.Errorf("multipathd add path %s: %s", disk, ident.Clip(out, 200))
	}
	return nil
}

// DelPath makes multipathd drop a path (multipathd del path sdX). A path it
// does not know is success.
func (m *Multipath) DelPath(ctx context.Context, disk string) error {
	disk = strings.TrimPrefix(disk, "/dev/")
	if !ident.DiskName(disk) {
		return fmt.Errorf("multipathd del path %q: not a disk name", disk)
	}
	if _, err := m.daemon(ctx, "del", "path", disk); err != nil {
		return fmt.Errorf("multipathd del path %s: %w", disk, err)
	}
	return nil
}

// DisableQueueing makes the map fail I/O instead of queueing it while no
// path is usable, so a forced flush cannot hang on dead paths.
func (m *Multipath) DisableQueueing(ctx context.Context, mp *Map) error {
	if _, err := m.daemon(ctx, "disablequeueing", "map", mp.Name); err != nil {
		return fmt.Errorf("multipathd disablequeueing %s: %w", mp.Name, err)
	}
	return nil
}

// WaitForMap waits until a multipath map with the given WWID sits on one of
// the disks and returns it. Bounded by Options.MapTimeout (or ctx); wakes
// on /dev changes.
func (m *Multipath) WaitForMap(ctx context.Context, wwid string, disks ...string) (*Map, error) {
	if !ident.WWID(wwid) {
		return nil, fmt.Errorf("wait for multipath map %q: invalid WWID", wwid)
	}
	ctx, cancel := context.WithTimeout(ctx, m.opts.MapTimeout)
	defer cancel()
	var found *Map
	err := m.fs.WaitFor(ctx, []string{"/dev", "/dev/mapper"}, m.opts.Backoff, func() (bool, error) {
		mp, err := m.MapOf(disks...)
		if err == nil && mp.WWID == wwid {
			found = mp
			return true, nil
		}
		if err == nil {
			return false, fmt.Errorf("wait for multipath map %s: %s holds the paths with WWID %s", wwid, mp.Device, mp.WWID)
		}
		if m.daemonGone() {
			// No map will come: say so now rather than at the timeout.
			return false, fmt.Errorf("%w (it stopped during the attach; start multipathd, or attach without --multipath)", ErrNoDaemon)
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("wait for multipath map %s over %s: %w", wwid, strings.Join(disks, ", "), err)
	}
	m.log.Debug("multipath: map is there", "map", found.Device, "paths", strings.Join(found.Paths, ","))
	return found, nil
}

// WaitReadWrite waits until the map is writable: multipathd may create it
// read-only while its first path still reports write protection.
func (m *Multipath) WaitReadWrite(ctx context.Context, mp *Map) error {
	ctx, cancel := context.WithTimeout(ctx, m.opts.ReadWriteTimeout)
	defer cancel()
	err := m.fs.WaitFor(ctx, nil, m.opts.Backoff, func() (bool, error) {
		ro, err := m.fs.ReadString("/sys/block/" + mp.Device + "/ro")
		if err != nil {
			return false, err
		}
		return ro == "0", nil
	})
	if err != nil {
		return fmt.Errorf("wait for %s (%s) to become read-write: %w", mp.Device, mp.Name, err)
	}
	m.log.Debug("multipath: map is read-write", "map", mp.Device)
	mp.ReadOnly = false
	return nil
}

// Settle waits, bounded by Options.SettleTimeout, for udev to finish its
// queue: udev's blkid probe briefly opens a new or just written map, and
// a flush then fails with "map in use". udevd keeps the flag file
// /run/udev/queue while events are queued (what "udevadm settle" checks
// too); watching for it to go costs no process. An event udevd has not
// read yet is not covered: Flush retries a map still in use anyway.
// Without udevd (no /run/udev/control) there is nothing to wait for.
func (m *Multipath) Settle(ctx context.Context) error {
	if !m.fs.Exists("/run/udev/control") {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, m.opts.SettleTimeout)
	defer cancel()
	err := m.fs.WaitFor(ctx, []string{"/run/udev"}, m.opts.Backoff, func() (bool, error) {
		return !m.fs.Exists("/run/udev/queue"), nil
	})
	if err != nil {
		return fmt.Errorf("wait for the udev queue to empty: %w", err)
	}
	return nil
}

// Flush removes the map (multipathd's "del map", else multipath -f),
// letting udev settle unless the first try over the socket worked, and
// retries while the map is briefly held, until Options.FlushTimeout (or
// ctx) ends. A map that is already gone is success. The paths beneath stay.
func (m *Multipath) Flush(ctx context.Context, mp *Map) error {
	ctx, cancel := context.WithTimeout(ctx, m.opts.FlushTimeout)
	defer cancel()
	// One try over multipathd's socket before any wait for udev, which is
	// often busy with the map's events without holding it open; multipathd
	// refuses a map in use, and then the settle-and-retry below goes on.
	if reply, err := m.opts.Daemon.Command(ctx, "del map "+mp.Name); err == nil && (reply == "ok" || reply == "") {
		m.log.Debug("multipathd (socket)", "command", "del map "+mp.Name, "reply", reply)
		if !m.stillThere(mp) {
			return nil
		}
	} else if err == nil {
		m.log.Debug("multipathd del map refused before udev settled; settling", "map", mp.Name, "reply", ident.Clip(reply, 200))
	}
	if err := m.Settle(ctx); err != nil {
		// A slow udev queue is no reason to keep the map; flush anyway.
		m.log.Debug("multipath flush: settle failed", "err", err.Error())
	}
	var last error
	attempt := 0
	err := m.fs.WaitFor(ctx, nil, m.flushBackoff(), func() (bool, error) {
		if !m.stillThere(mp) {
			return true, nil
		}
		attempt++
		err := m.removeMap(ctx, mp)
		if err == nil || !m.stillThere(mp) {
			return true, nil
		}
		last = err
		m.log.Debug("multipath flush failed, will retry", "map", mp.Name, "attempt", attempt, "err", err.Error())
		return false, nil
	})
	if err != nil {
		if last != nil {
			return host.FlushFailed(fmt.Errorf("multipath flush %s (%s) after %d attempts: %w (last: %w)", mp.Name, mp.Device, attempt, err, last))
		}
		return host.FlushFailed(fmt.Errorf("multipath flush %s (%s): %w", mp.Name, mp.Device, err))
	}
	return nil
}

// removeMap removes the map once: multipathd's "del map" over its socket
// (no process start; multipathd also drops the map and its paths from its
// own state at once), else "multipath -f". A refused "del map" (map in
// use, or one multipathd does not know) gets "multipath -f" too, whose
// error then says why.
//
// Success is what sysfs shows, not the reply: a map still there after an
// "ok" (a stale or impostor multipathd) is an error.
func (m *Multipath) removeMap(ctx context.Context, mp *Map) error {
	reply, err := m.opts.Daemon.Command(ctx, "del map "+mp.Name)
	if err == nil && (reply == "ok" || reply == "") {
		m.log.Debug("multipathd (socket)", "command", "del map "+mp.Name, "reply", reply)
		if m.stillThere(mp) {
			return fmt.Errorf("multipathd del map %s answered %q, but %s is still there", mp.Name, reply, mp.DevPath())
		}
		return nil
	}
	if err == nil {
		m.log.Debug("multipathd del map refused; running multipath -f", "map", mp.Name, "reply", ident.Clip(reply, 200))
	} else if !errors.Is(err, ErrNoSocket) {
		m.log.Debug("multipathd del map failed; running multipath -f", "map", mp.Name, "err", err.Error())
	}
	if _, err = m.run(ctx, "multipath", "-f", mp.Name); err == nil && m.stillThere(mp) {
		return fmt.Errorf("multipath -f %s succeeded, but %s is still there", mp.Name, mp.DevPath())
	}
	return err
}

func (m *Multipath) flushBackoff() host.Backoff {
	b := m.opts.Backoff
	if b.Min <= 0 {
		b.Min = 100 * time.Millisecond
	}
	if b.Max <= 0 {
		b.Max = 2 * time.Second
	}
	return b
}

// stillThere reports whether the map still exists under the same identity.
func (m *Multipath) stillThere(mp *Map) bool {
	cur, err := m.Map(mp.Device)
	return err == nil && cur.WWID == mp.WWID
}

// WaitForPaths waits, within MapTimeout, until the map holds at least n
// paths: multipathd often creates a map with its first path and adds the
// others a moment later. It returns the map as last seen and whether it
// reached n; a path that never joins is for the caller to judge.
func (m *Multipath) WaitForPaths(ctx context.Context, mp *Map, n int) (*Map, bool) {
	ctx, cancel := context.WithTimeout(ctx, m.opts.MapTimeout)
	defer cancel()
	_ = m.fs.WaitFor(ctx, []string{"/dev"}, m.opts.Backoff, func() (bool, error) {
		if cur, err := m.Map(mp.Device); err == nil && cur.WWID == mp.WWID {
			mp = cur
		}
		return len(mp.Paths) >= n, nil
	})
	m.log.Debug("multipath: map paths", "map", mp.Device, "paths", strings.Join(mp.Paths, ","), "want", n)
	return mp, len(mp.Paths) >= n
}

// WaitUdevDone waits, within MapTimeout (or ctx), until udev has finished
// its rules for the disk (its database entry /run/udev/data/b<maj>:<min>
// exists): multipathd takes a path's WWID from that entry and refuses a path
// added before it. Without a running udevd (no /run/udev/control) there is
// nothing to wait for.
func (m *Multipath) WaitUdevDone(ctx context.Context, disk string) error {
	disk = strings.TrimPrefix(disk, "/dev/")
	if !ident.DiskName(disk) {
		return fmt.Errorf("wait for udev on %q: not a disk name", disk)
	}
	if !m.fs.Exists("/run/udev/control") {
		return nil
	}
	devNum, err := m.fs.ReadString("/sys/block/" + disk + "/dev")
	if err != nil {
		return fmt.Errorf("wait for udev on %s: %w", disk, err)
	}
	ctx, cancel := context.WithTimeout(ctx, m.opts.MapTimeout)
	defer cancel()
	entry := "/run/udev/data/b" + devNum
	err = m.fs.WaitFor(ctx, []string{"/run/udev/data"}, m.opts.Backoff, func() (bool, error) {
		return m.fs.Exists(entry), nil
	})
	if err != nil {
		return fmt.Errorf("wait for udev to process %s (%s): %w", disk, entry, err)
	}
	m.log.Debug("multipath: udev has processed the path", "disk", disk)
	return nil
}
