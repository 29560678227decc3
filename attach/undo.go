package attach

import (
	"context"
	"errors"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
)

// undoer takes back the steps of a local-attach, reading what to undo
// from its record: a failed attach and a cleanup after a crash share it.
// Each undo treats "never happened" as done.
type undoer struct {
	m    *Manager
	flow cinderapi.Flow
	rec  *Record
	// orphans: look for an attachment brick created but never recorded
	// (cleanup after a crash).
	orphans bool
}

// release takes back what Cinder did for the attach, as far as it got:
// exported says whether the export ran. For v3 without an attachment ID
// brick died inside attachment create (orphans set): the orphan that left
// is looked for.
func (u undoer) release(ctx context.Context, exported bool) error {
	if u.rec.ExternalAttachment {
		return nil // its owner deletes it
	}
	o := cinderapi.ReleaseOpts{AttachmentID: u.rec.AttachmentID, HostName: u.rec.HostName}
	if exported {
		o.Connector = u.rec.Connector
	}
	if o.AttachmentID == "" && u.orphans && u.flow.Name() == cinderapi.FlowV3 {
		found, err := u.orphanAttachment(ctx, u.rec.VolumeID)
		if err != nil || found == "" {
			return err
		}
		o.AttachmentID = found
	}
	return u.flow.Release(ctx, u.rec.VolumeID, o)
}

func (u undoer) disconnect(ctx context.Context, info connector.ConnectionInfo, dev *connector.Device) error {
	c, err := u.m.Connectors.For(info.DriverVolumeType)
	if err != nil {
		return err
	}
	// The device never reached the user: force past a udev probe holding
	// it open.
	return c.Disconnect(ctx, info, dev, connector.DisconnectOptions{Force: true})
}

func (u undoer) unmount(ctx context.Context) error {
	return u.m.Host.Unmount(ctx, u.rec.Mountpoint)
}

// unregister deletes the Ironic target; without its UUID (brick died
// inside the register step, Ironic may have created it unrecorded) it is
// found by its tag.
func (u undoer) unregister(ctx context.Context) error {
	uuid := u.rec.IronicTargetUUID
	if uuid == "" {
		found, err := u.m.Targets.FindTarget(ctx, u.rec.IronicNode, u.rec.VolumeID, targetTag(u.rec))
		if err != nil || found == "" {
			return err
		}
		uuid = found
	}
	return u.m.Targets.DeleteTarget(ctx, u.rec.IronicNode, uuid)
}

// orphanAttachment finds the attachment a crash inside v3 attachment
// create left: the volume is "reserved" and has exactly one reserved
// attachment with no connection yet. Anything less certain is left alone.
func (u undoer) orphanAttachment(ctx context.Context, volumeID string) (string, error) {
	vol, err := u.m.Cinder.Volume(ctx, volumeID)
	if err != nil {
		if errors.Is(err, apierr.ErrNotFound) {
			return "", nil
		}
		return "", err
	}
	if vol.Status != "reserved" {
		return "", nil
	}
	atts, err := u.m.Cinder.Attachments(ctx, volumeID)
	if err != nil {
		return "", err
	}
	var found []string
	for _, a := range atts {
		if a.Status == "reserved" && !a.HasConnection() {
			found = append(found, a.ID)
		}
	}
	if len(found) != 1 {
		u.m.Host.Log.Warn("cleanup: cannot tell which reserved attachment is ours; leaving them", "volume", volumeID, "candidates", len(found))
		return "", nil
	}
	return found[0], nil
}
