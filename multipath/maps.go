package multipath

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
)

// Maps reads the multipath maps, and the disks beneath them, that sysfs
// shows; it runs nothing and changes nothing.
type Maps struct {
	fs host.FS
}

// NewMaps returns the maps of the host whose files fsys reaches.
func NewMaps(fsys host.FS) Maps { return Maps{fs: fsys} }

// DMDevice is a device-mapper device as sysfs shows it: a multipath map
// (UUID "mpath-..."), a dm-crypt mapping ("CRYPT-...") or another.
type DMDevice struct {
	Name   string   `json:"name"`    // dm-N
	DMName string   `json:"dm_name"` // /dev/mapper/<DMName>
	UUID   string   `json:"uuid"`
	Slaves []string `json:"slaves"` // the devices beneath, sorted
	// ReadOnly is /sys/block/dm-N/ro.
	ReadOnly bool `json:"-"`
}

// Multipath reports whether d is a multipath map, and its WWID.
func (d DMDevice) Multipath() (string, bool) { return strings.CutPrefix(d.UUID, "mpath-") }

// Crypt reports whether d is a dm-crypt mapping.
func (d DMDevice) Crypt() bool { return strings.HasPrefix(d.UUID, "CRYPT-") }

// DM reads what sysfs knows about device-mapper device dm ("dm-3"); an
// error wrapping fs.ErrNotExist when it is gone.
func (s Maps) DM(dm string) (DMDevice, error) {
	if !ident.DMName(dm) {
		return DMDevice{}, fmt.Errorf("dm device %q: not a dm device name", dm)
	}
	base := "/sys/block/" + dm
	d := DMDevice{Name: dm}
	var err error
	if d.UUID, err = s.fs.ReadString(base + "/dm/uuid"); err != nil {
		return d, fmt.Errorf("dm device %s: %w", dm, err)
	}
	if d.DMName, err = s.fs.ReadString(base + "/dm/name"); err != nil {
		return d, fmt.Errorf("dm device %s: %w", dm, err)
	}
	if entries, err := s.fs.ReadDir(base + "/slaves"); err == nil {
		for _, e := range entries {
			d.Slaves = append(d.Slaves, e.Name())
		}
	}
	if ro, err := s.fs.ReadString(base + "/ro"); err == nil {
		d.ReadOnly = ro == "1"
	}
	return d, nil
}

// ListDM lists the host's device-mapper devices, sorted by name; one that
// goes while being read is left out.
func (s Maps) ListDM() ([]DMDevice, error) {
	read := func(name string) (DMDevice, bool) {
		d, err := s.DM(name)
		return d, err == nil
	}
	devs, err := host.ReadEntries(s.fs, "/sys/block", ident.DMName, read)
	if err != nil {
		return nil, fmt.Errorf("list dm devices: %w", err)
	}
	return devs, nil
}

// Map reads what sysfs knows about a dm device; ErrNoMap when it does not
// exist or is not a multipath map.
func (s Maps) Map(dm string) (*Map, error) {
	dm = strings.TrimPrefix(dm, "/dev/")
	if !ident.DMName(dm) {
		return nil, fmt.Errorf("multipath map %q: not a dm device name", dm)
	}
	d, err := s.DM(dm)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && d.UUID == "" {
			return nil, fmt.Errorf("multipath map %s: %w", dm, ErrNoMap)
		}
		return nil, fmt.Errorf("multipath map %s: %w", dm, errors.Unwrap(err))
	}
	wwid, ok := d.Multipath()
	if !ok {
		return nil, fmt.Errorf("multipath map %s: dm uuid %q is not multipath's: %w", dm, d.UUID, ErrNoMap)
	}
	return &Map{Device: dm, Name: d.DMName, WWID: wwid, Paths: d.Slaves, ReadOnly: d.ReadOnly}, nil
}

// MapOf returns the multipath map stacked on any of the given disks
// ("sdb" or "/dev/sdb"), found through /sys/block/<disk>/holders, or an
// error wrapping ErrNoMap.
func (s Maps) MapOf(disks ...string) (*Map, error) {
	for _, d := range disks {
		d = strings.TrimPrefix(d, "/dev/")
		if !ident.DiskName(d) {
			return nil, fmt.Errorf("multipath map of %q: not a disk name", d)
		}
		entries, err := s.fs.ReadDir("/sys/block/" + d + "/holders")
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !ident.DMName(e.Name()) {
				continue
			}
			if mp, err := s.Map(e.Name()); err == nil {
				return mp, nil
			}
		}
	}
	return nil, fmt.Errorf("multipath map over %s: %w", strings.Join(disks, ", "), ErrNoMap)
}

// MapByWWID finds the multipath map with the given WWID by its dm uuid, or
// returns an error wrapping ErrNoMap.
func (s Maps) MapByWWID(wwid string) (*Map, error) {
	if !ident.WWID(wwid) {
		return nil, fmt.Errorf("multipath map of WWID %q: invalid WWID", wwid)
	}
	// The udev link is the fast path; sysfs covers hosts without udev.
	if target, err := s.fs.EvalSymlinks("/dev/disk/by-id/dm-uuid-mpath-" + wwid); err == nil {
		if mp, err := s.Map(strings.TrimPrefix(target, "/dev/")); err == nil && mp.WWID == wwid {
			return mp, nil
		}
	}
	// One listing and one read per dm device: cheaper than a glob of
	// /sys/block/dm-*/dm/uuid (BenchmarkMapLookup500).
	entries, err := s.fs.ReadDir("/sys/block")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("multipath map of WWID %s: %w", wwid, err)
	}
	for _, e := range entries {
		dm := e.Name()
		if !strings.HasPrefix(dm, "dm-") || !ident.DMName(dm) {
			continue
		}
		uuid, err := s.fs.ReadString("/sys/block/" + dm + "/dm/uuid")
		if err != nil || uuid != "mpath-"+wwid {
			continue
		}
		return s.Map(dm)
	}
	return nil, fmt.Errorf("multipath map of WWID %s: %w", wwid, ErrNoMap)
}

// stillThere reports whether the map still exists under the same identity.
func (s Maps) stillThere(mp *Map) bool {
	cur, err := s.Map(mp.Device)
	return err == nil && cur.WWID == mp.WWID
}

// held reports whether something (a map) holds the disk already.
func (s Maps) held(disk string) bool {
	disk = strings.TrimPrefix(disk, "/dev/")
	if !ident.DiskName(disk) {
		return false
	}
	entries, err := s.fs.ReadDir("/sys/block/" + disk + "/holders")
	return err == nil && len(entries) > 0
}
