package attach

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
)

// Entry is one local attachment as `brick list` shows it.
type Entry struct {
	Record *Record
	// CinderStatus is the volume's status in Cinder, or "unknown: ..."
	// when Cinder could not be asked.
	CinderStatus string
	// SizeBytes is the device's size now on this host, else the size the
	// record holds (0: unknown).
	SizeBytes int64
}

// List returns the local records with each volume's Cinder status. It
// works without Cinder (cinder may be nil): the status is then "unknown".
func (m *Manager) List(ctx context.Context) ([]Entry, []error) {
	recs, errs := m.store().list()
	out := make([]Entry, 0, len(recs))
	for _, r := range recs {
		e := Entry{Record: r, CinderStatus: "unknown", SizeBytes: m.DeviceSize(r)}
		if m.Cinder != nil {
			if v, err := m.Cinder.Volume(ctx, r.VolumeID); err == nil {
				e.CinderStatus = v.Status
			} else if errors.Is(err, apierr.ErrNotFound) {
				e.CinderStatus = "deleted"
			} else {
				e.CinderStatus = "unknown"
				errs = append(errs, err)
			}
		}
		out = append(out, e)
	}
	return out, errs
}

// Record returns the local record of a volume (by ID or name).
func (m *Manager) Record(ref string) (*Record, error) {
	if id, ok := ident.ParseUUID(ref); ok {
		return m.store().load(id)
	}
	return m.findRecord(ref)
}

// VolumePaths returns the device paths of an attached volume present on
// this host: from the local record, else from Cinder's attachment for this
// host (like python-brick-cinderclient-ext's get-volume-paths).
func (m *Manager) VolumePaths(ctx context.Context, ref string, gather connector.GatherOptions) ([]string, error) {
	rec, err := m.Record(ref)
	if err != nil && !errors.Is(err, ErrNoRecord) {
		return nil, fmt.Errorf("get-volume-paths %s: %w", ref, err)
	}
	if rec == nil {
		if m.Cinder == nil {
			return nil, fmt.Errorf("get-volume-paths %s: %w", ref, ErrNoRecord)
		}
		vol, err := m.Cinder.FindVolume(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("get-volume-paths %s: %w", ref, err)
		}
		rec, err = m.recordFromCinder(ctx, vol, DetachOptions{Gather: gather})
		if err != nil {
			return nil, fmt.Errorf("get-volume-paths %s: %w", ref, err)
		}
	}
	if rec.ConnectionInfo == nil {
		return nil, nil
	}
	c, err := m.Connectors.For(rec.ConnectionInfo.DriverVolumeType)
	if err != nil {
		return nil, fmt.Errorf("get-volume-paths %s: %w", ref, err)
	}
	paths, err := c.DevicePaths(ctx, *rec.ConnectionInfo)
	if err != nil {
		return nil, fmt.Errorf("get-volume-paths %s: %w", ref, err)
	}
	return paths, nil
}

// VolumePath is one device path of a locally attached volume.
type VolumePath struct {
	VolumeID string
	Protocol string
	Path     string
}

// AllVolumePaths returns the device paths present on this host of every
// volume brick attached, optionally of one protocol (driver_volume_type).
func (m *Manager) AllVolumePaths(ctx context.Context, protocol string) ([]VolumePath, []error) {
	recs, errs := m.store().list()
	var out []VolumePath
	for _, r := range recs {
		if r.ConnectionInfo == nil || (protocol != "" && r.ConnectionInfo.DriverVolumeType != protocol) {
			continue
		}
		c, err := m.Connectors.For(r.ConnectionInfo.DriverVolumeType)
		if err != nil {
			errs = append(errs, fmt.Errorf("volume %s: %w", r.VolumeID, err))
			continue
		}
		paths, err := c.DevicePaths(ctx, *r.ConnectionInfo)
		if err != nil {
			errs = append(errs, fmt.Errorf("volume %s: %w", r.VolumeID, err))
			continue
		}
		for _, p := range paths {
			out = append(out, VolumePath{VolumeID: r.VolumeID, Protocol: r.ConnectionInfo.DriverVolumeType, Path: p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].VolumeID != out[j].VolumeID {
			return out[i].VolumeID < out[j].VolumeID
		}
		return out[i].Path < out[j].Path
	})
	return out, errs
}
