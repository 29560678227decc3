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

// deps are what every part of a Multipath works through.
type deps struct {
	fs     host.FS
	sys    host.System
	block  host.BlockDevices
	runner host.Runner
	log    *slog.Logger
	opts   Options
}

func (d *deps) run(ctx context.Context, name string, args ...string) (host.Result, error) {
	return d.runner.Run(ctx, host.Command{Name: name, Args: args, Timeout: d.opts.CommandTimeout})
}

// Multipath works on the host's dm-multipath maps: it builds a volume's
// map (Assemble), takes it away (Teardown) and grows it (Grow). Its parts
// are Maps (what sysfs shows), WWIDs (multipath's wwids file) and
// Multipathd (the daemon's commands).
type Multipath struct {
	*deps
	maps  Maps
	wwids WWIDs
	mpd   Multipathd
	grow  grower
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
	d := &deps{fs: h.FS, sys: h.Sys, block: h.Block, runner: h.Runner, log: log, opts: opts}
	m := &Multipath{deps: d, maps: Maps{fs: h.FS}, wwids: WWIDs{d}, mpd: Multipathd{d}}
	m.grow = grower{deps: d, maps: m.maps, mpd: m.mpd}
	return m
}

// Maps returns the part that reads the maps sysfs shows.
func (m *Multipath) Maps() Maps { return m.maps }

// WWIDs returns the part that keeps multipath's wwids file.
func (m *Multipath) WWIDs() WWIDs { return m.wwids }

// Daemon returns the part that sends multipathd its commands.
func (m *Multipath) Daemon() Multipathd { return m.mpd }

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
	case m.mpd.Running():
		return true, "", nil
	case enforce:
		return false, "", fmt.Errorf("multipath enforced: %w", ErrNoDaemon)
	}
	return false, "multipathd is not running; attaching over a single path", nil
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
		mp, err := m.maps.MapOf(disks...)
		if err == nil && mp.WWID == wwid {
			found = mp
			return true, nil
		}
		if err == nil {
			return false, fmt.Errorf("wait for multipath map %s: %s holds the paths with WWID %s", wwid, mp.Device, mp.WWID)
		}
		if m.mpd.gone() {
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
		if !m.maps.stillThere(mp) {
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
	err := m.fs.WaitFor(ctx, nil, flushBackoff(m.opts.Backoff), func() (bool, error) {
		if !m.maps.stillThere(mp) {
			return true, nil
		}
		attempt++
		err := m.removeMap(ctx, mp)
		if err == nil || !m.maps.stillThere(mp) {
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
		if m.maps.stillThere(mp) {
			return fmt.Errorf("multipathd del map %s answered %q, but %s is still there", mp.Name, reply, mp.DevPath())
		}
		return nil
	}
	if err == nil {
		m.log.Debug("multipathd del map refused; running multipath -f", "map", mp.Name, "reply", ident.Clip(reply, 200))
	} else if !errors.Is(err, ErrNoSocket) {
		m.log.Debug("multipathd del map failed; running multipath -f", "map", mp.Name, "err", err.Error())
	}
	if _, err = m.run(ctx, "multipath", "-f", mp.Name); err == nil && m.maps.stillThere(mp) {
		return fmt.Errorf("multipath -f %s succeeded, but %s is still there", mp.Name, mp.DevPath())
	}
	return err
}

// flushBackoff is b with the paces of flush retries where b has none.
func flushBackoff(b host.Backoff) host.Backoff {
	if b.Min <= 0 {
		b.Min = 100 * time.Millisecond
	}
	if b.Max <= 0 {
		b.Max = 2 * time.Second
	}
	return b
}

// WaitForPaths waits, within MapTimeout, until the map holds at least n
// paths: multipathd often creates a map with its first path and adds the
// others a moment later. It returns the map as last seen and whether it
// reached n; a path that never joins is for the caller to judge.
func (m *Multipath) WaitForPaths(ctx context.Context, mp *Map, n int) (*Map, bool) {
	ctx, cancel := context.WithTimeout(ctx, m.opts.MapTimeout)
	defer cancel()
	_ = m.fs.WaitFor(ctx, []string{"/dev"}, m.opts.Backoff, func() (bool, error) {
		if cur, err := m.maps.Map(mp.Device); err == nil && cur.WWID == mp.WWID {
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
