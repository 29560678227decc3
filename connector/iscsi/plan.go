package iscsi

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brick-storage/brick/connector"
)

// PlanConnect says what Connect would do: the targets after addressing and
// name resolution, which sessions exist already, and the logins, scans and
// map it would make. It reads sysfs and the node database only.
func (c *Connector) PlanConnect(ctx context.Context, ci connector.ConnectionInfo) (*connector.Plan, error) {
	info, err := c.parse(ci)
	if err != nil {
		return nil, err
	}
	d, err := c.decideConnect(ctx, info)
	if err != nil {
		return nil, err
	}
	useMP := d.multipath
	p := &connector.Plan{Protocol: "iscsi", Action: "connect", Multipath: useMP, Warnings: info.Warnings}
	if d.warning != "" {
		p.Warnings = append(p.Warnings, d.warning)
	}
	planDetails(p, info)
	if info.Encrypted {
		p.Warnings = append(p.Warnings, connector.CiphertextNote)
	}
	if d.discover {
		p.Step(fmt.Sprintf("discover the target's other portals: iscsiadm %s --discover%s", strings.Join(withIface(info.Iface, "-m", "discoverydb", "-t", "sendtargets", "-p", info.Targets[0].Portal.String()), " "), chapNote(info.DiscoveryAuth, " (discovery CHAP)")))
	}
	if !useMP && len(info.Targets) > 1 {
		p.Step("single path: try the targets in this order until one comes up")
	}
	sessions, err := ListSessions(c.h.FS)
	if err != nil {
		return nil, err
	}
	secs := int((c.opts.LoginTimeout + time.Second - 1) / time.Second)
	for _, t := range info.Targets {
		if s, ok := findSession(sessions, t.IQN, t.Portal); ok {
			p.Step(fmt.Sprintf("reuse session %d to %s at %s", s.ID, t.IQN, t.Portal))
		} else {
			if files, _ := recordFiles(c.h.FS, t.IQN, t.Portal, info.Iface); len(files) == 0 {
				p.Step("iscsiadm " + strings.Join(nodeArgs(t.IQN, t.Portal, info.Iface, "-o", "new"), " "))
			}
			p.Step(fmt.Sprintf("write the node record: %sscan manual, login timeout %ds%s", ifaceNote(info.Iface), secs, chapNote(info.Auth, "")))
			p.Step("iscsiadm " + strings.Join(nodeArgs(t.IQN, t.Portal, info.Iface, "--login"), " "))
		}
		p.Step(fmt.Sprintf("scan LUN %d on the session's SCSI host and wait for its disk; verify its WWID", t.LUN))
	}
	if useMP {
		p.Step("multipathd add path for each disk, add the WWID to multipath's wwids, add path again (the map over all of them at once), wait for the map")
	}
	if info.ReadOnly {
		p.Step("blockdev --setro on the device (access_mode ro)")
	}
	return p, nil
}

// ifaceNote names the interface a record is set to, for iSER.
func ifaceNote(iface string) string {
	if iface == IfaceTCP {
		return ""
	}
	return "interface " + iface + ", "
}

// chapNote names the CHAP user (never the password).
func chapNote(auth *CHAP, label string) string {
	if auth == nil {
		return ""
	}
	return fmt.Sprintf(", CHAP user %s, password ***%s", connector.Quote(auth.Username), label)
}

// planDetails adds the details every plan shows.
func planDetails(p *connector.Plan, info *Info) {
	var portals, iqns []string
	var luns []int
	for _, t := range info.Targets {
		portals = append(portals, t.Portal.String())
		iqns = append(iqns, t.IQN)
		luns = append(luns, t.LUN)
	}
	if info.Iface != IfaceTCP {
		p.Add("transport", info.Iface)
	}
	p.Add("portals", portals)
	p.Add("target_iqns", iqns)
	p.Add("kernel_luns", luns)
	p.Add("chap", info.Auth != nil)
	p.Add("read_only", info.ReadOnly)
}

// PlanDisconnect says what Disconnect would take away: the volume's disks
// and map as sysfs shows them now, and the sessions and node records that
// would go with them.
func (c *Connector) PlanDisconnect(ctx context.Context, ci connector.ConnectionInfo, dev *connector.Device, opts connector.DisconnectOptions) (*connector.Plan, error) {
	info, err := c.parse(ci)
	if err != nil {
		return nil, err
	}
	c.resolveForLookup(ctx, info)
	a, err := c.find(info, dev)
	if err != nil {
		return nil, fmt.Errorf("iscsi disconnect: %w", err)
	}
	p := &connector.Plan{Protocol: "iscsi", Action: "disconnect", Multipath: a.vol.Map != nil, Warnings: info.Warnings}
	planDetails(p, info)
	p.Add("disks", a.vol.Disks)
	if a.vol.Map != nil {
		p.Add("map", a.vol.Map.Device)
	}
	if len(a.vol.Disks) == 0 && a.vol.Map == nil && len(a.sessions) == 0 && len(a.records) == 0 {
		p.Step("nothing of this volume is attached: nothing to do")
		return p, nil
	}
	mapName, mapDev := "", ""
	if a.vol.Map != nil {
		mapName, mapDev = a.vol.Map.Name, a.vol.Map.Device
	}
	p.PlanTeardown(mapName, mapDev, a.vol.Disks, a.hctl, a.vol.WWID, opts.Force)
	c.planLogouts(p, a)
	return p, nil
}

// planLogouts lists the sessions that carry nothing but the volume (they
// would be logged out) and those that stay for other LUNs.
func (c *Connector) planLogouts(p *connector.Plan, a *attached) {
	mine := map[string]bool{}
	for _, d := range a.vol.Disks {
		mine[d] = true
	}
	for _, s := range a.sessions {
		disks, err := sessionDisks(c.h.FS, s)
		if err != nil {
			p.Warnings = append(p.Warnings, err.Error())
			continue
		}
		var others []string
		for d := range disks {
			if !mine[d] {
				others = append(others, d)
			}
		}
		if len(others) > 0 {
			p.Step(fmt.Sprintf("keep session %d to %s at %s: it carries %d other LUN(s)", s.ID, s.Target, s.Portal, len(others)))
			continue
		}
		p.Step("iscsiadm -m session -r " + strconv.Itoa(s.ID) + " --logout")
		p.Step(fmt.Sprintf("remove the node record of %s at %s", s.Target, s.Portal))
	}
	var left []string
	for key := range a.records {
		if _, live := findSession(a.sessions, key.IQN, key.Portal); !live {
			left = append(left, fmt.Sprintf("remove the leftover node record of %s at %s", key.IQN, key.Portal))
		}
	}
	slices.Sort(left)
	p.Steps = append(p.Steps, left...)
}
