package nvmeof

import (
	"context"
	"fmt"
	"strings"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/md"
)

// PlanConnect says what Connect would do, from the same decisions: for
// each target (each leg of a replicated volume) the controllers it would
// reuse or create and the namespace it waits for; then the md array.
func (c *Connector) PlanConnect(_ context.Context, ci connector.ConnectionInfo) (*connector.Plan, error) {
	req, err := c.parseRequest(ci)
	if err != nil {
		return nil, err
	}
	p := &connector.Plan{Protocol: Protocol, Action: "connect", Multipath: len(req.Legs[0].Portals) > 1}
	planRequest(p, req)
	for i, leg := range req.Legs {
		actions, err := c.decidePortals(leg)
		if err != nil {
			return nil, fmt.Errorf("nvmeof connect %s: %w", leg.NQN, err)
		}
		prefix := legPrefix(req, i)
		for _, a := range actions {
			if a.reuse != "" {
				p.Step(fmt.Sprintf("%sreuse controller %s for %s", prefix, a.reuse, a.portal))
				continue
			}
			p.Step(fmt.Sprintf("%sconnect %s: write nqn=%s,transport=%s,traddr=%s,trsvcid=%d,hostnqn=...,hostid=...%s to %s",
				prefix, a.portal, leg.NQN, a.portal.Transport, a.portal.Address, a.portal.Port, legOption(c, req), fabricsDev))
		}
		p.Step(fmt.Sprintf("%swait for namespace %s of %s", prefix, leg.idString(), leg.NQN))
	}
	switch {
	case req.Mirrored():
		p.Step(fmt.Sprintf("assemble %s from the legs that carry its md superblock (degraded when one is missing), else create an md RAID1 over all %d legs (mdadm --create --level=1 --bitmap=internal --failfast --assume-clean)", md.Path(req.Alias), req.Count))
		p.Step("re-add any leg the running array lacks (mdadm --re-add)")
	case req.Replicated:
		p.Step(fmt.Sprintf("hand out the leg's namespace (or assemble %s if it carries an md superblock)", md.Path(req.Alias)))
	}
	if req.ReadOnly {
		p.Step("set the device read-only (access_mode ro)")
	}
	if enc, _, _ := ci.Bool("encrypted"); enc {
		p.Warnings = append(p.Warnings, connector.CiphertextNote)
	}
	return p, nil
}

func legPrefix(req Request, i int) string {
	if !req.Replicated {
		return ""
	}
	return fmt.Sprintf("leg %d: ", i)
}

func legOption(c *Connector, req Request) string {
	if !req.Mirrored() {
		return ""
	}
	return fmt.Sprintf(",fast_io_fail_tmo=%d", int(c.opts.LegIOFailTimeout.Seconds()))
}

// planRequest adds the details every plan shows.
func planRequest(p *connector.Plan, req Request) {
	var nqns, ids, portals []string
	for _, leg := range req.Legs {
		nqns = append(nqns, leg.NQN)
		ids = append(ids, leg.idString())
		for _, pt := range leg.Portals {
			portals = append(portals, pt.String())
		}
	}
	p.Add("nqn", strings.Join(nqns, " "))
	p.Add("namespace", strings.Join(ids, " "))
	p.Add("portals", portals)
	if req.Replicated {
		p.Add("alias", req.Alias)
		p.Add("replica_count", req.Count)
	}
	p.Add("read_only", req.ReadOnly)
}

// PlanDisconnect says what Disconnect would take away, from the same
// decision: the namespace it flushes, and whether the subsystem's
// controllers go or which other namespace keeps them.
func (c *Connector) PlanDisconnect(_ context.Context, ci connector.ConnectionInfo, _ *connector.Device, opts connector.DisconnectOptions) (*connector.Plan, error) {
	req, err := c.parseRequest(ci)
	if err != nil {
		return nil, err
	}
	p := &connector.Plan{Protocol: Protocol, Action: "disconnect", Multipath: len(req.Legs[0].Portals) > 1}
	planRequest(p, req)
	if req.Replicated {
		a, ok, err := c.md.Find(req.Alias, devPaths(replicated{c, req}.legNamespaces()))
		if err != nil {
			return nil, fmt.Errorf("nvmeof disconnect %s: %w", req.Alias, err)
		}
		if ok {
			p.Add("md_device", a.Device)
			planRelease(p, "", "/dev/"+a.Device, opts.Force)
			p.Step("stop the md array " + a.Device + " (mdadm --stop)")
		}
	}
	for i, leg := range req.Legs {
		d, err := c.decideDetach(leg)
		if err != nil {
			return nil, fmt.Errorf("nvmeof disconnect %s: %w", leg.NQN, err)
		}
		planDetach(p, legPrefix(req, i), leg, d, opts.Force)
	}
	return p, nil
}

func planRelease(p *connector.Plan, prefix, dev string, force bool) {
	if !force {
		p.Step(prefix + "refuse if " + dev + " is mounted or held open (--force skips this)")
	}
	p.Step(prefix + "flush " + dev)
}

func planDetach(p *connector.Plan, prefix string, v Volume, d detachDecision, force bool) {
	if len(d.ctrls) == 0 {
		p.Step(prefix + "no controller of " + v.NQN + ": nothing to do")
		return
	}
	if d.name != "" {
		planRelease(p, prefix, "/dev/"+d.name, force)
	} else {
		p.Step(prefix + "namespace " + v.idString() + " not present: nothing to flush")
	}
	var names []string
	for _, ct := range d.ctrls {
		names = append(names, ct.Name)
	}
	if len(d.keep) > 0 {
		p.Step(fmt.Sprintf("%skeep controllers %s: still needed by %s", prefix, strings.Join(names, ", "), strings.Join(d.keep, ", ")))
		return
	}
	p.Step(fmt.Sprintf("%sdelete controllers %s (delete_controller)", prefix, strings.Join(names, ", ")))
}
