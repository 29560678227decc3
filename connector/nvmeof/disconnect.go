package nvmeof

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sync"
	"time"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
)

// Disconnect flushes the namespace and deletes the subsystem's
// controllers unless another namespace of the subsystem still needs them:
// one attached through brick (recorded) or one in use on this host
// (mounted, held by dm/md, opened exclusively). Namespaces nobody uses (a
// shared subsystem's other volumes, exported to other hosts too) do not
// keep them. A mounted or held namespace is refused unless opts.Force.
func (c *Connector) Disconnect(ctx context.Context, info connector.ConnectionInfo, dev *connector.Device, opts connector.DisconnectOptions) error {
	req, err := c.parseRequest(info)
	if err != nil {
		return err
	}
	if req.Replicated {
		return replicated{c, req}.disconnect(ctx, opts)
	}
	return c.disconnectTarget(ctx, req.Legs[0], opts)
}

// disconnectTarget detaches one target's namespace under its subsystem's lock.
func (c *Connector) disconnectTarget(ctx context.Context, v Volume, opts connector.DisconnectOptions) error {
	unlock, err := c.h.Locks.Lock(ctx, lockName(v.NQN))
	if err != nil {
		return fmt.Errorf("nvmeof disconnect %s: %w", v.NQN, err)
	}
	defer unlock()
	d, err := c.decideDetach(v)
	if err != nil {
		return fmt.Errorf("nvmeof disconnect %s: %w", v.NQN, err)
	}
	if d.name != "" {
		if err := c.release(ctx, "/dev/"+d.name, opts.Force); err != nil {
			return fmt.Errorf("nvmeof disconnect %s: %w", v.NQN, err)
		}
	}
	if d.key != "" {
		if err := c.state.record(v.NQN, d.key, false); err != nil {
			return fmt.Errorf("nvmeof disconnect %s: %w", v.NQN, err)
		}
	}
	if len(d.ctrls) == 0 {
		// No controller, nothing attached: a record left is stale.
		return c.h.FS.RemoveFileDurable(c.state.path(v.NQN))
	}
	if len(d.keep) > 0 {
		c.h.Log.Debug("nvmeof: other namespaces still need the controllers", "nqn", v.NQN, "namespaces", d.keep)
		return nil
	}
	return c.deleteControllers(ctx, v.NQN, d.ctrls)
}

// detachDecision is what a disconnect of one target does, worked out from
// sysfs and the subsystem's record: Disconnect acts on it, the dry run
// prints it.
type detachDecision struct {
	ctrls []Controller
	name  string // the volume's namespace; "" when it is gone
	key   string // its record key; "" when not recorded
	// keep names the other namespaces that keep the controllers, each
	// with why ("nvme0n2 (recorded)").
	keep []string
}

func (c *Connector) decideDetach(v Volume) (detachDecision, error) {
	var d detachDecision
	var err error
	if d.ctrls, err = controllers(c.h.FS, v.NQN); err != nil {
		return d, err
	}
	st, err := c.state.read(v.NQN)
	if err != nil {
		return d, err
	}
	var others []string
	if len(d.ctrls) > 0 {
		if d.name, others, err = findNamespace(c.h.FS, v, d.ctrls); err != nil {
			return d, err
		}
	}
	if d.name != "" {
		d.key = nsKey(readNS(c.h.FS, d.name))
	}
	for _, o := range others {
		if why := c.needed(st, o); why != "" {
			d.keep = append(d.keep, o+" ("+why+")")
		}
	}
	return d, nil
}

// needed says why namespace name keeps its subsystem's controllers: it is
// recorded as attached through brick, or something on the host uses it.
// "" when nothing does.
func (c *Connector) needed(st *subsystemState, name string) string {
	if st.has(nsKey(readNS(c.h.FS, name))) {
		return "attached through brick"
	}
	if holders, _ := c.h.FS.ReadDir(path.Join(sysBlock, name, "holders")); len(holders) > 0 {
		return "held by " + holders[0].Name()
	}
	if errors.Is(c.h.Block.CheckNotInUse("/dev/"+name), host.ErrDeviceBusy) {
		return "in use"
	}
	return ""
}

// release checks the device is not in use and flushes it; with force a
// failure of either is logged and ignored.
func (c *Connector) release(ctx context.Context, devPath string, force bool) error {
	err := c.h.Block.CheckNotInUse(devPath)
	if err == nil {
		fctx, cancel := context.WithTimeout(ctx, c.opts.FlushTimeout)
		err = c.h.Block.FlushBuffersContext(fctx, devPath)
		cancel()
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		if !force {
			return err
		}
		c.h.Log.Warn("nvmeof: forced disconnect of a device in use or not flushed", "device", devPath, "err", err)
	}
	return nil
}

// deleteControllers deletes each controller and waits until sysfs no
// longer lists any controller of the subsystem.
func (c *Connector) deleteControllers(ctx context.Context, nqn string, ctrls []Controller) error {
	// Each delete returns once the kernel has torn its controller down;
	// run in parallel, the teardowns of a multipath volume overlap.
	errs := make([]error, len(ctrls))
	var wg sync.WaitGroup
	for i, ctrl := range ctrls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			if err := c.fab.Delete(ctrl.Name); err != nil {
				errs[i] = fmt.Errorf("delete %s: %w", ctrl.Name, err)
			}
			c.h.Log.Debug("nvmeof: controller deleted", "controller", ctrl.Name, "err", errs[i], "took", time.Since(start))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("nvmeof disconnect %s: %w", nqn, err)
	}
	wctx, cancel := context.WithTimeout(ctx, c.opts.DeleteTimeout)
	defer cancel()
	err := c.h.FS.WaitFor(wctx, nil, host.Backoff{}, func() (bool, error) {
		left, err := controllers(c.h.FS, nqn)
		return len(left) == 0, err
	})
	if err != nil {
		return fmt.Errorf("nvmeof disconnect %s: controllers still present: %w", nqn, err)
	}
	return nil
}
