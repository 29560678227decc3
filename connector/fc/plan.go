package fc

import (
	"context"
	"fmt"

	"github.com/brick-storage/brick/connector"
)

// PlanConnect says what Connect would do: the HBAs it would use, and for
// each (HBA, target port, LUN) whether the LUN is there already, would be
// scanned, or waits for a target port sysfs does not show yet.
func (c *Connector) PlanConnect(_ context.Context, ci connector.ConnectionInfo) (*connector.Plan, error) {
	info, err := c.parse(ci)
	if err != nil {
		return nil, err
	}
	d, err := c.decideConnect(info)
	if err != nil {
		return nil, err
	}
	useMP := d.multipath
	p := &connector.Plan{Protocol: Protocol, Action: "connect", Multipath: useMP}
	planDetails(p, info)
	var names []string
	for _, h := range d.hbas {
		names = append(names, fmt.Sprintf("host%d 0x%s", h.Host, h.PortName))
	}
	p.Add("hbas", names)
	if d.warning != "" {
		p.Warnings = append(p.Warnings, d.warning)
	}
	if info.Encrypted {
		p.Warnings = append(p.Warnings, connector.CiphertextNote)
	}
	for _, r := range d.paths {
		port, ok := findRemotePort(c.h.FS, r.hba.Host, r.target.WWPN)
		if !ok {
			p.Step(fmt.Sprintf("%s: target port not in sysfs yet; wait for it%s", r, wildcardNote(info)))
			continue
		}
		r.port = port
		if c.deviceKnown(r.addr()) {
			p.Step(fmt.Sprintf("%s: LUN present at %s; no scan", r, r.addr()))
			continue
		}
		p.Step(fmt.Sprintf("%s: scan %s (write \"%d %d %d\" to /sys/class/scsi_host/host%d/scan)", r, r.addr(), port.Channel, port.Target, r.target.LUN, r.hba.Host))
	}
	p.Step("wait for the disks and verify their WWIDs")
	if useMP {
		p.Step("multipathd add path for each disk, add the WWID to multipath's wwids, add path again (the map over all of them at once), wait for the map")
	}
	if info.ReadOnly {
		p.Step("blockdev --setro on the device (access_mode ro)")
	}
	return p, nil
}

func wildcardNote(info *Info) string {
	if info.WildcardScan {
		return ", then scan \"- - LUN\" on the HBA (enable_wildcard_scan)"
	}
	return ""
}

func planDetails(p *connector.Plan, info *Info) {
	var wwpns []string
	var luns []int
	for _, t := range info.Targets {
		wwpns = append(wwpns, t.WWPN)
		luns = append(luns, t.LUN)
	}
	p.Add("target_wwpns", wwpns)
	p.Add("kernel_luns", luns)
	p.Add("initiator_target_map", info.InitiatorTargetMap != nil)
	p.Add("read_only", info.ReadOnly)
}

// PlanDisconnect says what Disconnect would take away, as sysfs shows the
// volume now.
func (c *Connector) PlanDisconnect(_ context.Context, ci connector.ConnectionInfo, dev *connector.Device, opts connector.DisconnectOptions) (*connector.Plan, error) {
	info, err := c.parse(ci)
	if err != nil {
		return nil, err
	}
	a, err := c.find(info, dev)
	if err != nil {
		return nil, fmt.Errorf("fc disconnect: %w", err)
	}
	p := &connector.Plan{Protocol: Protocol, Action: "disconnect", Multipath: a.vol.Map != nil}
	planDetails(p, info)
	p.Add("disks", a.vol.Disks)
	mapName, mapDev := "", ""
	if a.vol.Map != nil {
		mapName, mapDev = a.vol.Map.Name, a.vol.Map.Device
		p.Add("map", mapDev)
	}
	if mapDev == "" && len(a.vol.Disks) == 0 {
		p.Step("nothing of this volume is attached: nothing to do")
	}
	p.PlanTeardown(mapName, mapDev, a.vol.Disks, a.hctls, a.vol.WWID, opts.Force)
	return p, nil
}
