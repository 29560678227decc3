package dockerplugin

import (
	"context"
	"errors"
	"fmt"
)

// Reconcile runs at start-up. A volume whose counted mounts are gone (the
// host rebooted, or the mount was undone behind the plugin's back) is
// detached and its count cleared; a volume attached with no mount counted
// (the plugin died between the attach and saving its state, or before the
// last Unmount's detach) is detached; an attach or detach a crash left
// half done is undone or finished. Mounts that are still in place are
// left alone: their containers keep running across a plugin restart.
func (p *Plugin) Reconcile(ctx context.Context) error {
	p.mu.Lock()
	names := sortedNames(p.vols)
	p.mu.Unlock()
	var errs []error
	for _, name := range names {
		if err := p.reconcileOne(ctx, name); err != nil {
			errs = append(errs, fmt.Errorf("reconcile %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

func (p *Plugin) reconcileOne(ctx context.Context, name string) error {
	defer p.lockName(name)()
	v, ok := p.get(name)
	if !ok {
		return nil
	}
	mp := p.mountpoint(v.VolumeID)
	if len(v.Mounts) > 0 && p.healthy(v.VolumeID, mp) {
		return nil
	}
	if len(v.Mounts) > 0 {
		p.log.Warn("docker plugin: mounts lost (host restarted?); detaching", "volume", name, "mounts", len(v.Mounts))
		v.Mounts = nil
		if err := p.put(name, &v); err != nil {
			return err
		}
	}
	return p.release(ctx, v.VolumeID)
}
