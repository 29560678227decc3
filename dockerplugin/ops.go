package dockerplugin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
)

// maxIDLen bounds the per-container mount ID Docker passes (64 hex).
const maxIDLen = 128

// Create makes a new Cinder volume for name, or adopts the one -o volume=
// names (which must be available: in use elsewhere means another host
// writes to it). Creating a name that exists with no options is a no-op.
func (p *Plugin) Create(ctx context.Context, name string, opts map[string]string) error {
	if err := checkName(name); err != nil {
		return err
	}
	defer p.lockName(name)()
	if v, ok := p.get(name); ok {
		if len(opts) == 0 {
			return nil
		}
		return fmt.Errorf("volume %s exists already (Cinder volume %s); remove it first to create it with options", name, v.VolumeID)
	}
	o, err := parseOpts(opts, p.cfg.DefaultSizeGiB, p.cfg.MaxSizeGiB)
	if err != nil {
		return err
	}
	v := &Volume{Name: name, FS: o.FS, CreatedAt: time.Now().UTC()}
	if o.Adopt != "" {
		if v.VolumeID, err = p.adoptable(ctx, o.Adopt); err != nil {
			return err
		}
		return p.put(name, v)
	}
	vol, err := p.cinder.CreateVolume(ctx, cinderapi.CreateVolumeOpts{
		Name: name, SizeGiB: o.SizeGiB, VolumeType: o.Type, AvailabilityZone: o.Zone,
		Metadata: map[string]string{MetadataKey: name},
	}, 0)
	if err != nil {
		return err
	}
	v.VolumeID, v.Created = vol.ID, true
	if err := p.put(name, v); err != nil {
		if derr := p.cinder.DeleteVolume(context.WithoutCancel(ctx), vol.ID, 0); derr != nil {
			return fmt.Errorf("%w; the new Cinder volume %s is left behind: %v", err, vol.ID, derr)
		}
		return err
	}
	return nil
}

// adoptable returns the ID of an available Cinder volume no other name
// of the plugin holds.
func (p *Plugin) adoptable(ctx context.Context, ref string) (string, error) {
	vol, err := p.cinder.FindVolume(ctx, ref)
	if err != nil {
		return "", err
	}
	if vol.Status != "available" || len(vol.Attachments) > 0 {
		hosts := make([]string, 0, len(vol.Attachments))
		for _, a := range vol.Attachments {
			hosts = append(hosts, a.HostName)
		}
		where := "no host"
		if len(hosts) > 0 {
			where = strings.Join(hosts, ", ")
		}
		return "", fmt.Errorf("Cinder volume %s is %s (attached to %s): refusing to adopt a volume in use elsewhere",
			connector.Quote(ref), vol.Status, where)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, v := range p.vols {
		if v.VolumeID == vol.ID {
			return "", fmt.Errorf("Cinder volume %s is brick volume %s already", vol.ID, v.Name)
		}
	}
	return vol.ID, nil
}

// Remove forgets a volume, deleting it in Cinder when the plugin created
// it; refused while a container has it mounted.
func (p *Plugin) Remove(ctx context.Context, name string) error {
	defer p.lockName(name)()
	v, ok := p.get(name)
	if !ok {
		return nil // Docker may retry a Remove that succeeded
	}
	if len(v.Mounts) > 0 {
		return fmt.Errorf("%w: volume %s is mounted by %d container(s)", ErrInUse, name, len(v.Mounts))
	}
	if err := p.release(ctx, v.VolumeID); err != nil {
		return err
	}
	if v.Created {
		if err := p.cinder.DeleteVolume(ctx, v.VolumeID, 0); err != nil {
			return err
		}
	}
	return p.put(name, nil)
}

// Mount attaches and mounts the volume for one container (id), or only
// counts it when another container has it mounted already.
func (p *Plugin) Mount(ctx context.Context, name, id string) (string, error) {
	if id == "" || len(id) > maxIDLen || strings.ContainsFunc(id, ident.IsControl) {
		return "", fmt.Errorf("mount %s: bad mount ID from Docker", name)
	}
	defer p.lockName(name)()
	v, ok := p.get(name)
	if !ok {
		return "", errNoVolume(name)
	}
	mp := p.mountpoint(v.VolumeID)
	healthy := p.healthy(v.VolumeID, mp)
	if !healthy {
		if len(v.Mounts) > 0 {
			p.log.Warn("docker plugin: volume counted as mounted is not; attaching again", "volume", name, "mounts", len(v.Mounts))
		}
		if err := p.release(ctx, v.VolumeID); err != nil {
			return "", err
		}
		_, err := p.attacher.Attach(ctx, attach.AttachOptions{Volume: v.VolumeID, Gather: p.cfg.Gather, Mountpoint: mp, Mkfs: v.FS})
		if err != nil {
			return "", err
		}
		v.Mounts = nil
	}
	if !slices.Contains(v.Mounts, id) {
		v.Mounts = append(v.Mounts, id)
	}
	if err := p.put(name, &v); err != nil {
		if !healthy {
			if derr := p.attacher.Detach(context.WithoutCancel(ctx), attach.DetachOptions{Volume: v.VolumeID}); derr != nil {
				return "", fmt.Errorf("%w; the volume stays attached: %v", err, derr)
			}
		}
		return "", err
	}
	return mp, nil
}

// Unmount drops one container's mount; the last one detaches the volume.
func (p *Plugin) Unmount(ctx context.Context, name, id string) error {
	defer p.lockName(name)()
	v, ok := p.get(name)
	if !ok {
		return errNoVolume(name)
	}
	v.Mounts = slices.DeleteFunc(v.Mounts, func(m string) bool { return m == id })
	if err := p.put(name, &v); err != nil {
		return err
	}
	if len(v.Mounts) > 0 {
		return nil
	}
	return p.release(ctx, v.VolumeID)
}

// healthy reports whether the volume is attached by brick and mounted at mp.
func (p *Plugin) healthy(volumeID, mp string) bool {
	rec, err := p.attacher.Record(volumeID)
	if err != nil || rec.Phase != attach.PhaseAttached || rec.Mountpoint != mp {
		return false
	}
	ok, err := p.mounted(mp)
	return err == nil && ok
}

// release detaches the volume if brick has it attached, finishing or
// undoing what a crash left half done; no record is nothing to do.
func (p *Plugin) release(ctx context.Context, volumeID string) error {
	rec, err := p.attacher.Record(volumeID)
	switch {
	case errors.Is(err, attach.ErrNoRecord):
		return nil
	case err != nil:
		return err
	case rec.Phase == attach.PhaseAttached:
		return p.attacher.Detach(ctx, attach.DetachOptions{Volume: volumeID})
	}
	_, err = p.attacher.Cleanup(ctx, volumeID, false)
	return err
}

// Path is the volume's mountpoint while a container has it mounted.
func (p *Plugin) Path(name string) (string, error) {
	v, ok := p.get(name)
	if !ok {
		return "", errNoVolume(name)
	}
	if len(v.Mounts) == 0 {
		return "", nil
	}
	return p.mountpoint(v.VolumeID), nil
}

// Info is one volume as Get and List show it.
type Info struct {
	Name       string
	Mountpoint string         `json:",omitempty"`
	Status     map[string]any `json:",omitempty"`
}

// List shows every volume of the plugin (no Cinder call: Docker asks often).
func (p *Plugin) List() []Info {
	p.mu.Lock()
	names := sortedNames(p.vols)
	p.mu.Unlock()
	out := make([]Info, 0, len(names))
	for _, n := range names {
		mp, _ := p.Path(n)
		out = append(out, Info{Name: n, Mountpoint: mp})
	}
	return out
}

// getCinderTimeout bounds Get's Cinder lookup.
const getCinderTimeout = 10 * time.Second

// Get shows one volume with its Cinder status and local device.
func (p *Plugin) Get(ctx context.Context, name string) (Info, error) {
	v, ok := p.get(name)
	if !ok {
		return Info{}, errNoVolume(name)
	}
	mp, _ := p.Path(name)
	st := map[string]any{"volume_id": v.VolumeID, "created_by_brick": v.Created, "fs": v.FS, "mounts": len(v.Mounts)}
	cctx, cancel := context.WithTimeout(ctx, getCinderTimeout)
	defer cancel()
	if vol, err := p.cinder.Volume(cctx, v.VolumeID); err != nil {
		st["cinder_status"] = "unknown: " + errLine(err)
	} else {
		st["cinder_status"], st["size_gib"] = vol.Status, vol.Size
	}
	if rec, err := p.attacher.Record(v.VolumeID); err == nil && rec.Device != nil {
		st["device"], st["protocol"] = rec.DevicePath(), rec.Device.Protocol
		if rec.Device.WWN != "" {
			st["wwid"] = rec.Device.WWN
		}
	}
	return Info{Name: name, Mountpoint: mp, Status: st}, nil
}
