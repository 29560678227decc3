package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/connector/nvmeof"
	"github.com/brick-storage/brick/multipath"
)

// Repair orders: unfinished operations first (their devices may be in the
// way), then orphans, then reconnects.
const (
	orderCleanup = iota
	orderOrphan
	orderReconnect
)

// claims are the kernel objects some record accounts for.
type claims struct {
	sessions map[int]bool
	disks    map[string]bool
	dm       map[string]bool
	nvme     map[string]bool
	rbd      map[string]bool
	mounts   map[string]bool
}

func newClaims() claims {
	return claims{sessions: map[int]bool{}, disks: map[string]bool{}, dm: map[string]bool{},
		nvme: map[string]bool{}, rbd: map[string]bool{}, mounts: map[string]bool{}}
}

// check is one Check under way.
type check struct {
	r      *Reconciler
	inv    *Inventory
	claims claims
	cinder timedCinder
	rep    Report
}

// presence is what of one recorded volume the host holds.
type presence struct {
	objects []string // device paths and sessions found
	want    int      // paths Cinder's connection info names (iSCSI)
	up      int      // of those, logged in, scanned and in the map
	lost    []string // what is missing of a present volume
}

func (p presence) any() bool { return len(p.objects) > 0 }

// record classifies one of brick's records.
func (c *check) record(ctx context.Context, rec *attach.Record) {
	f := Finding{VolumeID: rec.VolumeID, Kind: "attachment", Persist: rec.Persist, Object: rec.DevicePath()}
	p := c.presence(ctx, rec)
	f.Paths = p.objects
	id := rec.VolumeID
	if rec.Phase != attach.PhaseAttached {
		f.Status, f.Detail = Interrupted, fmt.Sprintf("%s did not finish (step %s)", opOf(rec.Phase), rec.Step)
		f.Repair, f.order = "brick cleanup: "+cleanupWhat(rec.Phase), orderCleanup
		f.fix = func(ctx context.Context) error {
			res, err := c.r.Attach.Cleanup(ctx, id, false)
			if err == nil && len(res) == 1 && res[0].Err != nil {
				err = res[0].Err
			}
			return err
		}
		c.add(f)
		return
	}
	st := c.cinder.state(ctx, id, rec.HostName)
	switch {
	case st.err != nil:
		f.Status, f.Detail = Unknown, "Cinder: "+st.err.Error()
	case !st.attached:
		c.orphanRecord(&f, p, rec)
	case !p.any():
		f.Status, f.Detail = Missing, fmt.Sprintf("Cinder shows it attached to %s, but no device is here", rec.HostName)
		if rec.Persist {
			f.Repair, f.order, f.fix = "reconnect from Cinder's attachment", orderReconnect, c.reconnect(id)
		} else {
			f.Detail += " (not persistent: attach it again, or local-detach it)"
		}
	case len(p.lost) > 0:
		f.Status, f.Detail = Degraded, degradedDetail(p)
		f.Repair, f.order, f.fix = "log in lost paths, rescan, re-add to the map, re-open and re-mount", orderReconnect, c.reconnect(id)
	default:
		f.Status = Healthy
		if p.want > 0 {
			f.Detail = fmt.Sprintf("%d of %d paths", p.up, p.want)
		}
	}
	c.add(f)
}

func (c *check) orphanRecord(f *Finding, p presence, rec *attach.Record) {
	id := rec.VolumeID
	f.Status = Orphaned
	f.Detail = fmt.Sprintf("Cinder has no attachment of this volume for host %s (deleted, or detached elsewhere)", rec.HostName)
	f.order = orderOrphan
	f.Repair = "drop the record"
	if p.any() {
		f.Repair = "flush and disconnect (refused if mounted or open), drop the record"
	}
	f.fix = func(ctx context.Context) error {
		return c.r.Attach.Suspend(ctx, id, attach.SuspendOptions{Forget: true})
	}
}

func (c *check) reconnect(id string) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := c.r.Attach.Reconnect(ctx, id)
		return err
	}
}

func (c *check) add(f Finding) { c.rep.Findings = append(c.rep.Findings, f) }

func opOf(phase string) string {
	if phase == attach.PhaseDetaching {
		return "local-detach"
	}
	return "local-attach"
}

func cleanupWhat(phase string) string {
	if phase == attach.PhaseDetaching {
		return "finish the detach"
	}
	return "undo the attach"
}

func degradedDetail(p presence) string {
	s := strings.Join(p.lost, "; ")
	if p.want > 0 {
		return fmt.Sprintf("%d of %d paths: %s", p.up, p.want, s)
	}
	return s
}

// presence finds (and claims) what the host holds of a recorded volume.
func (c *check) presence(ctx context.Context, rec *attach.Record) presence {
	var p presence
	if rec.ConnectionInfo == nil {
		return p
	}
	if t := strings.ToLower(rec.ConnectionInfo.DriverVolumeType); t == "iscsi" || t == "iser" {
		if info, err := iscsi.ParseInfo(*rec.ConnectionInfo); err == nil {
			p = c.iscsiPaths(rec, info)
		}
	} else {
		p = c.otherPaths(ctx, rec)
	}
	if len(p.objects) == 0 {
		return p
	}
	if rec.Crypt != nil {
		if d, ok := c.dmNamed(rec.Crypt.Name); ok {
			c.claims.dm[d.Name] = true
			p.objects = append(p.objects, "/dev/"+d.Name)
		} else {
			p.lost = append(p.lost, "dm-crypt mapping "+rec.Crypt.Name+" closed")
		}
	}
	if rec.Mounted && rec.Mountpoint != "" {
		if c.mounted(rec.Mountpoint) {
			c.claims.mounts[rec.Mountpoint] = true
		} else {
			p.lost = append(p.lost, "not mounted on "+rec.Mountpoint)
		}
	}
	return p
}

// iscsiPaths checks each path the connection info names (and any other
// portal of the same target, as discovery finds them): session, disk at
// the LUN, and membership of the multipath map.
func (c *check) iscsiPaths(rec *attach.Record, info *iscsi.Info) presence {
	var p presence
	var mp *multipath.DMDevice
	if rec.Device != nil && rec.Device.MultipathID != "" {
		if d, ok := c.mapOf(rec.Device.MultipathID); ok {
			mp = &d
			c.claims.dm[d.Name] = true
			p.objects = append(p.objects, "/dev/"+d.Name)
		} else {
			p.lost = append(p.lost, "multipath map "+rec.Device.MultipathID+" gone")
		}
	}
	named := map[string]bool{}
	for _, t := range info.Targets {
		named[t.IQN+"@"+t.Portal.String()] = true
		p.want++
		c.iscsiPath(&p, mp, t.IQN, t.Portal.String(), t.LUN, true)
	}
	for _, s := range c.inv.Sessions {
		key := s.Target + "@" + s.Portal.String()
		if named[key] || !slices.ContainsFunc(info.Targets, func(t iscsi.Target) bool { return t.IQN == s.Target }) {
			continue
		}
		// A portal found by discovery: a path too.
		named[key] = true
		p.want++
		c.iscsiPath(&p, mp, s.Target, s.Portal.String(), info.Targets[0].LUN, false)
	}
	if !attach.AttachedMultipath(rec) {
		onePath(&p)
	}
	return p
}

// onePath judges a volume attached without multipath: it uses one path,
// the first of the connection info's portals that came up (Cinder names
// every portal even to a single-path connector), so one path up is all of
// it and the others are not lost.
func onePath(p *presence) {
	p.want = 1
	if p.up > 0 {
		p.up, p.lost = 1, nil
	}
}

// iscsiPath checks one path and claims what it finds.
func (c *check) iscsiPath(p *presence, mp *multipath.DMDevice, iqn, portal string, lun int, named bool) {
	s, ok := c.session(iqn, portal)
	if !ok {
		p.lost = append(p.lost, portal+": no session")
		return
	}
	c.claims.sessions[s.ID] = true
	p.objects = append(p.objects, fmt.Sprintf("session%d", s.ID))
	d, ok := c.diskAt(s.ID, lun)
	if !ok {
		p.lost = append(p.lost, fmt.Sprintf("%s: no disk at LUN %d", portal, lun))
		return
	}
	c.claims.disks[d.Name] = true
	p.objects = append(p.objects, "/dev/"+d.Name)
	if mp != nil && !slices.Contains(mp.Slaves, d.Name) {
		p.lost = append(p.lost, fmt.Sprintf("%s: %s not in map %s", portal, d.Name, mp.Name))
		return
	}
	p.up++
}

// otherPaths asks the protocol's connector which devices are present and
// claims the kernel objects behind them.
func (c *check) otherPaths(ctx context.Context, rec *attach.Record) presence {
	var p presence
	conn, err := c.r.connector(rec.ConnectionInfo)
	if err != nil {
		return p
	}
	paths, err := conn.DevicePaths(ctx, *rec.ConnectionInfo)
	if err != nil {
		return p
	}
	p.objects = paths
	for _, d := range c.inv.DM {
		if slices.Contains(paths, "/dev/"+d.Name) {
			c.claims.dm[d.Name] = true
		}
	}
	for _, d := range c.inv.RBD {
		if slices.Contains(paths, "/dev/rbd"+d.ID) {
			c.claims.rbd[d.ID] = true
		}
	}
	for _, m := range c.inv.NFS() {
		if slices.ContainsFunc(paths, func(x string) bool { return x == m.MountPoint || strings.HasPrefix(x, m.MountPoint+"/") }) {
			c.claims.mounts[m.MountPoint] = true
		}
	}
	nqns := nvmeNQNs(*rec.ConnectionInfo)
	for _, n := range c.inv.NVMe {
		if len(paths) > 0 && slices.Contains(nqns, n.NQN) {
			c.claims.nvme[n.Name] = true
		}
	}
	return p
}

// nvmeNQNs are the subsystems an nvmeof record uses: its target's, or
// every leg's of a replicated volume (each leg is its own subsystem).
func nvmeNQNs(info connector.ConnectionInfo) []string {
	if !strings.EqualFold(info.DriverVolumeType, nvmeof.Protocol) {
		return nil
	}
	req, err := nvmeof.ParseRequest(info)
	if err != nil {
		return nil
	}
	nqns := make([]string, 0, len(req.Legs))
	for _, leg := range req.Legs {
		nqns = append(nqns, leg.NQN)
	}
	return nqns
}

func (c *check) session(iqn, portal string) (iscsi.Session, bool) {
	for _, s := range c.inv.Sessions {
		if s.Target == iqn && s.Portal.String() == portal {
			return s, true
		}
	}
	return iscsi.Session{}, false
}

func (c *check) diskAt(session, lun int) (Disk, bool) {
	for _, d := range c.inv.Disks {
		if d.Session == session && d.HCTL.LUN == lun {
			return d, true
		}
	}
	return Disk{}, false
}

func (c *check) mapOf(wwid string) (multipath.DMDevice, bool) {
	for _, d := range c.inv.DM {
		if id, ok := d.Multipath(); ok && id == wwid {
			return d, true
		}
	}
	return multipath.DMDevice{}, false
}

func (c *check) dmNamed(name string) (multipath.DMDevice, bool) {
	for _, d := range c.inv.DM {
		if d.DMName == name {
			return d, true
		}
	}
	return multipath.DMDevice{}, false
}

func (c *check) mounted(dir string) bool {
	return slices.ContainsFunc(c.inv.Mounts, func(m hostMount) bool { return m.MountPoint == dir })
}
