package reconcile

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/ident"
)

// strays reports the kernel objects no record claims: sessions of a Cinder
// volume not attached here are orphans; everything else is left alone.
func (c *check) strays(ctx context.Context) {
	byIQN := map[string][]iscsi.Session{}
	var iqns []string
	for _, s := range c.inv.Sessions {
		if c.claims.sessions[s.ID] {
			continue
		}
		if byIQN[s.Target] == nil {
			iqns = append(iqns, s.Target)
		}
		byIQN[s.Target] = append(byIQN[s.Target], s)
	}
	sort.Strings(iqns)
	for _, iqn := range iqns {
		c.strayTarget(ctx, iqn, byIQN[iqn])
	}
	for _, d := range c.inv.DM {
		if _, mp := d.Multipath(); (mp || d.Crypt()) && !c.claims.dm[d.Name] {
			c.add(Finding{Status: LeftAlone, Kind: "map", Object: "/dev/" + d.Name, Detail: d.DMName + ": no record or Cinder volume of this host uses it"})
		}
	}
	for _, n := range c.inv.NVMe {
		if !c.claims.nvme[n.Name] {
			c.add(Finding{Status: LeftAlone, Kind: "nvme", Object: n.Name, Detail: n.NQN + ": no record uses it"})
		}
	}
	for _, d := range c.inv.RBD {
		if !c.claims.rbd[d.ID] {
			c.add(Finding{Status: LeftAlone, Kind: "rbd", Object: "/dev/rbd" + d.ID, Detail: d.Spec() + ": no record uses it"})
		}
	}
	for _, m := range c.inv.NFS() {
		if !c.claims.mounts[m.MountPoint] {
			c.add(Finding{Status: LeftAlone, Kind: "nfs", Object: m.MountPoint, Detail: m.Source + ": no record uses it"})
		}
	}
}

// volumeOfIQN is the Cinder volume ID a target is named after (Cinder's
// target helpers name targets <prefix>volume-<id>), "" when none.
func volumeOfIQN(iqn string) string {
	i := strings.LastIndex(iqn, "volume-")
	if i < 0 {
		return ""
	}
	id, ok := ident.ParseUUID(iqn[i+len("volume-"):])
	if !ok {
		return ""
	}
	return id
}

// strayTarget classifies the unclaimed sessions to one target.
func (c *check) strayTarget(ctx context.Context, iqn string, sessions []iscsi.Session) {
	f := Finding{Kind: "iscsi-target", Object: iqn}
	luns := map[int]bool{}
	for _, s := range sessions {
		f.Paths = append(f.Paths, fmt.Sprintf("session%d %s", s.ID, s.Portal))
		for _, d := range c.inv.Disks {
			if d.Session == s.ID {
				luns[d.HCTL.LUN] = true
				f.Paths = append(f.Paths, "/dev/"+d.Name)
				c.claimStrayDisk(d.Name)
			}
		}
	}
	id := volumeOfIQN(iqn)
	if id == "" {
		f.Status, f.Detail = LeftAlone, "target not named after a Cinder volume"
		c.add(f)
		return
	}
	f.VolumeID = id
	st := c.cinder.state(ctx, id, c.r.HostName)
	switch {
	case st.err != nil:
		f.Status, f.Detail = Unknown, "Cinder: "+st.err.Error()
	case !st.known:
		f.Status, f.Detail = LeftAlone, "Cinder has no volume "+id
	case st.attached:
		f.Status = Unrecorded
		f.Detail = fmt.Sprintf("Cinder shows it attached to %s but brick has no record: 'brick local-detach %s' detaches it", c.r.HostName, id)
	default:
		f.Status, f.Detail = Orphaned, fmt.Sprintf("volume %s has no attachment for host %s", id, c.r.HostName)
		f.Repair, f.order = "flush, delete its disks and log out (refused if mounted or open)", orderOrphan
		info := strayInfo(sessions, luns)
		f.fix = func(ctx context.Context) error { return c.disconnectStray(ctx, info) }
	}
	c.add(f)
}

// claimStrayDisk claims a stray session's disk and any map over it, so
// they are reported with the session, not on their own.
func (c *check) claimStrayDisk(name string) {
	c.claims.disks[name] = true
	for _, d := range c.inv.DM {
		if slices.Contains(d.Slaves, name) {
			c.claims.dm[d.Name] = true
		}
	}
}

// strayInfo is the connection info naming every (portal, LUN) of the
// sessions, so the iSCSI connector's disconnect takes exactly those away.
func strayInfo(sessions []iscsi.Session, luns map[int]bool) connector.ConnectionInfo {
	ls := make([]int, 0, len(luns))
	for l := range luns {
		ls = append(ls, l)
	}
	sort.Ints(ls)
	if len(ls) == 0 {
		ls = []int{0} // no disk: only the sessions go
	}
	var portals, iqns []any
	var lunList []any
	for _, s := range sessions {
		for _, l := range ls {
			portals = append(portals, s.Portal.String())
			iqns = append(iqns, s.Target)
			lunList = append(lunList, l)
		}
	}
	// The records to remove are filed under the sessions' interface.
	typ := "iscsi"
	if sessions[0].Iface == iscsi.IfaceISER {
		typ = "iser"
	}
	return connector.ConnectionInfo{DriverVolumeType: typ, Data: map[string]any{
		"target_portals": portals, "target_iqns": iqns, "target_luns": lunList,
		"target_portal": portals[0], "target_iqn": iqns[0], "target_lun": lunList[0],
	}}
}

func (c *check) disconnectStray(ctx context.Context, info connector.ConnectionInfo) error {
	conn, err := c.r.Connectors.For("iscsi")
	if err != nil {
		return err
	}
	return conn.Disconnect(ctx, info, nil, connector.DisconnectOptions{})
}
