package rbd

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
)

// Extend makes the mapped device show the image's new size. krbd is told
// to re-read the image header (its sysfs refresh); rbd-nbd follows the
// header by itself. Either way the size is checked, not assumed: Extend
// waits (bounded) until the device shows newSize, or, when newSize is not
// known (--local-only), the size Ceph reports for the image (rbd info).
func (c *Connector) Extend(ctx context.Context, info connector.ConnectionInfo, dev *connector.Device, newSize int64) (*connector.Resize, error) {
	v, drivers, err := c.lookup(info, dev)
	if err != nil {
		return nil, err
	}
	driver := drivers[0]
	unlock, err := c.h.Locks.Lock(ctx, lockName(v))
	if err != nil {
		return nil, fmt.Errorf("rbd extend %s: %w", v.Spec(), err)
	}
	defer unlock()
	mappings, err := c.mappings(ctx, driver)
	if err != nil {
		return nil, fmt.Errorf("rbd extend %s: %w", v.Spec(), err)
	}
	m, ok := find(mappings, v)
	if !ok {
		return nil, fmt.Errorf("rbd extend %s: the image is not mapped (%s)", v.Spec(), driver)
	}
	if dev != nil && dev.Path != "" && dev.Path != m.Device {
		return nil, fmt.Errorf("rbd extend %s: mapped at %s, not at %s as recorded", v.Spec(), m.Device, dev.Path)
	}
	old, err := c.deviceSize(m.Device)
	if err != nil {
		return nil, err
	}
	if newSize <= 0 {
		if newSize, err = c.imageSize(ctx, v); err != nil {
			return nil, err
		}
	}
	if driver == DriverKRBD {
		if err := c.refresh(m); err != nil {
			return nil, err
		}
	}
	cur, err := c.waitSize(ctx, v, m.Device, newSize)
	if err != nil {
		return nil, err
	}
	return &connector.Resize{Device: m.Device, OldSize: old, NewSize: cur}, nil
}

// refresh makes krbd re-read the image header now (the kernel would on
// Ceph's header notification, but that may come later).
func (c *Connector) refresh(m Mapping) error {
	if _, err := strconv.ParseUint(m.ID, 10, 32); err != nil {
		return fmt.Errorf("rbd extend: krbd device id %s is not a number", connector.Quote(m.ID))
	}
	if err := c.h.FS.WriteFile("/sys/bus/rbd/devices/"+m.ID+"/refresh", []byte("1")); err != nil {
		return fmt.Errorf("rbd extend %s: refresh the image header: %w", m.Device, err)
	}
	return nil
}

// waitSize waits until the device shows at least want bytes.
func (c *Connector) waitSize(ctx context.Context, v Volume, devPath string, want int64) (int64, error) {
	wctx, cancel := context.WithTimeout(ctx, c.opts.DeviceTimeout)
	defer cancel()
	var cur int64
	err := c.h.FS.WaitFor(wctx, nil, host.Backoff{}, func() (bool, error) {
		var err error
		cur, err = c.deviceSize(devPath)
		return cur >= want, err
	})
	if err != nil {
		return cur, fmt.Errorf("rbd extend %s: %s shows %d bytes, the image has %d: %w", v.Spec(), devPath, cur, want, err)
	}
	return cur, nil
}

// deviceSize is the size of /dev/rbdN or /dev/nbdN in bytes.
func (c *Connector) deviceSize(devPath string) (int64, error) {
	if !devicePathRE().MatchString(devPath) {
		return 0, fmt.Errorf("rbd extend: %s is not an rbd or nbd device", connector.Quote(devPath))
	}
	n, err := c.h.Block.Size(strings.TrimPrefix(devPath, "/dev/"))
	if err != nil {
		return 0, fmt.Errorf("rbd extend: %w", err)
	}
	return n, nil
}

// imageSize asks Ceph for the image's size (rbd info), with the same
// credentials a map uses.
func (c *Connector) imageSize(ctx context.Context, v Volume) (int64, error) {
	var out []byte
	err := c.withConf(v, func(confPath string) error {
		args := append([]string{"info", "--format", "json"}, authArgs(v, confPath)...)
		res, err := c.h.Runner.Run(ctx, host.Command{Name: c.opts.RBD, Args: append(args, v.Spec()), Timeout: c.opts.ListTimeout, Secrets: v.Secrets()})
		if err != nil {
			return err
		}
		out = res.Stdout
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("rbd extend %s: rbd info: %w", v.Spec(), explainMapError(err))
	}
	return parseImageSize(out)
}

// parseImageSize reads the size from `rbd info --format json`.
func parseImageSize(out []byte) (int64, error) {
	var info struct {
		Size *int64 `json:"size"`
	}
	if len(out) > maxListOutput {
		return 0, fmt.Errorf("rbd info: %d bytes of output, more than %d", len(out), maxListOutput)
	}
	if err := json.Unmarshal(out, &info); err != nil {
		return 0, fmt.Errorf("rbd info: not JSON: %w", err)
	}
	if info.Size == nil || *info.Size <= 0 {
		return 0, fmt.Errorf("rbd info: no valid size in %s", ident.Clip(strings.TrimSpace(string(out)), 64))
	}
	return *info.Size, nil
}

// withConf runs fn with the private config holding the connection info's
// key (removed afterwards), or "" to use the host's /etc/ceph.
func (c *Connector) withConf(v Volume, fn func(confPath string) error) error {
	if v.Key.IsZero() {
		return fn("")
	}
	cr, err := writeCreds(c.h.FS, c.opts.TempDir, v, c.opts.Now())
	if err != nil {
		return err
	}
	defer func() {
		if rerr := cr.remove(); rerr != nil {
			c.h.Log.Warn("rbd: " + rerr.Error())
		}
	}()
	return fn(cr.ConfPath)
}
