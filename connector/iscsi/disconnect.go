package iscsi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/multipath"
)

// attached is what is on the host for a volume.
type attached struct {
	disks    []string          // sdX of the volume on every session
	sessions []Session         // sessions that carry a path, or that info names
	bySess   map[int][]string  // session ID -> its disks of this volume
	mp       *multipath.Map    // the map over the disks, if any
	records  map[Target]bool   // node records that exist for info's targets
	hctl     map[string]string // disk -> H:C:T:L, for messages
}

// find looks up the volume's sessions, disks and map from sysfs. With dev
// (what Connect returned) the disks are also checked against its WWN, so a
// LUN number reused by another volume is never taken away.
func (c *Connector) find(info *Info, dev *connector.Device) (*attached, error) {
	all, err := ListSessions(c.h.FS)
	if err != nil {
		return nil, err
	}
	wantIQN := map[string]bool{}
	luns := map[string]map[int]bool{}
	named := map[Target]bool{}
	for _, t := range info.Targets {
		wantIQN[t.IQN] = true
		if luns[t.IQN] == nil {
			luns[t.IQN] = map[int]bool{}
		}
		luns[t.IQN][t.LUN] = true
		named[Target{Portal: t.Portal, IQN: t.IQN}] = true
	}
	a := &attached{bySess: map[int][]string{}, records: map[Target]bool{}, hctl: map[string]string{}}
	for _, s := range all {
		if !wantIQN[s.Target] {
			continue
		}
		disks, err := sessionDisks(c.h.FS, s, slices.Sorted(maps.Keys(luns[s.Target]))...)
		if err != nil {
			return nil, err
		}
		var mine []string
		for disk, addr := range disks {
			if !luns[s.Target][addr.LUN] {
				continue
			}
			if dev != nil && dev.WWN != "" {
				if w, err := c.scsi.WWID(disk); err == nil && w != dev.WWN {
					c.log.Warn("iscsi: LUN now shows another volume; leaving it alone", "disk", disk, "wwid", w, "want", dev.WWN)
					continue
				}
			}
			mine = append(mine, disk)
			a.hctl[disk] = addr.String()
		}
		sort.Strings(mine)
		// A session matters if it carries our LUN, or if it is one of the
		// portals info names (a leftover of a failed connect).
		if len(mine) > 0 || named[Target{Portal: s.Portal, IQN: s.Target}] {
			a.sessions = append(a.sessions, s)
			a.bySess[s.ID] = mine
			a.disks = append(a.disks, mine...)
		}
	}
	sort.Strings(a.disks)
	if len(a.disks) > 0 {
		if mp, err := c.mp.MapOf(a.disks...); err == nil {
			a.mp = mp
		}
	}
	if a.mp == nil && dev != nil && dev.MultipathID != "" {
		if mp, err := c.mp.MapByWWID(dev.MultipathID); err == nil {
			a.mp = mp
		}
	}
	for _, t := range info.Targets {
		files, err := recordFiles(c.h.FS, t.IQN, t.Portal)
		if err == nil && len(files) > 0 {
			a.records[Target{Portal: t.Portal, IQN: t.IQN}] = true
		}
	}
	return a, nil
}

// DevicePaths returns the volume's devices present on the host: the map
// first when there is one, then each path.
func (c *Connector) DevicePaths(ctx context.Context, ci connector.ConnectionInfo) ([]string, error) {
	info, err := c.parse(ci)
	if err != nil {
		return nil, err
	}
	a, err := c.find(info, nil)
	if err != nil {
		return nil, err
	}
	var out []string
	if a.mp != nil {
		out = append(out, a.mp.DevPath())
	}
	return append(out, devPaths(a.disks)...), nil
}

// Disconnect takes the volume away in an order that loses nothing: refuse
// while it is in use (unless Force), flush the map or disk, remove the map,
// delete the SCSI devices and wait for them to go, forget the WWID, and log
// out of each session no other LUN uses (deleting its node record). A
// volume that is not attached is success.
func (c *Connector) Disconnect(ctx context.Context, ci connector.ConnectionInfo, dev *connector.Device, opts connector.DisconnectOptions) error {
	info, err := c.parse(ci)
	if err != nil {
		return err
	}
	unlock, err := c.lockTargets(ctx, info.IQNs())
	if err != nil {
		return fmt.Errorf("iscsi disconnect: %w", err)
	}
	defer unlock()
	a, err := c.find(info, dev)
	if err != nil {
		return fmt.Errorf("iscsi disconnect: %w", err)
	}
	c.log.Debug("iscsi disconnect", "disks", strings.Join(a.disks, ","), "sessions", len(a.sessions), "map", a.mp != nil)

	if err := c.checkNotInUse(a); err != nil {
		if !opts.Force {
			return fmt.Errorf("iscsi disconnect: %w (use --force to detach anyway, losing unwritten data)", err)
		}
		c.log.Warn("iscsi: device in use; detaching anyway (--force)", "err", err.Error())
	}
	heldMap := false
	if a.mp != nil {
		if heldMap, err = c.mp.Remove(ctx, a.mp, opts.Force, c.scsi.Flush); err != nil {
			return fmt.Errorf("iscsi disconnect: %w", err)
		}
	} else {
		for _, d := range a.disks {
			if err := c.scsi.Flush(ctx, d); err != nil {
				if !opts.Force {
					return fmt.Errorf("iscsi disconnect: %w", err)
				}
				c.log.Warn("iscsi: flush failed; continuing (--force)", "err", err.Error())
			}
		}
	}
	var errs []error
	for _, d := range a.disks {
		if err := c.scsi.Delete(ctx, d); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.scsi.WaitGone(ctx, a.disks...); err != nil {
		errs = append(errs, err)
	}
	if heldMap {
		c.mp.RemoveWhenClosed(ctx, a.mp)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("iscsi disconnect: %w", err)
	}
	wwid := ""
	switch {
	case a.mp != nil:
		wwid = a.mp.WWID
	case dev != nil && dev.MultipathID != "":
		wwid = dev.MultipathID
	}
	// Forgetting the WWID and logging out are independent; overlap them.
	var wg sync.WaitGroup
	if wwid != "" && c.wwidKnown(wwid) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.mp.RemoveWWID(ctx, wwid); err != nil {
				c.log.Warn("iscsi: could not forget the multipath WWID", "err", err.Error())
			}
		}()
	}
	err = c.logoutUnused(ctx, info, a)
	wg.Wait()
	return err
}

// checkNotInUse refuses a device that is mounted, has something stacked on
// it (LVM, a partition's holder) or is held open exclusively.
func (c *Connector) checkNotInUse(a *attached) error {
	var devs []string
	if a.mp != nil {
		devs = []string{a.mp.Device}
	} else {
		devs = a.disks
	}
	return c.scsi.CheckNotInUse(devs...)
}

// logoutUnused logs out of each session of the volume that no other LUN
// uses any more, and deletes node records of info's targets that have no
// session left. Other volumes on a shared target keep their session.
func (c *Connector) logoutUnused(ctx context.Context, info *Info, a *attached) error {
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
			if err := c.adm.logout(ctx, s.Target, s.Portal); err != nil {
				fail(err)
				return
			}
			mu.Lock()
			loggedOut[Target{Portal: s.Portal, IQN: s.Target}] = true
			mu.Unlock()
			if err := c.deleteRecord(ctx, s.Target, s.Portal); err != nil {
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
		if err := c.deleteRecord(ctx, key.IQN, key.Portal); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("iscsi disconnect: %w", err)
	}
	return nil
}

// deleteRecord removes the node record of iqn at p: brick removes the file
// itself (see removeRecord) and runs "iscsiadm -o delete" only when that
// fails. None is fine.
func (c *Connector) deleteRecord(ctx context.Context, iqn string, p Portal) error {
	// Exclusive, like iscsiadm -o delete (see nodeDBLock); released before
	// the fallback, which takes it again.
	unlock, err := c.h.FS.Lock(ctx, nodeDBLock)
	if err != nil {
		return fmt.Errorf("iscsi delete node record %s@%s: %w", iqn, p, err)
	}
	removed := removeRecord(c.h.FS, iqn, p)
	unlock()
	if removed {
		c.log.Debug("iscsi: node record removed", "target", iqn, "portal", p.String())
		return nil
	}
	return c.adm.deleteNode(ctx, iqn, p)
}
