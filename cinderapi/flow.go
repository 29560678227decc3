package cinderapi

import (
	"context"
	"fmt"
	"sort"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/attachments"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/connector"
)

// CompleteOpts describe the finished attachment.
type CompleteOpts struct {
	HostName string
	// Mountpoint is recorded as the attachment's device (legacy flow;
	// Cinder requires one, "na" when empty).
	Mountpoint string
	Mode       string // "rw" (default) or "ro"
}

// ReleaseOpts say what Release takes back.
type ReleaseOpts struct {
	// AttachmentID is the attachment; "" when unknown (legacy: the newest
	// attachment of HostName, if any).
	AttachmentID string
	// Connector is the connector the volume was exported to; nil when
	// Export never ran (legacy: nothing to terminate).
	Connector HostConnector
	HostName  string
}

// Flow is one way of attaching a volume to a host; both Cinder flows fit.
// A local attach calls Reserve, Export, (connect), Complete; Release takes
// back whatever of them ran, and is also the detach after the disconnect.
// BeginDetach marks the volume before a disconnect. Release and the undo
// BeginDetach returns treat "already done" as success.
type Flow interface {
	// Name is FlowV3 or FlowLegacy.
	Name() string
	// Reserve claims the volume; v3 returns the new attachment's ID.
	Reserve(ctx context.Context, volumeID, mode string) (attachmentID string, err error)
	// Export exports the volume to the connector's host.
	Export(ctx context.Context, volumeID, attachmentID string, conn HostConnector) (connector.ConnectionInfo, error)
	// Complete marks the volume in-use and returns the attachment ID.
	Complete(ctx context.Context, volumeID, attachmentID string, o CompleteOpts) (string, error)
	// Release ends the attachment and its export, or the reservation:
	// v3 deletes the attachment; legacy terminates the connection, then
	// detaches (os-detach) or unreserves.
	Release(ctx context.Context, volumeID string, o ReleaseOpts) error
	// BeginDetach marks the volume detaching, so nobody attaches it while
	// the device goes away (legacy; v3 has nothing to mark), and returns
	// how to roll that back (nil when there is nothing to roll back).
	BeginDetach(ctx context.Context, volumeID string) (rollback func(context.Context) error, err error)
	// ConnectionInfo returns the connection info of an existing
	// attachment (v3: from the attachment; legacy: initialize_connection
	// again, which returns the same export).
	ConnectionInfo(ctx context.Context, volumeID, attachmentID string, conn HostConnector) (connector.ConnectionInfo, error)
}

// ---- v3 ----

type v3Flow struct{ c *Client }

func (f *v3Flow) Name() string { return FlowV3 }

func (f *v3Flow) Reserve(ctx context.Context, volumeID, mode string) (string, error) {
	opts := AttachmentCreateOpts{VolumeID: volumeID}
	if mode != "" && f.c.Version.AtLeast(MVMode) {
		opts.Mode = mode
	}
	a, err := attachments.Create(ctx, f.c.SC, opts).Extract()
	if err != nil {
		return "", mapError("attachment create", volumeID, err)
	}
	return a.ID, nil
}

func (f *v3Flow) Export(ctx context.Context, volumeID, attachmentID string, conn HostConnector) (connector.ConnectionInfo, error) {
	a, err := attachments.Update(ctx, f.c.SC, attachmentID, attachments.UpdateOpts{Connector: conn}).Extract()
	return attachmentInfo("attachment update", volumeID, a, err)
}

func (f *v3Flow) Complete(ctx context.Context, volumeID, attachmentID string, _ CompleteOpts) (string, error) {
	return attachmentID, mapError("attachment complete", volumeID, attachments.Complete(ctx, f.c.SC, attachmentID).ExtractErr())
}

func (f *v3Flow) Release(ctx context.Context, volumeID string, o ReleaseOpts) error {
	if o.AttachmentID == "" {
		return nil
	}
	err := mapError("attachment delete", volumeID, attachments.Delete(ctx, f.c.SC, o.AttachmentID).ExtractErr())
	if isKind(err, apierr.ErrNotFound) {
		return nil
	}
	return err
}

func (f *v3Flow) BeginDetach(context.Context, string) (func(context.Context) error, error) {
	return nil, nil
}

func (f *v3Flow) ConnectionInfo(ctx context.Context, volumeID, attachmentID string, _ HostConnector) (connector.ConnectionInfo, error) {
	a, err := attachments.Get(ctx, f.c.SC, attachmentID).Extract()
	return attachmentInfo("attachment show", volumeID, a, err)
}

// attachmentInfo is the normalised connection info of an attachment
// gophercloud returned.
func attachmentInfo(step, volumeID string, a *attachments.Attachment, err error) (connector.ConnectionInfo, error) {
	if err != nil {
		return connector.ConnectionInfo{}, mapError(step, volumeID, err)
	}
	info, err := Attachment{*a}.Info()
	return info, mapError(step, volumeID, err)
}

// ---- legacy ----

type legacyFlow struct{ c *Client }

func (f *legacyFlow) Name() string { return FlowLegacy }

func (f *legacyFlow) Reserve(ctx context.Context, volumeID, _ string) (string, error) {
	return "", mapError("reserve", volumeID, volumes.Reserve(ctx, f.c.SC, volumeID).ExtractErr())
}

func (f *legacyFlow) Export(ctx context.Context, volumeID, _ string, conn HostConnector) (connector.ConnectionInfo, error) {
	raw, err := volumes.InitializeConnection(ctx, f.c.SC, volumeID, ConnectorOpts{Connector: conn}).Extract()
	if err != nil {
		return connector.ConnectionInfo{}, mapError("initialize_connection", volumeID, err)
	}
	info, err := connector.FromMap(raw)
	return info, mapError("initialize_connection", volumeID, err)
}

func (f *legacyFlow) Complete(ctx context.Context, volumeID, _ string, o CompleteOpts) (string, error) {
	mode := o.Mode
	if mode == "" {
		mode = "rw"
	}
	// os-attach requires a mountpoint; "na" is what Cinder itself records
	// for attachments without one.
	mp := o.Mountpoint
	if mp == "" {
		mp = "na"
	}
	opts := volumes.AttachOpts{MountPoint: mp, Mode: volumes.AttachMode(mode), HostName: o.HostName}
	if err := volumes.Attach(ctx, f.c.SC, volumeID, opts).ExtractErr(); err != nil {
		return "", mapError("attach", volumeID, err)
	}
	// os-attach answers 202 with no body; the attachment ID is on the volume.
	v, err := f.c.Volume(ctx, volumeID)
	if err != nil {
		return "", err
	}
	if id := newestAttachment(v, o.HostName); id != "" {
		return id, nil
	}
	return "", &apierr.Error{Service: Service, Op: "attach", Volume: volumeID, Kind: apierr.ErrUnexpected,
		Message: fmt.Sprintf("no attachment for host %q after os-attach (status %s)", o.HostName, v.Status)}
}

// newestAttachment is the ID of hostName's newest attachment, or "".
func newestAttachment(v *Volume, hostName string) string {
	var found []volumes.Attachment
	for _, a := range v.Attachments {
		if a.HostName == hostName {
			found = append(found, a)
		}
	}
	if len(found) == 0 {
		return ""
	}
	sort.Slice(found, func(i, j int) bool { return found[i].AttachedAt.After(found[j].AttachedAt) })
	return found[0].AttachmentID
}

func (f *legacyFlow) Release(ctx context.Context, volumeID string, o ReleaseOpts) error {
	if o.Connector != nil {
		err := volumes.TerminateConnection(ctx, f.c.SC, volumeID, ConnectorOpts{Connector: o.Connector}).ExtractErr()
		if err = mapError("terminate_connection", volumeID, err); err != nil && !isKind(err, apierr.ErrNotFound) {
			return err
		}
	}
	if o.AttachmentID != "" {
		return f.detach(ctx, volumeID, o.AttachmentID)
	}
	v, err := f.c.Volume(ctx, volumeID)
	if err != nil {
		if isKind(err, apierr.ErrNotFound) {
			return nil
		}
		return err
	}
	if id := newestAttachment(v, o.HostName); id != "" {
		return f.detach(ctx, volumeID, id)
	}
	// Only a volume still reserved by us goes back; any other status is
	// someone else's business.
	if v.Status != "attaching" && v.Status != "reserved" {
		return nil
	}
	return mapError("unreserve", volumeID, volumes.Unreserve(ctx, f.c.SC, volumeID).ExtractErr())
}

func (f *legacyFlow) detach(ctx context.Context, volumeID, attachmentID string) error {
	err := volumes.Detach(ctx, f.c.SC, volumeID, volumes.DetachOpts{AttachmentID: attachmentID}).ExtractErr()
	if err = mapError("detach", volumeID, err); err == nil || isKind(err, apierr.ErrNotFound) {
		return nil
	}
	// A second os-detach answers 409/400; gone is success.
	if v, verr := f.c.Volume(ctx, volumeID); verr == nil && !hasAttachment(v, attachmentID) {
		return nil
	}
	return err
}

func hasAttachment(v *Volume, id string) bool {
	for _, a := range v.Attachments {
		if a.AttachmentID == id {
			return true
		}
	}
	return false
}

func (f *legacyFlow) BeginDetach(ctx context.Context, volumeID string) (func(context.Context) error, error) {
	if err := mapError("begin_detaching", volumeID, volumes.BeginDetaching(ctx, f.c.SC, volumeID).ExtractErr()); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		return mapError("roll_detaching", volumeID, RollDetaching(ctx, f.c.SC, volumeID).ExtractErr())
	}, nil
}

func (f *legacyFlow) ConnectionInfo(ctx context.Context, volumeID, attachmentID string, conn HostConnector) (connector.ConnectionInfo, error) {
	return f.Export(ctx, volumeID, attachmentID, conn)
}
