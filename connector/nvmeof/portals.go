package nvmeof

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/brick-storage/brick/host"
)

// portalResult is what one portal gave: a controller name or an error.
type portalResult struct {
	portal Portal
	ctrl   string
	reused bool
	err    error
}

// connectPortals brings up one controller per portal in parallel, each
// bounded by PortalTimeout, reusing controllers that already exist. It
// succeeds when at least one portal has a controller and returns their
// names, and those it created.
func (c *Connector) connectPortals(ctx context.Context, v Volume, hostNQN, hostID, extra string) (names, created []string, err error) {
	actions, err := c.decidePortals(v)
	if err != nil {
		return nil, nil, fmt.Errorf("nvmeof connect %s: %w", v.NQN, err)
	}
	results := make([]portalResult, len(actions))
	var wg sync.WaitGroup
	for i, a := range actions {
		p := a.portal
		if a.reuse != "" {
			results[i] = portalResult{portal: p, ctrl: a.reuse, reused: true}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			name, err := c.connectPortal(ctx, p, fabricsOptions(v.NQN, p, hostNQN, hostID)+extra)
			results[i] = portalResult{portal: p, ctrl: name, err: err}
			c.h.Log.Debug("nvmeof: portal", "portal", p.String(), "controller", name, "err", err, "took", time.Since(start))
		}()
	}
	wg.Wait()
	var errs []error
	for _, r := range results {
		if r.err != nil {
			errs = append(errs, fmt.Errorf("portal %s: %w", r.portal, r.err))
			continue
		}
		names = append(names, r.ctrl)
		if !r.reused {
			created = append(created, r.ctrl)
		}
	}
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("nvmeof connect %s: %w: %w", v.NQN, ErrNoPortal, errors.Join(errs...))
	}
	for _, e := range errs {
		c.h.Log.Warn("nvmeof: portal failed; going on with the others", "nqn", v.NQN, "err", e)
	}
	return names, created, nil
}

// portalAction is what a connect does for one portal: reuse a controller
// that is there, or ask the kernel for one.
type portalAction struct {
	portal Portal
	reuse  string // the controller reused; "" to connect
}

// decidePortals is the connect's decision for each portal, from sysfs:
// Connect acts on it, the dry run prints it.
func (c *Connector) decidePortals(v Volume) ([]portalAction, error) {
	existing, err := controllers(c.h.FS, v.NQN)
	if err != nil {
		return nil, err
	}
	out := make([]portalAction, len(v.Portals))
	for i, p := range v.Portals {
		out[i].portal = p
		out[i].reuse, _ = reusable(existing, p)
	}
	return out, nil
}

func reusable(existing []Controller, p Portal) (string, bool) {
	for _, ctrl := range existing {
		if ctrl.matches(p) {
			return ctrl.Name, true
		}
	}
	return "", false
}

// connectPortal probes a TCP portal (a dead address fails here within the
// timeout instead of holding the kernel's connect mutex, which serialises
// every fabrics connect on the host) and then asks the kernel for a
// controller.
func (c *Connector) connectPortal(ctx context.Context, p Portal, options string) (string, error) {
	pctx, cancel := context.WithTimeout(ctx, c.opts.PortalTimeout)
	defer cancel()
	if p.Transport == TransportTCP {
		addr := net.JoinHostPort(p.Address, strconv.Itoa(p.Port))
		if err := host.ProbeTCP(pctx, addr); err != nil {
			return "", err
		}
	}
	return c.fab.Connect(pctx, options)
}

// fabricsOptions is the kernel's connect request. Every value was
// validated: none can hold a comma or an equals sign.
func fabricsOptions(nqn string, p Portal, hostNQN, hostID string) string {
	s := fmt.Sprintf("nqn=%s,transport=%s,traddr=%s,trsvcid=%d", nqn, p.Transport, p.Address, p.Port)
	if hostNQN != "" {
		s += ",hostnqn=" + hostNQN
	}
	if hostID != "" {
		s += ",hostid=" + hostID
	}
	return s
}
