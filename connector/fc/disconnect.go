package fc

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/multipath"
	"github.com/brick-storage/brick/scsi"
)

// attached is what is on the host for a volume.
type attached struct {
	disks []string          // sdX of the volume on every path
	hctls map[string]string // disk -> H:C:T:L, for messages
	mp    *multipath.Map    // the map over the disks, if any
}

// find looks the volume's devices up in sysfs: the LUN behind each
// requested target port on each HBA (any port state: an offline HBA's
// leftover paths must go too), the by-path links, and the paths dev lists.
// With dev (what Connect returned) every disk's WWID is checked against
// it, so a LUN number now showing another volume is never taken away.
func (c *Connector) find(info *Info, dev *connector.Device) (*attached, error) {
	hbas, err := c.selectHBAs(info, false)
	if err != nil {
		return nil, err
	}
	want := map[Target]bool{}
	for _, t := range info.Targets {
		want[t] = true
	}
	a := &attached{hctls: map[string]string{}}
	consider := func(disk string, addr scsi.HCTL) {
		if _, dup := a.hctls[disk]; dup {
			return
		}
		port, err := targetPortOf(c.h.FS, addr)
		if err != nil || !want[Target{WWPN: port, LUN: addr.LUN}] {
			return
		}
		if dev != nil && dev.WWN != "" {
			if w, err := c.scsi.WWID(disk); err == nil && w != dev.WWN {
				c.log.Warn("fc: LUN now shows another volume; leaving it alone", "disk", disk, "wwid", w, "want", dev.WWN)
				return
			}
		}
		a.hctls[disk] = addr.String()
		a.disks = append(a.disks, disk)
	}
	for _, p := range buildPaths(info, hbas) {
		if port, ok := findRemotePort(c.h.FS, p.hba.Host, p.target.WWPN); ok {
			p.port = port
			names, err := c.scsi.Find(p.addr())
			if err != nil {
				return nil, err
			}
			for _, n := range names {
				consider(n, p.addr())
			}
		}
		if l := p.linkPath(); l != "" {
			if d := diskOfLink(c.h.FS, l); d != "" {
				if addr, err := c.scsi.HCTLOf(d); err == nil {
					consider(d, addr)
				}
			}
		}
	}
	if dev != nil {
		for _, p := range dev.Paths {
			d, err := scsi.DiskName(p)
			if err != nil || !ident.DiskName(d) {
				continue
			}
			if addr, err := c.scsi.HCTLOf(d); err == nil {
				consider(d, addr)
			}
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
// while it is in use (unless Force), flush the map or disks, remove the
// map, delete every path's SCSI device and wait for them to go, and forget
// the WWID. Other LUNs behind the same target ports are not touched. A
// volume that is not attached is success.
func (c *Connector) Disconnect(ctx context.Context, ci connector.ConnectionInfo, dev *connector.Device, opts connector.DisconnectOptions) error {
	info, err := c.parse(ci)
	if err != nil {
		return err
	}
	unlock, err := c.lock(ctx, info)
	if err != nil {
		return fmt.Errorf("fc disconnect: %w", err)
	}
	defer unlock()
	a, err := c.find(info, dev)
	if err != nil {
		return fmt.Errorf("fc disconnect: %w", err)
	}
	var hctls []string
	for _, d := range a.disks {
		hctls = append(hctls, d+"="+a.hctls[d])
	}
	c.log.Debug("fc disconnect", "disks", strings.Join(hctls, ","), "map", a.mp != nil)

	busy := a.disks
	if a.mp != nil {
		busy = []string{a.mp.Device}
	}
	if err := c.scsi.CheckNotInUse(busy...); err != nil {
		if !opts.Force {
			return fmt.Errorf("fc disconnect: %w (use --force to detach anyway, losing unwritten data)", err)
		}
		c.log.Warn("fc: device in use; detaching anyway (--force)", "err", err.Error())
	}
	heldMap := false
	if a.mp != nil {
		if heldMap, err = c.mp.Remove(ctx, a.mp, opts.Force, c.scsi.Flush); err != nil {
			return fmt.Errorf("fc disconnect: %w", err)
		}
	} else {
		for _, d := range a.disks {
			if err := c.scsi.Flush(ctx, d); err != nil {
				if !opts.Force {
					return fmt.Errorf("fc disconnect: %w", err)
				}
				c.log.Warn("fc: flush failed; continuing (--force)", "err", err.Error())
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
		return fmt.Errorf("fc disconnect: %w", err)
	}
	wwid := ""
	switch {
	case a.mp != nil:
		wwid = a.mp.WWID
	case dev != nil && dev.MultipathID != "":
		wwid = dev.MultipathID
	}
	if wwid != "" && c.mp.WWIDKnown(wwid) {
		if err := c.mp.RemoveWWID(ctx, wwid); err != nil {
			c.log.Warn("fc: could not forget the multipath WWID", "err", err.Error())
		}
	}
	return nil
}
