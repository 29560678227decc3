package multipath

import (
	"context"
	"fmt"
	"sync"

	"github.com/brick-storage/brick/ident"
)

// Assemble returns the map over disks (all showing wwid), making multipathd
// build it over all of them at once:
//
//  1. wait until udev has processed every disk: multipathd reads a path's
//     WWID from udev's database and refuses a path it cannot identify;
//  2. while the WWID is still unknown, hand every disk to multipathd, which
//     keeps each as a path of no map yet (see introduce);
//  3. add the WWID to the wwids file, so find_multipaths strict or on
//     accepts even a single path;
//  4. hand each disk not in a map yet to multipathd again, all at once: the
//     first builds the map and takes in every path it knows;
//  5. wait for the map, then for it to hold every disk (N of M: a path that
//     does not join in time only warns).
//
// Options.MapTimeout bounds each wait.
func (m *Multipath) Assemble(ctx context.Context, wwid string, disks ...string) (*Map, error) {
	if !ident.WWID(wwid) {
		return nil, fmt.Errorf("multipath: WWID %q is not usable", wwid)
	}
	if mp, err := m.maps.MapOf(disks...); err == nil && mp.WWID == wwid && len(mp.Paths) >= len(disks) {
		return mp, nil
	}
	m.waitUdevAll(ctx, disks)
	added := false
	if !m.wwids.Known(wwid) {
		m.introduce(ctx, disks)
		if err := m.wwids.Add(ctx, wwid); err != nil {
			return nil, err
		}
		added = true
	}
	m.addPaths(ctx, disks)
	mp, err := m.WaitForMap(ctx, wwid, disks...)
	if err != nil {
		if added {
			// No map (multipathd died, or refused): a multipathd started
			// later must not build one under a single path in use.
			m.forgetAdded(context.WithoutCancel(ctx), wwid)
		}
		return nil, err
	}
	return m.waitAllPaths(ctx, mp, len(disks)), nil
}

// forgetAdded takes back a WWID Assemble added for a map that did not
// come; failing to only warns, as at detach.
func (m *Multipath) forgetAdded(ctx context.Context, wwid string) {
	if err := m.wwids.Remove(ctx, wwid); err != nil {
		m.log.Warn("multipath: could not forget the WWID of the map that did not come", "wwid", wwid, "err", err.Error())
	}
}

// Join hands disks that came up after the map was built to multipathd and
// waits, within Options.MapTimeout, until the map holds want paths. A path
// that does not join in time only warns: multipathd may add it later.
func (m *Multipath) Join(ctx context.Context, mp *Map, late []string, want int) *Map {
	m.addPaths(ctx, late)
	return m.waitAllPaths(ctx, mp, want)
}

func (m *Multipath) waitAllPaths(ctx context.Context, mp *Map, want int) *Map {
	if len(mp.Paths) >= want {
		return mp
	}
	cur, all := m.WaitForPaths(ctx, mp, want)
	if !all {
		m.log.Warn("multipath: map does not hold every path yet", "map", cur.Name, "paths", len(cur.Paths), "want", want)
	}
	return cur
}

// waitUdevAll waits for udev on every disk at once (WaitUdevDone); a disk
// udev does not finish is left for multipathd to judge.
func (m *Multipath) waitUdevAll(ctx context.Context, disks []string) {
	eachDisk(disks, func(d string) { m.waitUdev(ctx, d) })
}

func (m *Multipath) waitUdev(ctx context.Context, disk string) {
	if err := m.WaitUdevDone(ctx, disk); err != nil {
		m.log.Debug("multipath: udev has not processed the path", "disk", disk, "err", err.Error())
	}
}

// addPaths hands each disk that no map holds yet to multipathd, after udev
// has processed it. Each multipathd call can cost a second on a busy host
// and the paths are independent, so they go at once. Often multipathd has
// built the map from udev's event alone by then and no command is needed.
func (m *Multipath) addPaths(ctx context.Context, disks []string) {
	eachDisk(disks, func(d string) {
		m.waitUdev(ctx, d)
		if m.maps.held(d) {
			return
		}
		// "fail" here usually means multipathd knew the path already.
		if err := m.mpd.AddPath(ctx, d); err != nil {
			m.log.Debug("multipathd add path", "disk", d, "err", err.Error())
		}
	})
}

// introduce hands each disk to multipathd before the WWID is known, so
// that multipathd lists them all when the map is built. It hears of a path
// from udev only after udev's RUN programs and then reads it itself
// (inquiries, ALUA priority, path checker), which is slow over some
// transports (iSER on soft-RoCE: seconds). A map built from the paths it
// knew then holds only those; one that joins later waits for the map's
// own udev event (up to uev_wait_timeout, 30 s). An unknown WWID makes
// multipathd keep the path as an orphan instead of building a map for it
// (find_multipaths strict, the default, or on with a single path).
func (m *Multipath) introduce(ctx context.Context, disks []string) {
	if len(disks) < 2 {
		return
	}
	eachDisk(disks, func(d string) {
		if m.maps.held(d) {
			return
		}
		if err := m.mpd.AddPath(ctx, d); err != nil {
			m.log.Debug("multipathd add path before the WWID", "disk", d, "err", err.Error())
		}
	})
}

// eachDisk runs do for every disk in parallel and waits for all.
func eachDisk(disks []string, do func(disk string)) {
	var wg sync.WaitGroup
	for _, d := range disks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			do(d)
		}()
	}
	wg.Wait()
}
