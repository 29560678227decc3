package multipath

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
)

// ErrPathDown means a path of the volume is not usable. Growing then is
// refused: a map resized over a path that still reports the old size lets
// I/O beyond that size fail or land on stale data (docs/extend.md).
var ErrPathDown = errors.New("path not running")

// ErrSizeMismatch means the paths, or the paths and the map, do not agree
// on the volume's size after a rescan.
var ErrSizeMismatch = errors.New("sizes disagree")

// Growth is what Grow did: the volume's size before and after, in bytes.
// Its fields are connector.Resize's, so the SCSI connectors convert it to
// their Extend's result as it is.
type Growth struct {
	// Device is what the user opens: the map's /dev/dm-N, else the first
	// path's /dev/sdX.
	Device  string
	OldSize int64
	NewSize int64
}

// Grow makes the host see a volume's new size: it refuses when any path
// is not running (naming it), rescans every path, waits (bounded) until
// they all report one size, resizes the map through multipathd and checks
// the map reports that size too. Growing a volume already at its size
// does nothing and succeeds, so a run cut short can be repeated. With want
// > 0 (the size the backend reports, in bytes) the paths must reach at
// least that size. On an error the map keeps its old size and stays usable.
func (m *Multipath) Grow(ctx context.Context, v Volume, want int64) (*Growth, error) {
	return m.grow.run(ctx, v, want)
}

// grower is Grow's part: rescans, size checks and the map's resize.
type grower struct {
	*deps
	maps Maps
	mpd  Multipathd
}

func (g grower) run(ctx context.Context, v Volume, want int64) (*Growth, error) {
	disks := v.Disks
	if v.Map != nil {
		disks = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(v.Disks), v.Map.Paths...))))
	}
	if len(disks) == 0 {
		return nil, errors.New("grow: no device of the volume on this host: no path to rescan")
	}
	if err := g.checkPathsRunning(ctx, v, disks); err != nil {
		return nil, err
	}
	out := &Growth{Device: v.DevicePaths()[0]}
	first := disks[0]
	if v.Map != nil {
		first = v.Map.Device
	}
	old, err := g.block.Size(first)
	if err != nil {
		return nil, fmt.Errorf("grow: %w", err)
	}
	out.OldSize = old
	start := time.Now()
	if err := g.rescanAll(disks); err != nil {
		return nil, err
	}
	rescanned := time.Now()
	if out.NewSize, err = g.waitSameSize(ctx, disks, want); err != nil {
		return nil, err
	}
	g.log.Debug("grow: paths rescanned", "paths", strings.Join(disks, ","), "old", old, "new", out.NewSize,
		"rescan", rescanned.Sub(start).Round(time.Millisecond).String(), "agree", time.Since(rescanned).Round(time.Millisecond).String())
	if v.Map != nil {
		if err := g.resizeMap(ctx, v.Map, out.NewSize); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// rescanAll rescans every path at once. A rescan is a synchronous round
// of SCSI commands to the path's target (READ CAPACITY, the VPD pages), so
// one after the other they add up; side by side their round trips overlap.
func (g grower) rescanAll(disks []string) error {
	errs := make([]error, len(disks))
	var wg sync.WaitGroup
	for i, d := range disks {
		wg.Go(func() {
			if err := g.fs.WriteFile("/sys/block/"+d+"/device/rescan", []byte("1")); err != nil {
				errs[i] = fmt.Errorf("grow: rescan %s: %w", d, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// checkPathsRunning refuses when a path's SCSI device is offline (or
// being deleted), or stays not "running" or, with a map, failed in
// multipathd past MapTimeout: a session in recovery (blocked) or a path
// multipathd's checker has not reinstated yet comes back by itself, as
// after a target re-created for the new size. multipathd may also stay
// silent for a while during that recovery (it reloads maps with I/O
// queued): a query it does not answer, or one the wait's end cuts short,
// is not a verdict; the refusal names the last path seen down.
func (g grower) checkPathsRunning(ctx context.Context, v Volume, disks []string) error {
	for _, d := range disks {
		if !ident.DiskName(d) {
			return fmt.Errorf("grow: %q is not a disk name", d)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, g.opts.MapTimeout)
	defer cancel()
	var down, silent error
	err := g.fs.WaitFor(ctx, nil, g.opts.Backoff, func() (bool, error) {
		if d, err := g.pathDownInSysfs(disks); d != nil || err != nil {
			down = d
			return false, err
		}
		if v.Map == nil {
			return true, nil
		}
		d, err := g.pathFailedInMultipathd(ctx, v.Map)
		silent = nil
		if errors.Is(err, errSilent) {
			silent = err
			return false, nil
		}
		if d != nil {
			down = d
		}
		return d == nil && err == nil, err
	})
	if err == nil || !errors.Is(err, host.ErrWaitTimeout) {
		return err
	}
	switch {
	case down != nil:
		return down
	case silent != nil:
		return fmt.Errorf("grow %s: %w: cannot confirm every path is up, %w", v.Map.Name, ErrPathDown, silent)
	}
	return fmt.Errorf("grow: paths not confirmed running within %s: %w", g.opts.MapTimeout, err)
}

// pathDownInSysfs returns ErrPathDown (wrapped, naming the path) for a path
// that is recovering, and an error for one that will not come back.
func (g grower) pathDownInSysfs(disks []string) (down, err error) {
	for _, d := range disks {
		state, err := g.fs.ReadString("/sys/block/" + d + "/device/state")
		if err != nil {
			return nil, fmt.Errorf("grow: state of path %s: %w", d, err)
		}
		switch state {
		case "running":
		case "blocked", "created", "quiesce":
			return fmt.Errorf("grow: path %s stayed %s: %w; bring it back (or remove it) first", d, state, ErrPathDown), nil
		default:
			return nil, fmt.Errorf("grow: path %s is %s: %w; bring it back (or remove it) first", d, ident.Clip(state, 40), ErrPathDown)
		}
	}
	return nil, nil
}

// errSilent marks a path-state query multipathd did not answer in time.
var errSilent = errors.New("multipathd did not answer")

// pathFailedInMultipathd returns ErrPathDown (wrapped) for a path of mp
// that multipathd does not hold active. Each query gets a third of
// MapTimeout, so a silent multipathd is asked again within the wait.
func (g grower) pathFailedInMultipathd(ctx context.Context, mp *Map) (down, err error) {
	qctx, cancel := context.WithTimeout(ctx, g.opts.MapTimeout/3)
	defer cancel()
	states, err := g.pathStates(qctx)
	if err != nil && qctx.Err() != nil {
		return nil, fmt.Errorf("%w since: %w", errSilent, err)
	}
	if err != nil {
		return nil, fmt.Errorf("grow %s: %w", mp.Name, err)
	}
	for _, d := range mp.Paths {
		if s, ok := states[d]; ok && s != "active" {
			return fmt.Errorf("grow %s: multipathd holds path %s %s: %w; reinstate it first", mp.Name, d, ident.Clip(s, 40), ErrPathDown), nil
		}
	}
	return nil, nil
}

// pathStates asks multipathd for each path's device-mapper state
// ("active", "failed").
func (g grower) pathStates(ctx context.Context) (map[string]string, error) {
	reply, err := g.mpd.command(ctx, "show", "paths", "raw", "format", "%d:%t")
	if err != nil {
		return nil, fmt.Errorf("path states: %w", err)
	}
	return ParsePathStates(reply), nil
}

// ParsePathStates reads "sdb:active" lines (multipathd's "show paths raw
// format %d:%t"); lines that do not name a disk are skipped.
func ParsePathStates(reply string) map[string]string {
	out := map[string]string{}
	for line := range strings.SplitSeq(reply, "\n") {
		dev, state, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && ident.DiskName(dev) && len(out) < 4096 {
			out[dev] = strings.TrimSpace(state)
		}
	}
	return out
}

// waitSameSize waits, within CommandTimeout, until every disk reports the
// same non-zero size, at least want, after its rescan, and returns it.
func (g grower) waitSameSize(ctx context.Context, disks []string, want int64) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, g.opts.CommandTimeout)
	defer cancel()
	var seen []string
	var size int64
	err := g.fs.WaitFor(ctx, nil, g.opts.Backoff, func() (bool, error) {
		seen, size = seen[:0], 0
		same := true
		for _, d := range disks {
			n, err := g.block.Size(d)
			if err != nil {
				return false, err
			}
			seen = append(seen, fmt.Sprintf("%s %d", d, n))
			same = same && n > 0 && n >= want && (size == 0 || n == size)
			size = n
		}
		return same, nil
	})
	if err != nil {
		if want > 0 {
			return 0, fmt.Errorf("grow: after the rescan (%s, want %d): %w: %w", strings.Join(seen, ", "), want, ErrSizeMismatch, err)
		}
		return 0, fmt.Errorf("grow: after the rescan (%s): %w: %w", strings.Join(seen, ", "), ErrSizeMismatch, err)
	}
	return size, nil
}

// resizeMap makes multipathd reload the map at its paths' size and waits
// (bounded) until the map reports want bytes. A map already at that size
// is left alone.
func (g grower) resizeMap(ctx context.Context, mp *Map, want int64) error {
	if cur, err := g.block.Size(mp.Device); err == nil && cur == want {
		return nil
	}
	start := time.Now()
	if _, err := g.mpd.command(ctx, "resize", "map", mp.Name); err != nil {
		return fmt.Errorf("grow: resize map %s (%s): %w", mp.Name, mp.Device, err)
	}
	ctx, cancel := context.WithTimeout(ctx, g.opts.CommandTimeout)
	defer cancel()
	var got int64
	err := g.fs.WaitFor(ctx, nil, g.opts.Backoff, func() (bool, error) {
		n, err := g.block.Size(mp.Device)
		got = n
		return err == nil && n == want, err
	})
	if err != nil {
		return fmt.Errorf("grow: map %s (%s) reports %d bytes, its paths %d: %w: %w", mp.Name, mp.Device, got, want, ErrSizeMismatch, err)
	}
	g.log.Debug("grow: map resized", "map", mp.Device, "size", want, "took", time.Since(start).Round(time.Millisecond).String())
	return nil
}
