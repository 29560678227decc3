package multipath

import (
	"context"
)

// Remove takes the map away at detach: its buffers are written out, then
// Flush removes it. A failure stops the detach unless force.
//
// Forced, the map gets one removal attempt after its queueing is turned
// off, and problems are only logged; held says the map is still open: the
// caller removes the paths beneath and then calls RemoveWhenClosed.
func (m *Multipath) Remove(ctx context.Context, mp *Map, force bool) (held bool, err error) {
	if err := m.flushBuffers(ctx, mp.Device); err != nil {
		if !force {
			return false, err
		}
		m.log.Warn("multipath: writing the map's buffers out failed; removing it anyway (--force)", "map", mp.Name, "err", err.Error())
	}
	if !force {
		return false, m.Flush(ctx, mp)
	}
	if !m.maps.stillThere(mp) {
		return false, nil
	}
	if err := m.mpd.DisableQueueing(ctx, mp); err != nil {
		// Queueing may already be off, or multipathd gone; removal decides.
		m.log.Debug("multipath: disable queueing", "map", mp.Name, "err", err.Error())
	}
	if err := m.Settle(ctx); err != nil {
		m.log.Debug("multipath: settle failed", "err", err.Error())
	}
	if err = m.removeMap(ctx, mp); err == nil || !m.maps.stillThere(mp) {
		return false, nil
	}
	m.log.Warn("multipath: the map is held open; removing its paths anyway (--force)", "map", mp.Name, "device", mp.DevPath(), "err", err.Error())
	return true, nil
}

// RemoveWhenClosed asks device-mapper to remove a held map as soon as its
// last holder closes it (deferred remove). multipathd's reload after the
// paths go cancels a pending deferred remove, so it first waits, within
// Options.MapTimeout, until the map has dropped its paths. The outcome is
// logged (the detach goes on either way); deferred says the map is still
// there, marked for removal.
func (m *Multipath) RemoveWhenClosed(ctx context.Context, mp *Map) (deferred bool) {
	wctx, cancel := context.WithTimeout(ctx, m.opts.MapTimeout)
	defer cancel()
	if err := m.fs.WaitFor(wctx, nil, m.opts.Backoff, func() (bool, error) {
		cur, err := m.maps.Map(mp.Device)
		return err != nil || cur.WWID != mp.WWID || len(cur.Paths) == 0, nil
	}); err != nil {
		m.log.Debug("multipath: the held map still lists paths; marking it for removal anyway", "map", mp.Name, "err", err.Error())
	}
	if !m.maps.stillThere(mp) {
		return false
	}
	if _, err := m.run(ctx, "dmsetup", "remove", "--deferred", mp.Name); err != nil {
		if m.maps.stillThere(mp) {
			m.log.Warn("multipath: could not mark the held map for removal; remove it once it is closed", "map", mp.Name, "device", mp.DevPath(), "command", "dmsetup remove "+mp.Name, "err", err.Error())
		}
		return false
	}
	if !m.maps.stillThere(mp) {
		return false
	}
	m.log.Warn("multipath: the map is still held open; device-mapper removes it when the last holder closes it (--force)", "map", mp.Name, "device", mp.DevPath())
	return true
}
