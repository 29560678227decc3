package rbd

import (
	"context"
	"fmt"
	"strings"

	"github.com/brick-storage/brick/connector"
)

// confPlaceholder stands for the private config file a map would write
// (it holds the key, so the plan never shows its contents).
const confPlaceholder = "<private ceph.conf with the key>"

// PlanConnect says what Connect would do: reuse a mapping of the image
// (found in sysfs) or run `rbd device map` with these arguments.
func (c *Connector) PlanConnect(ctx context.Context, info connector.ConnectionInfo) (*connector.Plan, error) {
	d, err := c.decideConnect(info)
	if err != nil {
		return nil, err
	}
	v, driver := d.vol, d.driver
	p := planOf(v, driver, "connect")
	m, ok, err := c.existing(ctx, d)
	if err != nil {
		return nil, err
	}
	if ok {
		p.Step(fmt.Sprintf("reuse the existing mapping %s", m.Device))
		return p, nil
	}
	conf := ""
	if !v.Key.IsZero() {
		conf = confPlaceholder
		p.Step("write a private ceph.conf and keyring under " + c.opts.TempDir + " (removed right after the map)")
	}
	p.Step(c.opts.RBD + " " + strings.Join(mapArgs(v, driver, conf, c.noUdev()), " "))
	p.Step("confirm the mapping in sysfs (rbd-nbd: its command line in /proc)")
	return p, nil
}

func planOf(v Volume, driver, action string) *connector.Plan {
	p := &connector.Plan{Protocol: Protocol, Action: action}
	p.Add("image", v.Spec())
	p.Add("cluster", v.Cluster)
	p.Add("monitors", append([]string{}, v.Monitors...))
	p.Add("user", v.User)
	p.Add("driver", driver)
	p.Add("read_only", v.ReadOnly)
	for _, why := range v.Ignored {
		p.Warnings = append(p.Warnings, "ignored: "+why)
	}
	return p
}

// PlanDisconnect says which mappings of the image Disconnect would unmap.
func (c *Connector) PlanDisconnect(ctx context.Context, info connector.ConnectionInfo, dev *connector.Device, opts connector.DisconnectOptions) (*connector.Plan, error) {
	v, err := c.prepare(info)
	if err != nil {
		return nil, err
	}
	driver, err := c.driver()
	if err != nil {
		return nil, err
	}
	drivers := []string{driver, otherDriver(driver)}
	if dev != nil && ValidDriver(dev.Extra[ExtraDriver]) {
		drivers = []string{dev.Extra[ExtraDriver]}
	}
	p := planOf(v, driver, "disconnect")
	for i, d := range drivers {
		mappings, err := c.mappings(ctx, d)
		if err != nil {
			if i > 0 {
				continue
			}
			return nil, fmt.Errorf("rbd unmap %s: %w", v.Spec(), err)
		}
		for _, m := range mappings {
			if !m.Matches(v) {
				continue
			}
			if !opts.Force {
				p.Step("refuse if " + m.Device + " is mounted or held open (--force skips this)")
			}
			p.Step(c.opts.RBD + " " + strings.Join(unmapArgs(d, m.Device, opts.Force, c.noUdev()), " "))
		}
	}
	if len(p.Steps) == 0 {
		p.Step("the image is not mapped: nothing to do")
	}
	return p, nil
}
