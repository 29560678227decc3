package nvmeof

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
)

// Extend rescans the namespaces of every live controller of the volume's
// subsystem: the kernel re-reads the namespace's size and resizes the
// device (the native multipath head follows its paths). A controller that
// is not live (reconnecting) is skipped with a warning; it rescans when it
// comes back. Then Extend waits (bounded) until the device shows newSize,
// or, with newSize unknown, until the rescan changed the size or
// Options.SettleTimeout passed, and then until every live path shows the
// device's size.
// A replicated volume grows every attached leg, then its md array.
func (c *Connector) Extend(ctx context.Context, info connector.ConnectionInfo, dev *connector.Device, newSize int64) (*connector.Resize, error) {
	req, err := c.parseRequest(info)
	if err != nil {
		return nil, err
	}
	if req.Replicated {
		return replicated{c, req}.extend(ctx, newSize)
	}
	return c.extendTarget(ctx, req.Legs[0], dev, newSize)
}

// extendTarget grows one target's namespace under its subsystem's lock.
func (c *Connector) extendTarget(ctx context.Context, v Volume, dev *connector.Device, newSize int64) (*connector.Resize, error) {
	unlock, err := c.h.Locks.Lock(ctx, lockName(v.NQN))
	if err != nil {
		return nil, fmt.Errorf("nvmeof extend %s: %w", v.NQN, err)
	}
	defer unlock()
	ctrls, err := controllers(c.h.FS, v.NQN)
	if err != nil {
		return nil, fmt.Errorf("nvmeof extend %s: %w", v.NQN, err)
	}
	name, _, err := findNamespace(c.h.FS, v, ctrls)
	if err != nil {
		return nil, fmt.Errorf("nvmeof extend %s: %w", v.NQN, err)
	}
	if name == "" {
		return nil, fmt.Errorf("nvmeof extend %s: namespace %s is not attached", v.NQN, v.idString())
	}
	devPath := "/dev/" + name
	if dev != nil && dev.Path != "" && dev.Path != devPath {
		return nil, fmt.Errorf("nvmeof extend %s: the namespace is %s, not %s as recorded", v.NQN, devPath, dev.Path)
	}
	old, err := c.nsSize(name)
	if err != nil {
		return nil, err
	}
	if err := c.rescan(v, ctrls); err != nil {
		return nil, err
	}
	cur, err := c.waitNewSize(ctx, name, old, newSize)
	if err != nil {
		return nil, fmt.Errorf("nvmeof extend %s: %w", devPath, err)
	}
	if err := c.waitPaths(ctx, name, ctrls, cur); err != nil {
		return nil, fmt.Errorf("nvmeof extend %s: %w", devPath, err)
	}
	return &connector.Resize{Device: devPath, OldSize: old, NewSize: cur}, nil
}

// rescan asks every live controller to rescan its namespaces.
func (c *Connector) rescan(v Volume, ctrls []Controller) error {
	live := 0
	for _, ct := range ctrls {
		if ct.State != "live" {
			c.h.Log.Warn("nvmeof extend: controller not live, not rescanned (it rescans when it reconnects)", "controller", ct.Name, "address", ct.Address+":"+ct.Port, "state", ct.State)
			continue
		}
		if err := c.h.FS.WriteFile(path.Join(classNVMe, ct.Name, "rescan_controller"), []byte("1")); err != nil {
			return fmt.Errorf("nvmeof extend %s: rescan %s: %w", v.NQN, ct.Name, err)
		}
		live++
	}
	if live == 0 {
		return fmt.Errorf("nvmeof extend %s: no live controller to rescan (every path is down)", v.NQN)
	}
	return nil
}

// waitNewSize waits until the namespace shows want bytes or more; with
// want unknown (0), until its size differs from old or settleTimeout
// passes.
func (c *Connector) waitNewSize(ctx context.Context, name string, old, want int64) (int64, error) {
	timeout := c.opts.DeviceTimeout
	if want <= 0 {
		timeout = c.opts.SettleTimeout
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cur := old
	err := c.h.FS.WaitFor(wctx, nil, host.Backoff{}, func() (bool, error) {
		var err error
		cur, err = c.nsSize(name)
		if want <= 0 {
			return cur != old, err
		}
		return cur >= want, err
	})
	switch {
	case err == nil:
		return cur, nil
	case want <= 0 && errors.Is(err, host.ErrWaitTimeout):
		return cur, nil
	}
	return cur, fmt.Errorf("the device shows %d bytes after the rescan, the volume has %d: %w", cur, want, err)
}

// waitPaths waits (bounded by DeviceTimeout) until the namespace's node
// under every live controller (native multipath: nvme0c1n1 under nvme1)
// shows size bytes. The head takes the size of whichever path the kernel
// revalidates first; I/O past the old end sent down a path still at the
// old size would fail.
func (c *Connector) waitPaths(ctx context.Context, head string, ctrls []Controller, size int64) error {
	paths := pathNodes(c.h.FS, head, ctrls)
	if len(paths) == 0 {
		return nil // no native multipath: the device is the only path
	}
	wctx, cancel := context.WithTimeout(ctx, c.opts.DeviceTimeout)
	defer cancel()
	var lag string
	err := c.h.FS.WaitFor(wctx, nil, host.Backoff{}, func() (bool, error) {
		for _, p := range paths {
			n, err := c.sizeAt(p)
			if err != nil {
				return false, err
			}
			if n != size {
				lag = fmt.Sprintf("path %s shows %d bytes, the device %d", path.Base(path.Dir(p)), n, size)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil && lag != "" {
		return fmt.Errorf("%s: %w", lag, err)
	}
	return err
}

// pathNodes returns the size files of head's per-path nodes under the
// live controllers: head nvme<S>n<N> is nvme<S>c<C>n<N> under nvme<C>.
func pathNodes(fsys host.FS, head string, ctrls []Controller) []string {
	sub, ns, ok := strings.Cut(strings.TrimPrefix(head, "nvme"), "n")
	if !ok {
		return nil
	}
	var out []string
	for _, ct := range ctrls {
		if ct.State != "live" {
			continue
		}
		p := path.Join(classNVMe, ct.Name, "nvme"+sub+"c"+strings.TrimPrefix(ct.Name, "nvme")+"n"+ns, "size")
		if fsys.Exists(p) {
			out = append(out, p)
		}
	}
	return out
}

// sizeAt reads a per-path node's size file as bytes.
func (c *Connector) sizeAt(file string) (int64, error) {
	s, err := c.h.FS.ReadString(file)
	if err != nil {
		return 0, fmt.Errorf("nvmeof extend: size of %s: %w", path.Base(path.Dir(file)), err)
	}
	n, ok := host.SectorsToBytes(s)
	if !ok {
		return 0, fmt.Errorf("nvmeof extend: size of %s: %s is not a sector count", path.Base(path.Dir(file)), connector.Quote(s))
	}
	return n, nil
}

// nsSize is a block device's (a namespace's, an array's) size in bytes.
func (c *Connector) nsSize(name string) (int64, error) {
	n, err := c.h.Block.Size(name)
	if err != nil {
		return 0, fmt.Errorf("nvmeof extend: %w", err)
	}
	return n, nil
}
