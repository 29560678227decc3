package csi

import (
	"context"
	"errors"
	"fmt"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/ident"
)

// node serves CSI's Node service.
type node struct {
	csipb.UnimplementedNodeServer
	d *Driver
}

func (s node) NodeGetInfo(context.Context, *csipb.NodeGetInfoRequest) (*csipb.NodeGetInfoResponse, error) {
	resp := &csipb.NodeGetInfoResponse{NodeId: s.d.cfg.NodeID, MaxVolumesPerNode: s.d.cfg.MaxVolumes}
	if t := topology(s.d.cfg.Zone); t != nil {
		resp.AccessibleTopology = t[0]
	}
	return resp, nil
}

func (s node) NodeGetCapabilities(context.Context, *csipb.NodeGetCapabilitiesRequest) (*csipb.NodeGetCapabilitiesResponse, error) {
	var caps []*csipb.NodeServiceCapability
	for _, t := range []csipb.NodeServiceCapability_RPC_Type{
		csipb.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME,
		csipb.NodeServiceCapability_RPC_GET_VOLUME_STATS,
		csipb.NodeServiceCapability_RPC_EXPAND_VOLUME,
		csipb.NodeServiceCapability_RPC_GET_VOLUME_HEALTH,
	} {
		caps = append(caps, &csipb.NodeServiceCapability{Type: &csipb.NodeServiceCapability_Rpc{
			Rpc: &csipb.NodeServiceCapability_RPC{Type: t}}})
	}
	return &csipb.NodeGetCapabilitiesResponse{Capabilities: caps}, nil
}

// NodeStageVolume completes the attachment the controller reserved with
// this node's connector, connects the volume (every protocol, multipath,
// LUKS as local-attach does, with its rollback), and for the mount access
// type formats it when blank and mounts it at the staging path
// (nosuid,nodev).
func (s node) NodeStageVolume(ctx context.Context, req *csipb.NodeStageVolumeRequest) (*csipb.NodeStageVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, invalid("volume ID missing")
	}
	staging := req.GetStagingTargetPath()
	if err := s.d.underKubelet("staging target path", staging); err != nil {
		return nil, err
	}
	if err := checkCap(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	id, err := volumeID(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	att := req.GetPublishContext()[PublishAttachmentID]
	if !ident.IsUUID(att) {
		return nil, invalid("publish context has no %s: ControllerPublishVolume must run first (the CSIDriver needs attachRequired: true)", PublishAttachmentID)
	}
	op := "stage volume " + id
	unlock, err := s.d.locks.lock(ctx, "volume/"+id)
	if err != nil {
		return nil, toStatus(op, err)
	}
	defer unlock()
	staged, err := s.staged(ctx, id, att, staging)
	if err != nil || staged {
		return &csipb.NodeStageVolumeResponse{}, toStatus(op, err)
	}
	if _, err := s.d.att.Attach(ctx, s.attachOptions(id, att, staging, req.GetVolumeCapability())); err != nil {
		return nil, toStatus(op, err)
	}
	return &csipb.NodeStageVolumeResponse{}, nil
}

func (s node) attachOptions(id, att, staging string, c *csipb.VolumeCapability) attach.AttachOptions {
	o := attach.AttachOptions{Volume: id, Attachment: att, Gather: s.d.cfg.Gather, Mode: "rw"}
	if readOnly(c) {
		o.Mode = "ro"
	}
	if m := c.GetMount(); m != nil {
		o.Mountpoint, o.Mkfs = staging, m.GetFsType()
		if o.Mkfs == "" {
			o.Mkfs = DefaultFSType
		}
	}
	return o
}

// staged reports whether this attachment is staged already; a record of
// an earlier attachment of the volume is detached first, a half-done one
// cleaned up, and a local-attach outside Kubernetes refused.
func (s node) staged(ctx context.Context, id, att, staging string) (bool, error) {
	rec, err := s.d.att.Record(id)
	switch {
	case errors.Is(err, attach.ErrNoRecord):
		return false, nil
	case err != nil:
		return false, err
	case !rec.ExternalAttachment:
		return false, status.Errorf(codes.FailedPrecondition, "volume %s is attached to this host by brick local-attach, not by Kubernetes: detach it first", id)
	case rec.Phase != attach.PhaseAttached:
		_, err := s.d.att.Cleanup(ctx, id, false)
		return false, err
	case rec.AttachmentID == att && (rec.Mountpoint == "" || rec.Mountpoint == staging):
		return true, nil
	case rec.AttachmentID == att:
		return false, status.Errorf(codes.FailedPrecondition, "volume %s is staged at %s, not %s", id, rec.Mountpoint, staging)
	}
	s.d.log.Warn("csi: volume staged with an earlier attachment; detaching it first", "volume", id, "old", rec.AttachmentID, "new", att)
	return false, s.d.att.Detach(ctx, attach.DetachOptions{Volume: id})
}

// NodeUnstageVolume unmounts the staging path, flushes, closes LUKS and
// disconnects; the Cinder attachment stays for ControllerUnpublish.
func (s node) NodeUnstageVolume(ctx context.Context, req *csipb.NodeUnstageVolumeRequest) (*csipb.NodeUnstageVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, invalid("volume ID missing")
	}
	if err := s.d.underKubelet("staging target path", req.GetStagingTargetPath()); err != nil {
		return nil, err
	}
	id, err := volumeID(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	op := "unstage volume " + id
	unlock, err := s.d.locks.lock(ctx, "volume/"+id)
	if err != nil {
		return nil, toStatus(op, err)
	}
	defer unlock()
	rec, err := s.d.att.Record(id)
	switch {
	case errors.Is(err, attach.ErrNoRecord):
		return &csipb.NodeUnstageVolumeResponse{}, nil
	case err != nil:
		return nil, toStatus(op, err)
	case !rec.ExternalAttachment:
		return nil, status.Errorf(codes.FailedPrecondition, "%s: attached by brick local-attach, not by Kubernetes: left alone", op)
	case rec.Phase != attach.PhaseAttached:
		_, err = s.d.att.Cleanup(ctx, id, false)
	default:
		err = s.d.att.Detach(ctx, attach.DetachOptions{Volume: id, Gather: s.d.cfg.Gather})
	}
	if err != nil {
		return nil, toStatus(op, err)
	}
	return &csipb.NodeUnstageVolumeResponse{}, nil
}

// stagedRecord is the record of a volume staged here, NotFound without one.
func (s node) stagedRecord(id string) (*attach.Record, error) {
	rec, err := s.d.att.Record(id)
	if errors.Is(err, attach.ErrNoRecord) {
		return nil, notFound("volume %s is not staged on this node", id)
	}
	if err != nil {
		return nil, err
	}
	if rec.Phase != attach.PhaseAttached {
		return nil, status.Errorf(codes.Aborted, "volume %s: staging did not finish (record %s, step %s)", id, rec.Phase, rec.Step)
	}
	return rec, nil
}

// Recover finishes or undoes what a crash left half done on volumes
// Kubernetes staged; staged volumes keep working (brick's records, not
// memory, say what is staged).
func (d *Driver) Recover(ctx context.Context) error {
	recs, errs := d.att.Records()
	for _, e := range errs {
		d.log.Warn("csi: unreadable record", "err", e.Error())
	}
	var first error
	for _, r := range recs {
		if !r.ExternalAttachment || r.Phase == attach.PhaseAttached {
			continue
		}
		if _, err := d.att.Cleanup(ctx, r.VolumeID, false); err != nil && first == nil {
			first = fmt.Errorf("clean up volume %s (left %s at step %s): %w", r.VolumeID, r.Phase, r.Step, err)
		}
	}
	return first
}
