package fc

import (
	"context"
	"fmt"
	"strings"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/multipath"
	"github.com/brick-storage/brick/scsi"
)

// attached is what is on the host for a volume.
type attached struct {
	vol   multipath.Volume  // the disks of the volume on every path, and their map
	hctls map[string]string // disk -> H:C:T:L, for messages
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
	f := finder{c: c, dev: dev, want: map[Target]bool{}, hctls: map[string]string{}}
	for _, t := range info.Targets {
		f.want[t] = true
	}
	for _, p := range buildPaths(info, hbas) {
		if err := f.route(p); err != nil {
			return nil, err
		}
	}
	wwid := ""
	if dev != nil {
		f.devPaths(dev.Paths)
		wwid = dev.MultipathID
	}
	return &attached{vol: c.mp.FindVolume(f.disks, wwid), hctls: f.hctls}, nil
}

// finder collects the disks of a volume, each once.
type finder struct {
	c     *Connector
	dev   *connector.Device
	want  map[Target]bool
	disks []string
	hctls map[string]string
}

// route takes the disks at the route's address and behind its by-path link.
func (f *finder) route(p *route) error {
	if port, ok := findRemotePort(f.c.h.FS, p.hba.Host, p.target.WWPN); ok {
		p.port = port
		names, err := f.c.scsi.Find(p.addr())
		if err != nil {
			return err
		}
		for _, n := range names {
			f.consider(n, p.addr())
		}
	}
	if l := p.linkPath(); l != "" {
		if d := diskOfLink(f.c.h.FS, l); d != "" {
			f.considerDisk(d)
		}
	}
	return nil
}

// devPaths takes the disks a device record lists.
func (f *finder) devPaths(paths []string) {
	for _, p := range paths {
		if d, err := scsi.DiskName(p); err == nil && ident.DiskName(d) {
			f.considerDisk(d)
		}
	}
}

func (f *finder) considerDisk(d string) {
	if addr, err := f.c.scsi.HCTLOf(d); err == nil {
		f.consider(d, addr)
	}
}

// consider takes a disk that sits behind a requested target port at the
// volume's LUN and shows the volume dev names.
func (f *finder) consider(disk string, addr scsi.HCTL) {
	if _, dup := f.hctls[disk]; dup {
		return
	}
	port, err := targetPortOf(f.c.h.FS, addr)
	if err != nil || !f.want[Target{WWPN: port, LUN: addr.LUN}] {
		return
	}
	if f.dev != nil && f.c.scsi.ShowsOther(disk, scsi.Identity{WWID: f.dev.WWN, Serial: f.dev.Extra[connector.ExtraUnitSerial]}) {
		return
	}
	f.hctls[disk] = addr.String()
	f.disks = append(f.disks, disk)
}

// Disconnect takes the volume away (multipath.Teardown: refuse while in
// use unless Force, flush, remove the map, delete every path's SCSI device,
// forget the WWID). Other LUNs behind the same target ports are not
// touched. A volume that is not attached is success.
func (c *Connector) Disconnect(ctx context.Context, ci connector.ConnectionInfo, dev *connector.Device, opts connector.DisconnectOptions) error {
	return c.onAttached(ctx, "fc disconnect", ci, dev, func(a *attached) error {
		var hctls []string
		for _, d := range a.vol.Disks {
			hctls = append(hctls, d+"="+a.hctls[d])
		}
		c.log.Debug("fc disconnect", "disks", strings.Join(hctls, ","), "map", a.vol.Map != nil)
		return c.mp.Teardown(ctx, c.scsi, a.vol, opts.Force)
	})
}

// onAttached parses ci, takes its target ports' locks, finds what of the
// volume the host has and runs fn on it under the locks: what Disconnect
// and Extend do. Errors past the parse name op.
func (c *Connector) onAttached(ctx context.Context, op string, ci connector.ConnectionInfo, dev *connector.Device, fn func(*attached) error) error {
	info, err := c.parse(ci)
	if err != nil {
		return err
	}
	unlock, err := c.lock(ctx, info)
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
	return a.vol.DevicePaths(), nil
}

// Extend grows an attached FC volume on this host (multipath.Grow): every
// path rescanned, refused while one is not running, then the map resized
// through multipathd.
func (c *Connector) Extend(ctx context.Context, ci connector.ConnectionInfo, dev *connector.Device, newSize int64) (*connector.Resize, error) {
	var g *multipath.Growth
	err := c.onAttached(ctx, "fc extend", ci, dev, func(a *attached) (err error) {
		g, err = c.mp.Grow(ctx, a.vol, newSize)
		return err
	})
	return (*connector.Resize)(g), err
}
