package multipath

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/brick-storage/brick/ident"
)

// Disks is what Teardown needs of the SCSI layer (*scsi.SCSI has it): the
// in-use check and the removal of the path devices.
type Disks interface {
	CheckNotInUse(devs ...string) error
	Delete(ctx context.Context, name string) error
	WaitGone(ctx context.Context, names ...string) error
}

// Volume is what one SCSI volume has on the host: its path disks and the
// map over them.
type Volume struct {
	// Disks are the path disks ("sdb"), sorted.
	Disks []string
	// Map is the multipath map over the disks; nil without one.
	Map *Map
	// WWID is what Teardown forgets in the wwids file: the map's, else the
	// one the caller knew; "" for none.
	WWID string
}

// FindVolume returns the volume made of disks: the map over them (through
// their holders), else the map with the given WWID (its paths may be gone
// already), when wwid is not "".
func (m *Multipath) FindVolume(disks []string, wwid string) Volume {
	v := Volume{Disks: slices.Sorted(slices.Values(disks)), WWID: wwid}
	if len(v.Disks) > 0 {
		if mp, err := m.maps.MapOf(v.Disks...); err == nil {
			v.Map = mp
		}
	}
	if v.Map == nil && wwid != "" {
		if mp, err := m.maps.MapByWWID(wwid); err == nil {
			v.Map = mp
		}
	}
	if v.Map != nil {
		v.WWID = v.Map.WWID
	}
	return v
}

// DevicePaths lists the volume's devices: the map first when there is one,
// then each path.
func (v Volume) DevicePaths() []string {
	var out []string
	if v.Map != nil {
		out = append(out, v.Map.DevPath())
	}
	for _, d := range v.Disks {
		out = append(out, "/dev/"+d)
	}
	return out
}

// Teardown takes a volume away in an order that loses nothing: refuse
// while it is in use (unless force), write the map's or the disks' buffers
// out, remove the map, delete every path disk and wait for them to go, and
// forget the WWID. Without force the first failure stops it; a volume
// already gone is success.
func (m *Multipath) Teardown(ctx context.Context, disks Disks, v Volume, force bool) error {
	if err := m.checkNotInUse(disks, v, force); err != nil {
		return err
	}
	held, err := m.flushVolume(ctx, v, force)
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range v.Disks {
		if err := disks.Delete(ctx, d); err != nil {
			errs = append(errs, err)
		}
	}
	if err := disks.WaitGone(ctx, v.Disks...); err != nil {
		errs = append(errs, err)
	}
	if held {
		m.RemoveWhenClosed(ctx, v.Map)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if v.WWID != "" && m.wwids.Known(v.WWID) {
		if err := m.wwids.Remove(ctx, v.WWID); err != nil {
			m.log.Warn("detach: could not forget the multipath WWID", "err", err.Error())
		}
	}
	return nil
}

// checkNotInUse refuses a volume that is mounted, has something stacked on
// it or is held open; forced, it only warns.
func (m *Multipath) checkNotInUse(disks Disks, v Volume, force bool) error {
	devs := v.Disks
	if v.Map != nil {
		devs = []string{v.Map.Device}
	}
	err := disks.CheckNotInUse(devs...)
	if err == nil {
		return nil
	}
	if !force {
		return fmt.Errorf("%w (use --force to detach anyway, losing unwritten data)", err)
	}
	m.log.Warn("detach: device in use; detaching anyway (--force)", "err", err.Error())
	return nil
}

// flushVolume writes the buffers out and removes the map (Remove), or
// writes each disk's buffers out when there is no map.
func (m *Multipath) flushVolume(ctx context.Context, v Volume, force bool) (held bool, err error) {
	if v.Map != nil {
		return m.Remove(ctx, v.Map, force)
	}
	for _, d := range v.Disks {
		if err := m.flushBuffers(ctx, d); err != nil {
			if !force {
				return false, err
			}
			m.log.Warn("detach: flush failed; continuing (--force)", "err", err.Error())
		}
	}
	return false, nil
}

// flushBuffers writes the buffers of a disk ("sdb") or map ("dm-3") out,
// within Options.CommandTimeout (or ctx). A device already gone has nothing
// to flush.
func (m *Multipath) flushBuffers(ctx context.Context, name string) error {
	if !ident.DiskName(name) && !ident.DMName(name) {
		return fmt.Errorf("flush %q: not a disk name", name)
	}
	dev := "/dev/" + name
	if !m.fs.Exists(dev) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, m.opts.CommandTimeout)
	defer cancel()
	start := time.Now()
	err := m.block.FlushBuffersContext(ctx, dev)
	m.log.Debug("flush buffers", "device", dev, "took", time.Since(start).Round(time.Millisecond))
	if err == nil || errors.Is(err, fs.ErrNotExist) || !m.fs.Exists("/sys/block/"+name) && !m.fs.Exists(dev) {
		return nil
	}
	return fmt.Errorf("flush %s: %w", dev, err)
}
