package iscsi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/multipath"
	"github.com/brick-storage/brick/scsi"
)

// attached is what is on the host for a volume.
type attached struct {
	vol      multipath.Volume  // the disks of the volume on every session, and their map
	sessions []Session         // sessions that carry a path, or that info names
	records  map[Target]bool   // node records that exist for info's targets
	hctl     map[string]string // disk -> H:C:T:L, for messages
	iface    string            // the open-iscsi interface of info's records
}

// wanted is what a volume's connection info names: the LUNs per target IQN
// and the (portal, IQN) pairs.
type wanted struct {
	luns  map[string]map[int]bool
	named map[Target]bool
}

func wantedBy(info *Info) wanted {
	w := wanted{luns: map[string]map[int]bool{}, named: map[Target]bool{}}
	for _, t := range info.Targets {
		if w.luns[t.IQN] == nil {
			w.luns[t.IQN] = map[int]bool{}
		}
		w.luns[t.IQN][t.LUN] = true
		w.named[Target{Portal: t.Portal, IQN: t.IQN}] = true
	}
	return w
}

// find looks up the volume's sessions, disks and map from sysfs. With dev
// (what Connect returned) the disks are also checked against its WWN, so a
// LUN number reused by another volume is never taken away.
func (c *Connector) find(info *Info, dev *connector.Device) (*attached, error) {
	all, err := ListSessions(c.h.FS)
	if err != nil {
		return nil, err
	}
	want := wantedBy(info)
	a := &attached{records: map[Target]bool{}, hctl: map[string]string{}, iface: info.Iface}
	var disks []string
	for _, s := range all {
		if want.luns[s.Target] == nil {
			continue
		}
		mine, err := c.volumeDisks(s, want.luns[s.Target], dev, a.hctl)
		if err != nil {
			return nil, err
		}
		// A session matters if it carries our LUN, or if it is one of the
		// portals info names (a leftover of a failed connect).
		if len(mine) > 0 || want.named[Target{Portal: s.Portal, IQN: s.Target}] {
			a.sessions = append(a.sessions, s)
			disks = append(disks, mine...)
		}
	}
	a.vol = c.mp.FindVolume(disks, multipathID(dev))
	for key := range want.named {
		if files, err := recordFiles(c.h.FS, key.IQN, key.Portal, info.Iface); err == nil && len(files) > 0 {
			a.records[key] = true
		}
	}
	return a, nil
}

// volumeDisks returns the session's disks at the volume's LUNs, leaving out
// any that now shows another volume than dev, and notes their addresses.
func (c *Connector) volumeDisks(s Session, luns map[int]bool, dev *connector.Device, hctl map[string]string) ([]string, error) {
	disks, err := sessionDisks(c.h.FS, s, slices.Sorted(maps.Keys(luns))...)
	if err != nil {
		return nil, err
	}
	var mine []string
	for disk, addr := range disks {
		if !luns[addr.LUN] || dev != nil && c.scsi.ShowsOther(disk, scsi.Identity{WWID: dev.WWN, Serial: dev.Extra[connector.ExtraUnitSerial]}) {
			continue
		}
		mine = append(mine, disk)
		hctl[disk] = addr.String()
	}
	return mine, nil
}

// multipathID is the map WWID dev carries, "" without dev.
func multipathID(dev *connector.Device) string {
	if dev == nil {
		return ""
	}
	return dev.MultipathID
}

// DevicePaths returns the volume's devices present on the host: the map
// first when there is one, then each path.
func (c *Connector) DevicePaths(ctx context.Context, ci connector.ConnectionInfo) ([]string, error) {
	info, err := c.parse(ci)
	if err != nil {
		return nil, err
	}
	c.resolveForLookup(ctx, info)
	a, err := c.find(info, nil)
	if err != nil {
		return nil, err
	}
	return a.vol.DevicePaths(), nil
}

// Disconnect takes the volume away (multipath.Teardown: refuse while in
// use unless Force, flush, remove the map, delete the SCSI devices, forget
// the WWID), then logs out of each session no other LUN uses (deleting its
// node record). A volume that is not attached is success.
func (c *Connector) Disconnect(ctx context.Context, ci connector.ConnectionInfo, dev *connector.Device, opts connector.DisconnectOptions) error {
	return c.onAttached(ctx, "iscsi disconnect", ci, dev, func(a *attached) error {
		c.log.Debug("iscsi disconnect", "disks", strings.Join(a.vol.Disks, ","), "sessions", len(a.sessions), "map", a.vol.Map != nil)
		if err := c.mp.Teardown(ctx, c.scsi, a.vol, opts.Force); err != nil {
			return err
		}
		return c.logoutUnused(ctx, a)
	})
}

// onAttached parses ci, takes its targets' locks, finds what of the volume
// the host has and runs fn on it under the locks: what Disconnect and
// Extend do. Errors past the parse name op.
func (c *Connector) onAttached(ctx context.Context, op string, ci connector.ConnectionInfo, dev *connector.Device, fn func(*attached) error) error {
	info, err := c.parse(ci)
	if err != nil {
		return err
	}
	c.resolveForLookup(ctx, info)
	unlock, err := c.lockTargets(ctx, info.IQNs())
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer unlock()
	a, err := c.find(info, dev)
	if err == nil {
		err = fn(a)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// logoutUnused logs out of each session of the volume that no other LUN
// uses any more, and deletes node records of info's targets that have no
// session left. Other volumes on a shared target keep their session.
func (c *Connector) logoutUnused(ctx context.Context, a *attached) error {
	var (
		mu        sync.Mutex
		errs      []error
		loggedOut = map[Target]bool{}
		wg        sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for _, s := range a.sessions {
		disks, err := sessionDisks(c.h.FS, s)
		if err != nil {
			fail(err)
			continue
		}
		if len(disks) > 0 {
			c.log.Debug("iscsi: session still carries other LUNs; staying logged in", "session", s.ID, "target", s.Target, "luns", len(disks))
			continue
		}
		// Sessions are independent: log out of all of them at once.
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.adm.logout(ctx, s.Target, s.Portal, s.Iface); err != nil {
				fail(err)
				return
			}
			mu.Lock()
			loggedOut[Target{Portal: s.Portal, IQN: s.Target}] = true
			mu.Unlock()
			if err := c.nodes.delete(ctx, s.Target, s.Portal, s.Iface); err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	// Records without a session: leftovers of this volume's connect.
	sessions, _ := ListSessions(c.h.FS)
	for key := range a.records {
		if loggedOut[key] {
			continue
		}
		if _, live := findSession(sessions, key.IQN, key.Portal); live {
			continue
		}
		if err := c.nodes.delete(ctx, key.IQN, key.Portal, a.iface); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Extend grows an attached iSCSI volume on this host (multipath.Grow):
// every path rescanned, refused while one is not running, then the map
// resized through multipathd. The target lock keeps a concurrent connect or
// disconnect of the same targets out.
func (c *Connector) Extend(ctx context.Context, ci connector.ConnectionInfo, dev *connector.Device, newSize int64) (*connector.Resize, error) {
	var g *multipath.Growth
	err := c.onAttached(ctx, "iscsi extend", ci, dev, func(a *attached) (err error) {
		g, err = c.mp.Grow(ctx, a.vol, newSize)
		return err
	})
	return (*connector.Resize)(g), err
}
