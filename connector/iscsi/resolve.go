package iscsi

import (
	"context"
	"fmt"
	"strings"

	"github.com/brick-storage/brick/connector"
)

// resolve replaces every target whose portal names a host with one target
// per address the name resolves to, in the resolver's order, each lookup
// bounded by ResolveTimeout. Sessions and node records are by address, so
// this happens before any of them is touched.
func (c *Connector) resolve(ctx context.Context, info *Info) error {
	out, err := c.expandNames(ctx, info.Targets)
	if err != nil {
		return err
	}
	info.Targets = out
	return nil
}

// resolveForLookup is resolve for disconnect and device lookups, which
// find the volume by target name and LUN: a name that no longer resolves
// costs only the match of leftover sessions on its portal.
func (c *Connector) resolveForLookup(ctx context.Context, info *Info) {
	if err := c.resolve(ctx, info); err != nil {
		c.log.Warn("iscsi: portal host name not resolved; finding the volume by target and LUN only", "err", err.Error())
	}
}

func (c *Connector) expandNames(ctx context.Context, targets []Target) ([]Target, error) {
	resolved := map[string][]string{}
	var out []Target
	for _, t := range targets {
		if !t.Portal.IsName() {
			out = appendTarget(out, t)
			continue
		}
		name := t.Portal.Host
		addrs, ok := resolved[name]
		if !ok {
			found, err := connector.ResolveHost(ctx, c.opts.Resolver, name, c.opts.ResolveTimeout)
			if err != nil {
				return nil, fmt.Errorf("portal %s: %w", t.Portal, err)
			}
			for _, a := range found {
				addrs = append(addrs, a.String())
			}
			resolved[name] = addrs
			c.log.Info("iscsi: portal host name resolved", "name", name, "addresses", strings.Join(addrs, ","))
		}
		for _, a := range addrs {
			out = appendTarget(out, Target{Portal: Portal{Host: a, Port: t.Portal.Port}, IQN: t.IQN, LUN: t.LUN})
		}
	}
	return out, nil
}

func appendTarget(list []Target, t Target) []Target {
	if containsTarget(list, t) {
		return list
	}
	return append(list, t)
}
