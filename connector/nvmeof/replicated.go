package nvmeof

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/md"
)

// Extra keys of a replicated volume's Device.
const (
	ExtraAlias = "md_alias"
	ExtraMD    = "md_device"
	ExtraLegs  = "legs"
)

// ErrNoLeg marks a replicated volume none of whose legs attached.
var ErrNoLeg = errors.New("no leg of the replicated volume attached")

// replicated works on one replicated volume (volume_replicas): its legs
// and, for a mirror, the md RAID1 over them.
type replicated struct {
	c   *Connector
	req Request
}

// legResult is one leg's connect: its device or its error.
type legResult struct {
	dev *connector.Device
	err error
}

// connect attaches every leg in parallel and, for a mirrored
// volume, assembles (or creates) its md RAID1 from the legs that came up.
// One replica is handed out as its leg's device unless it carries an md
// superblock (a volume that was mirrored before).
func (r replicated) connect(ctx context.Context) (*connector.Device, error) {
	c, req := r.c, r.req
	extra := ""
	if req.Mirrored() {
		extra = ",fast_io_fail_tmo=" + strconv.Itoa(int(c.opts.LegIOFailTimeout.Seconds()))
	}
	results := make([]legResult, len(req.Legs))
	var wg sync.WaitGroup
	for i, leg := range req.Legs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			leg.ReadOnly = false // the array, not its legs, is read-only
			results[i].dev, results[i].err = c.connectTarget(ctx, leg, extra)
		}()
	}
	wg.Wait()
	var devs []string
	var errs []error
	for i, r := range results {
		if r.err != nil {
			errs = append(errs, fmt.Errorf("leg %d (%s): %w", i, req.Legs[i].NQN, r.err))
			continue
		}
		devs = append(devs, r.dev.Path)
	}
	if len(devs) == 0 {
		return nil, fmt.Errorf("nvmeof connect %s: %w: %w", req.Alias, ErrNoLeg, errors.Join(errs...))
	}
	for _, e := range errs {
		c.h.Log.Warn("nvmeof: a leg did not attach; going on with the others", "alias", req.Alias, "err", e)
	}
	dev, err := r.ensureArray(ctx, devs)
	if err != nil {
		r.undoLegs()
		return nil, err
	}
	return dev, nil
}

// undoLegs disconnects the legs of a connect that failed.
func (r replicated) undoLegs() {
	c, req := r.c, r.req
	for _, leg := range req.Legs {
		if err := c.disconnectTarget(context.WithoutCancel(context.Background()), leg, connector.DisconnectOptions{}); err != nil {
			c.h.Log.Warn("nvmeof: undo a leg of a failed connect", "nqn", leg.NQN, "err", err)
		}
	}
}

// ensureArray returns the volume's device over the attached legs devs.
func (r replicated) ensureArray(ctx context.Context, devs []string) (*connector.Device, error) {
	c, req := r.c, r.req
	members, err := r.mdMembers(ctx, devs)
	if err != nil {
		return nil, fmt.Errorf("nvmeof connect %s: %w", req.Alias, err)
	}
	if !req.Mirrored() && len(members) == 0 {
		return r.legDevice(devs[0]), nil
	}
	a, ok, err := c.md.Find(req.Alias, devs)
	if err != nil {
		return nil, fmt.Errorf("nvmeof connect %s: %w", req.Alias, err)
	}
	switch {
	case ok && a.State != "inactive" && c.h.FS.Exists(md.Path(req.Alias)):
		// Running already (an earlier attach, or udev assembled it).
	case ok:
		// Assembled incompletely by udev, or under another name: restart it.
		if err := c.md.Stop(ctx, a.Device); err != nil {
			return nil, fmt.Errorf("nvmeof connect %s: %w", req.Alias, err)
		}
		fallthrough
	case len(members) > 0:
		err = c.md.Assemble(ctx, req.Alias, members, req.ReadOnly)
	case len(devs) < req.Count:
		return nil, fmt.Errorf("nvmeof connect %s: %d of %d legs attached and none carries the array yet: a new mirror needs every leg (check the missing legs' portals)", req.Alias, len(devs), req.Count)
	default:
		err = c.md.Create(ctx, req.Alias, devs, req.ReadOnly)
	}
	if err != nil {
		return nil, fmt.Errorf("nvmeof connect %s: %w", req.Alias, err)
	}
	return r.completeArray(ctx, devs)
}

// mdMembers returns the devices among devs that carry an md superblock.
func (r replicated) mdMembers(ctx context.Context, devs []string) ([]string, error) {
	c := r.c
	var out []string
	for _, d := range devs {
		_, ok, err := c.md.Examine(ctx, d)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, d)
		}
	}
	return out, nil
}

// completeArray re-adds legs the running array lacks (a leg that was
// away resyncs what changed, by the bitmap) and describes the device.
func (r replicated) completeArray(ctx context.Context, devs []string) (*connector.Device, error) {
	c, req := r.c, r.req
	a, ok, err := c.md.Find(req.Alias, devs)
	if err == nil && !ok {
		err = fmt.Errorf("%s is not a running md array", md.Path(req.Alias))
	}
	if err != nil {
		return nil, fmt.Errorf("nvmeof connect %s: %w", req.Alias, err)
	}
	for _, d := range devs {
		if contains(a.Members, path.Base(d)) {
			continue
		}
		if err := c.md.ReAdd(ctx, req.Alias, d); err != nil {
			c.h.Log.Warn("nvmeof: a leg could not rejoin the mirror; it runs degraded", "alias", req.Alias, "leg", d, "err", err)
		}
	}
	if a.Degraded > 0 {
		c.h.Log.Warn("nvmeof: mirror assembled degraded", "alias", req.Alias, "missing", a.Degraded)
	}
	legs := make([]string, len(devs))
	for i, d := range devs {
		legs[i] = path.Base(d)
	}
	return &connector.Device{
		Path: md.Path(req.Alias), Type: connector.TypeBlock, Protocol: Protocol,
		Extra: map[string]string{ExtraAlias: req.Alias, ExtraMD: a.Device, ExtraLegs: strings.Join(legs, ",")},
	}, nil
}

// legDevice is a one-replica volume's device: its leg's namespace.
func (r replicated) legDevice(dev string) *connector.Device {
	c, req := r.c, r.req
	d := c.device(req.Legs[0], path.Base(dev))
	d.Extra[ExtraAlias] = req.Alias
	return d
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// legNamespaces returns the attached namespace of each leg ("" for one
// not attached).
func (r replicated) legNamespaces() []string {
	c, req := r.c, r.req
	out := make([]string, len(req.Legs))
	for i, leg := range req.Legs {
		ctrls, err := controllers(c.h.FS, leg.NQN)
		if err != nil || len(ctrls) == 0 {
			continue
		}
		out[i], _, _ = findNamespace(c.h.FS, leg, ctrls)
	}
	return out
}

func devPaths(names []string) []string {
	var out []string
	for _, n := range names {
		if n != "" {
			out = append(out, "/dev/"+n)
		}
	}
	return out
}

// paths is the array when it runs, else the legs' namespaces.
func (r replicated) paths() ([]string, error) {
	c, req := r.c, r.req
	legs := devPaths(r.legNamespaces())
	if _, ok, err := c.md.Find(req.Alias, legs); err != nil || ok {
		return []string{md.Path(req.Alias)}, err
	}
	return legs, nil
}

// disconnect stops the array (refused while it is in use,
// unless forced), then detaches every leg; a leg's failure does not stop
// the others.
func (r replicated) disconnect(ctx context.Context, opts connector.DisconnectOptions) error {
	c, req := r.c, r.req
	legs := devPaths(r.legNamespaces())
	a, ok, err := c.md.Find(req.Alias, legs)
	if err != nil {
		return fmt.Errorf("nvmeof disconnect %s: %w", req.Alias, err)
	}
	if ok {
		if err := c.release(ctx, "/dev/"+a.Device, opts.Force); err != nil {
			return fmt.Errorf("nvmeof disconnect %s: %w", req.Alias, err)
		}
		if err := c.md.Stop(ctx, a.Device); err != nil {
			return fmt.Errorf("nvmeof disconnect %s: %w", req.Alias, err)
		}
	}
	var errs []error
	for _, leg := range req.Legs {
		errs = append(errs, c.disconnectTarget(ctx, leg, opts))
	}
	return errors.Join(errs...)
}

// extend rescans every attached leg, then grows the array.
func (r replicated) extend(ctx context.Context, newSize int64) (*connector.Resize, error) {
	c, req := r.c, r.req
	names := r.legNamespaces()
	var last *connector.Resize
	for i, leg := range req.Legs {
		if names[i] == "" {
			c.h.Log.Warn("nvmeof extend: leg not attached; it grows when it rejoins", "alias", req.Alias, "nqn", leg.NQN)
			continue
		}
		r, err := c.extendTarget(ctx, leg, nil, newSize)
		if err != nil {
			return nil, err
		}
		last = r
	}
	if last == nil {
		return nil, fmt.Errorf("nvmeof extend %s: no leg is attached", req.Alias)
	}
	a, ok, err := c.md.Find(req.Alias, devPaths(names))
	if err != nil || !ok {
		return last, err // one replica handed out as its leg
	}
	old, err := c.nsSize(a.Device)
	if err != nil {
		return nil, err
	}
	if err := c.md.Grow(ctx, req.Alias); err != nil {
		return nil, fmt.Errorf("nvmeof extend %s: %w", req.Alias, err)
	}
	cur, err := c.nsSize(a.Device)
	if err != nil {
		return nil, err
	}
	return &connector.Resize{Device: md.Path(req.Alias), OldSize: old, NewSize: cur}, nil
}
