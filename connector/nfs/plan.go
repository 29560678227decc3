package nfs

import (
	"context"
	"strings"

	"github.com/brick-storage/brick/connector"
)

// PlanConnect says what Connect would do: reuse brick's mount of the share
// or mount it (the mount argv, with the version fallbacks), then hand out
// the volume file or a loop device over it.
func (c *Connector) PlanConnect(_ context.Context, info connector.ConnectionInfo) (*connector.Plan, error) {
	d, err := c.decideConnect(info)
	if err != nil {
		return nil, err
	}
	s := d.share
	st, err := c.state.read(s.id)
	if err != nil {
		return nil, err
	}
	p := planOf(s, "connect")
	if prev, ok := st.Users[s.vol.Name]; ok {
		if dev, ok := c.stillAttached(s, st, prev); ok {
			p.Step("already attached at " + dev.Path + ": nothing to do")
			return p, nil
		}
	}
	_, mounted, err := c.mountAt(s.mountPoint, s.vol.Export.String())
	if err != nil {
		return nil, err
	}
	if mounted {
		p.Step("reuse brick's mount of the share at " + s.mountPoint)
	} else {
		p.Step("create the mount point " + s.mountPoint)
		for i, v := range d.versions {
			prefix := ""
			if i > 0 {
				prefix = "if that fails: "
			}
			p.Step(prefix + "mount -t nfs -o " + joinOptions(d.mountOpts, v) + " " + s.vol.Export.String() + " " + c.h.FS.Path(s.mountPoint))
		}
	}
	p.Step("check the volume file " + s.file)
	if c.opts.AsBlock {
		p.Step("attach a loop device over " + s.file)
	}
	p.Step("record the volume as a user of the share")
	return p, nil
}

func planOf(s share, action string) *connector.Plan {
	p := &connector.Plan{Protocol: Protocol, Action: action}
	p.Add("export", s.vol.Export.String())
	p.Add("mount_point", s.mountPoint)
	p.Add("file", s.file)
	p.Add("options", append([]string{}, s.vol.Options...))
	p.Add("format", s.vol.Format)
	return p
}

// PlanDisconnect says what Disconnect would do: detach the loop device,
// forget the volume, and unmount the share when it is the last user.
func (c *Connector) PlanDisconnect(_ context.Context, info connector.ConnectionInfo, dev *connector.Device, opts connector.DisconnectOptions) (*connector.Plan, error) {
	s, err := c.share(info)
	if err != nil {
		return nil, err
	}
	s = s.followRecord(dev)
	st, err := c.state.read(s.id)
	if err != nil {
		return nil, err
	}
	p := planOf(s, "disconnect")
	loop := c.attachedLoop(s, st, dev)
	_, mounted, err := c.mountAt(s.mountPoint, s.vol.Export.String())
	if err != nil {
		return nil, err
	}
	_, user := st.Users[s.vol.Name]
	if !mounted && !user && loop == "" {
		p.Step("the volume is not attached: nothing to do")
		return p, nil
	}
	last := st.onlyUser(s.vol.Name)
	if !opts.Force && mounted {
		p.Step("refuse if the volume file or share is in use (--force skips this)")
	}
	if loop != "" {
		p.Step("detach loop device " + loop)
	}
	if user {
		p.Step("forget the volume as a user of the share")
	}
	if !last {
		var others []string
		for _, n := range st.userNames() {
			if n != s.vol.Name {
				others = append(others, n)
			}
		}
		p.Step("keep the share mounted for: " + strings.Join(others, ", "))
		return p, nil
	}
	if mounted {
		p.Step("umount " + s.mountPoint + " and remove the mount point")
	}
	return p, nil
}
