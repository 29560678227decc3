package attach

import (
	"context"
	"errors"
	"fmt"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
)

// ErrAttachmentGone means the record's attachment to this host no longer
// exists in Cinder (deleted, or the volume detached or deleted): the
// volume is not this host's to reconnect.
var ErrAttachmentGone = errors.New("attachment no longer in Cinder")

// Records returns every local record, sorted by volume ID, and an error for
// each unreadable one.
func (m *Manager) Records() ([]*Record, []error) { return m.store().list() }

// Reconnect brings back the host side of an attached volume from its
// Cinder attachment: connection info from Cinder (never from disk), the
// connector's Connect (which logs in lost paths and rescans missing disks
// of a device that is still there), dm-crypt when the mapping is closed,
// and the mount brick made. The Cinder attachment is neither created nor
// changed. ErrAttachmentGone when Cinder no longer has it.
func (m *Manager) Reconnect(ctx context.Context, volumeID string) (*Record, error) {
	rec, unlock, err := m.lockedRecord(ctx, "reconnect", volumeID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rr := restoreRun{m: m, rec: rec}
	if err := rr.checkAttachment(ctx); err != nil {
		return nil, fmt.Errorf("reconnect %s: %w", rec.VolumeID, err)
	}
	info, err := m.flowFor(rec).ConnectionInfo(ctx, rec.VolumeID, rec.AttachmentID, rec.Connector)
	if err != nil {
		return nil, fmt.Errorf("reconnect %s: %w", rec.VolumeID, err)
	}
	m.Host.Redactor.Add(info.Secrets()...)
	conn, err := rr.connectorAsAttached(info.DriverVolumeType)
	if err != nil {
		return nil, fmt.Errorf("reconnect %s: %w", rec.VolumeID, err)
	}
	dev, err := conn.Connect(ctx, info)
	if err != nil {
		return nil, opError("reconnect", rec.VolumeID, err)
	}
	rec.Device = dev
	if err := rr.reopen(ctx, info, conn); err != nil {
		return nil, opError("reconnect", rec.VolumeID, err)
	}
	rec.UpdatedAt = now()
	if err := m.store().save(rec); err != nil {
		return nil, fmt.Errorf("reconnect %s: %w", rec.VolumeID, err)
	}
	return rec, nil
}

// MultipathConnectors is a Connectors that also hands out its connectors
// with multipath on or off. Reconnect uses it, when Manager.Connectors has
// it, to connect a volume the way it was attached: at boot, brick restore
// runs without the --multipath of the original local-attach.
type MultipathConnectors interface {
	ForMultipath(driverVolumeType string, multipath bool) (connector.Connector, error)
}

// restoreRun is one Reconnect under way, on the volume's record read
// under its lock.
type restoreRun struct {
	m   *Manager
	rec *Record
}

// connectorAsAttached returns the connector for a record's protocol, with
// multipath as the record's attach used it when the registry can say.
func (rr restoreRun) connectorAsAttached(driverVolumeType string) (connector.Connector, error) {
	m, rec := rr.m, rr.rec
	if mc, ok := m.Connectors.(MultipathConnectors); ok {
		return mc.ForMultipath(driverVolumeType, AttachedMultipath(rec))
	}
	return m.Connectors.For(driverVolumeType)
}

// AttachedMultipath reports whether the record's attach asked for
// multipath (the connector sent to Cinder said so) or got a map.
func AttachedMultipath(rec *Record) bool {
	asked, _ := rec.Connector["multipath"].(bool)
	return asked || rec.Device != nil && rec.Device.MultipathID != ""
}

// lockedRecord takes the volume's lock and loads its record, which must be
// fully attached.
func (m *Manager) lockedRecord(ctx context.Context, op, volumeID string) (*Record, func(), error) {
	id, err := validVolumeID(volumeID)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", op, volumeID, err)
	}
	unlock, err := m.Host.Locks.Lock(ctx, "volume-"+id)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", op, id, err)
	}
	rec, err := m.store().load(id)
	if err == nil && rec.Phase != PhaseAttached {
		err = fmt.Errorf("%w: phase %s, step %s; run brick cleanup %s", ErrHalfDone, rec.Phase, rec.Step, id)
	}
	if err != nil {
		unlock()
		return nil, nil, fmt.Errorf("%s %s: %w", op, id, err)
	}
	return rec, unlock, nil
}

// checkAttachment asks Cinder whether the record's attachment to this host
// still exists.
func (rr restoreRun) checkAttachment(ctx context.Context) error {
	m, rec := rr.m, rr.rec
	ok, err := AttachedHere(ctx, m.Cinder, rec.VolumeID, rec.AttachmentID, rec.HostName)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: volume %s has no attachment %s for host %s", ErrAttachmentGone, rec.VolumeID, rec.AttachmentID, rec.HostName)
	}
	return nil
}

// AttachedHere reports whether Cinder shows volumeID attached to hostName
// (with attachmentID, when given). A deleted volume is not attached.
func AttachedHere(ctx context.Context, c Cinder, volumeID, attachmentID, hostName string) (bool, error) {
	vol, err := c.Volume(ctx, volumeID)
	if errors.Is(err, apierr.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, a := range vol.Attachments {
		if a.HostName == hostName && (attachmentID == "" || a.AttachmentID == attachmentID) {
			return true, nil
		}
	}
	return false, nil
}

// reopen opens dm-crypt again when the record has a mapping that is gone
// (fetching the key as the attach did), and mounts again what brick
// mounted, with the type and options of the attach.
func (rr restoreRun) reopen(ctx context.Context, info connector.ConnectionInfo, conn connector.Connector) error {
	m, rec := rr.m, rr.rec
	if rec.Crypt != nil && (rec.Crypt.Path == "" || !m.Host.FS.Exists(rec.Crypt.Path)) {
		if err := rr.reopenCrypt(ctx, info, conn); err != nil {
			return err
		}
	}
	if rec.Mountpoint == "" || !rec.Mounted {
		return nil
	}
	mounted, err := m.Host.Sys.IsMounted(rec.Mountpoint)
	if err != nil || mounted {
		return err
	}
	dev := rec.DevicePath()
	t, err := m.Host.MountType(ctx, dev, rec.MountFSType, rec.Formatted)
	if err != nil {
		return fmt.Errorf("mount %s on %s: %w", dev, rec.Mountpoint, err)
	}
	return m.Host.Mount(ctx, dev, rec.Mountpoint, t, host.MountOptions(rec.Mode == "ro", rec.MountSuidDev))
}

// reopenCrypt fetches an encrypted volume's key and opens its mapping
// again; it never writes a LUKS header (the attach did, or the volume is
// not what the record says).
func (rr restoreRun) reopenCrypt(ctx context.Context, info connector.ConnectionInfo, conn connector.Connector) error {
	m, rec := rr.m, rr.rec
	formatted := rec.Crypt.Formatted
	r := &attachRun{m: m, rec: rec, info: info, conn: conn, dev: rec.Device, reopen: true}
	if err := r.fetchCryptKey(ctx); err != nil {
		return err
	}
	if r.crypt == nil {
		return fmt.Errorf("%w %s: the record has a dm-crypt mapping but Cinder no longer says the volume is encrypted on this host: "+
			"check its volume type, then detach and attach it again", ErrEncrypted, rec.VolumeID)
	}
	if err := r.decrypt(ctx); err != nil {
		return err
	}
	rec.Crypt.Formatted = formatted
	return nil
}

// SuspendOptions are Suspend's inputs.
type SuspendOptions struct {
	// Unmount unmounts what brick mounted first (shutdown); without it a
	// mounted device is refused like any device in use.
	Unmount bool
	// Forget removes the record afterwards: the volume is no longer this
	// host's (its Cinder attachment is gone).
	Forget bool
	// Force disconnects even a device in use (data may be lost).
	Force bool
}

// Suspend takes the host side of an attached volume down — unmount,
// dm-crypt close, flush, disconnect — and keeps the Cinder attachment:
// at shutdown (the record stays, so Reconnect brings it back at boot), or
// for a volume whose attachment is gone (Forget).
func (m *Manager) Suspend(ctx context.Context, volumeID string, o SuspendOptions) error {
	rec, unlock, err := m.lockedRecord(ctx, "suspend", volumeID)
	if err != nil {
		return err
	}
	defer unlock()
	d := &detachRun{m: m, rec: rec, force: o.Force}
	if rec.ConnectionInfo != nil {
		d.info = *rec.ConnectionInfo
	}
	if d.conn, err = m.Connectors.For(d.info.DriverVolumeType); err != nil {
		return opError("suspend", rec.VolumeID, err)
	}
	if o.Unmount && rec.Mounted && rec.Mountpoint != "" {
		if err := m.Host.Unmount(ctx, rec.Mountpoint); err != nil {
			return opError("suspend", rec.VolumeID, err)
		}
	}
	for _, s := range d.cryptSteps() {
		if err := s.Do(ctx); err != nil {
			return opError("suspend", rec.VolumeID, err)
		}
	}
	if err := d.disconnect(ctx); err != nil {
		return opError("suspend", rec.VolumeID, err)
	}
	if o.Forget {
		return m.store().remove(rec.VolumeID)
	}
	rec.UpdatedAt = now()
	return m.store().save(rec)
}
