package iscsi

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/scsi"
)

// connectMultipath brings every path up in parallel, each bounded by its
// own login timeout, and makes multipathd build the map over the paths that
// came up (N of M). The map is started as soon as one path is up, while
// slower paths still log in (a dead portal takes the whole login timeout):
// they join the map when they come.
func (c *Connector) connectMultipath(ctx context.Context, info *Info, targets []Target) (*connector.Device, error) {
	ps := c.startPaths(ctx, info, targets)
	if !ps.awaitFirst() {
		return nil, fmt.Errorf("iscsi connect: no path came up: %w", errors.Join(ps.errs...))
	}
	if ps.wwid == "" {
		first := ps.paths[0]
		ps.awaitRest()
		ps.undoAll()
		return nil, fmt.Errorf("iscsi connect: %w", first.id.NoMultipath(fmt.Sprintf("LUN %d of %s", first.target.LUN, first.target.IQN)))
	}
	// Every path up gets through udev before the WWID goes in, so
	// multipathd builds the map over all of them at once.
	ps.awaitUdev()
	early := len(ps.paths)
	mp, err := c.mp.Assemble(ctx, ps.wwid, disksOf(ps.paths)...)
	ps.awaitRest()
	if err == nil && len(ps.paths) > early {
		mp = c.mp.Join(ctx, mp, disksOf(ps.paths[early:]), len(ps.paths))
	}
	// Report the paths in the order of the connection info (the singular
	// target first), not in the order they came up.
	sort.SliceStable(ps.paths, func(a, b int) bool { return ps.paths[a].index < ps.paths[b].index })
	if err != nil {
		return c.singlePathOf(ctx, info, ps, err)
	}
	if !info.ReadOnly {
		if err := c.mp.WaitReadWrite(ctx, mp); err != nil {
			ps.undoAll()
			return nil, fmt.Errorf("iscsi connect: %w", err)
		}
	}
	dev := &connector.Device{
		Type: connector.TypeBlock, Protocol: "iscsi", WWN: ps.wwid,
		Paths: devPaths(disksOf(ps.paths)), Extra: targetExtra(info, ps.paths[0].target),
	}
	dev.OnMap(mp.DevPath(), mp.WWID, mp.ByIDPath(), mp.Name)
	return dev, nil
}

// singlePathOf falls back to the first path when multipathd built no map,
// unless multipath is enforced.
func (c *Connector) singlePathOf(ctx context.Context, info *Info, ps *pathSet, mapErr error) (*connector.Device, error) {
	if c.opts.EnforceMultipath {
		ps.undoAll()
		return nil, fmt.Errorf("iscsi connect: multipath enforced: %w", mapErr)
	}
	c.log.Warn("iscsi: no multipath map; using a single path", "err", mapErr.Error())
	disks := disksOf(ps.paths)
	if info.ReadOnly {
		if err := c.setReadOnly(ctx, disks[0]); err != nil {
			ps.undoAll()
			return nil, err
		}
	}
	return &connector.Device{
		Path: scsi.DevPath(disks[0]), Type: connector.TypeBlock, Protocol: "iscsi", WWN: ps.wwid,
		Paths: devPaths(disks), Extra: targetExtra(info, ps.paths[0].target),
	}, nil
}

// pathSet collects the paths of one multipath connect as they come up.
type pathSet struct {
	c        *Connector
	ctx      context.Context
	targets  []Target
	results  []*pathResult
	errs     []error
	finished chan int // index of a target whose attachPath returned
	pending  int      // attachPaths still running
	paths    []*pathResult
	wwid     string // of the first path up; every other path must match
}

// startPaths starts attachPath for every target at once.
func (c *Connector) startPaths(ctx context.Context, info *Info, targets []Target) *pathSet {
	ps := &pathSet{
		c: c, ctx: ctx, targets: targets,
		results:  make([]*pathResult, len(targets)),
		errs:     make([]error, len(targets)),
		finished: make(chan int, len(targets)),
		pending:  len(targets),
	}
	pre := c.prepareRecords(ctx, info, targets)
	for i := range targets {
		go func() {
			ps.results[i], ps.errs[i] = c.attachPath(ctx, info, pre[i])
			ps.finished <- i
		}()
	}
	return ps
}

// take accounts for the target at i: a path that came up joins the set
// when it shows the same LUN as the first one up; one that does not is
// not ours and is taken back.
func (ps *pathSet) take(i int) {
	ps.pending--
	r := ps.results[i]
	if r == nil {
		ps.c.log.Warn("iscsi: path did not come up", "target", ps.targets[i].String(), "err", ps.errs[i].Error())
		return
	}
	r.index = i
	if len(ps.paths) == 0 {
		ps.wwid = r.wwid
	}
	// Paths without a WWID cannot be matched: only the first one stays,
	// and connectMultipath refuses it.
	if r.wwid != ps.wwid || len(ps.paths) > 0 && r.wwid == "" {
		ps.c.log.Warn("iscsi: path shows a different LUN; leaving it out", "target", r.target.String(), "wwid", r.wwid, "want", ps.wwid)
		ps.c.undoPath(context.WithoutCancel(ps.ctx), r)
		return
	}
	ps.paths = append(ps.paths, r)
}

// awaitFirst waits until one path is up (false: none came up), then takes
// in the paths that are up by then too.
func (ps *pathSet) awaitFirst() bool {
	for ps.pending > 0 && len(ps.paths) == 0 {
		ps.take(<-ps.finished)
	}
	for ps.pending > 0 {
		select {
		case i := <-ps.finished:
			ps.take(i)
		default:
			return len(ps.paths) > 0
		}
	}
	return len(ps.paths) > 0
}

// awaitUdev waits until udev has processed every path that is up, taking in
// paths that come up meanwhile; a path still logging in is not waited for,
// so that multipathd can build the map over all the others at once.
func (ps *pathSet) awaitUdev() {
	done := make(chan struct{}, len(ps.targets))
	waiting := 0
	await := func(r *pathResult) {
		waiting++
		go func() {
			if err := ps.c.mp.WaitUdevDone(ps.ctx, r.disk); err != nil {
				ps.c.log.Debug("multipath: udev has not processed the path", "disk", r.disk, "err", err.Error())
			}
			done <- struct{}{}
		}()
	}
	for _, r := range ps.paths {
		await(r)
	}
	for waiting > 0 {
		select {
		case <-done:
			waiting--
		case i := <-ps.finished:
			n := len(ps.paths)
			ps.take(i)
			if len(ps.paths) > n {
				await(ps.paths[n])
			}
		}
	}
}

// awaitRest waits for every path still logging in.
func (ps *pathSet) awaitRest() {
	for ps.pending > 0 {
		ps.take(<-ps.finished)
	}
}

// undoAll takes back every path that came up.
func (ps *pathSet) undoAll() {
	for _, r := range ps.paths {
		ps.c.undoPath(context.WithoutCancel(ps.ctx), r)
	}
}

// disksOf lists the disks of the paths, in their order.
func disksOf(paths []*pathResult) []string {
	out := make([]string, len(paths))
	for i, r := range paths {
		out[i] = r.disk
	}
	return out
}
