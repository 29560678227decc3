package nvmeof

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
)

// Disconnect flushes the namespace and deletes the subsystem's
// controllers, unless another namespace of the subsystem is still present
// on this host (a second volume of a shared subsystem): then its controllers
// stay. A mounted or held namespace is refused unless opts.Force.
func (c *Connector) Disconnect(ctx context.Context, info connector.ConnectionInfo, dev *connector.Device, opts connector.DisconnectOptions) error {
	v, err := c.prepare(info)
	if err != nil {
		return err
	}
	unlock, err := c.h.Locks.Lock(ctx, lockName(v.NQN))
	if err != nil {
		return fmt.Errorf("nvmeof disconnect %s: %w", v.NQN, err)
	}
	defer unlock()

	ctrls, err := controllers(c.h.FS, v.NQN)
	if err != nil {
		return fmt.Errorf("nvmeof disconnect %s: %w", v.NQN, err)
	}
	if len(ctrls) == 0 {
		return nil
	}
	name, others := findNamespace(c.h.FS, v, ctrls)
	if name != "" {
		if err := c.release(ctx, "/dev/"+name, opts.Force); err != nil {
			return fmt.Errorf("nvmeof disconnect %s: %w", v.NQN, err)
		}
	}
	if len(others) > 0 {
		c.h.Log.Debug("nvmeof: other namespaces still present; keeping the controllers", "nqn", v.NQN, "namespaces", others)
		return nil
	}
	return c.deleteControllers(ctx, v.NQN, ctrls)
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
func (c *Connector) deleteControllers(ctx context.Context, nqn string, ctrls []controller) error {
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
