package csi

import (
	"context"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
)

// nodeID refuses an empty node ID (InvalidArgument) and one no brick node
// plugin hands out (NotFound): brick's node IDs are UUIDs.
func nodeID(id string) (string, error) {
	if id == "" {
		return "", invalid("node ID missing")
	}
	if !ident.IsUUID(id) {
		return "", notFound("node %s: no such node (brick csi node IDs are UUIDs: see NodeGetInfo)", connector.Quote(id))
	}
	return strings.ToLower(id), nil
}

// ControllerPublishVolume reserves a Cinder attachment for the node (its
// instance_uuid is the node ID) and hands its ID to the node, which
// exports and completes it with its own connector at NodeStage.
func (s controller) ControllerPublishVolume(ctx context.Context, req *csipb.ControllerPublishVolumeRequest) (*csipb.ControllerPublishVolumeResponse, error) {
	id, err := volumeID(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	node, err := nodeID(req.GetNodeId())
	if err != nil {
		return nil, err
	}
	if err := checkCap(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	mode := "rw"
	if req.GetReadonly() || readOnly(req.GetVolumeCapability()) {
		mode = "ro"
	}
	op := "publish volume " + id + " to node " + node
	unlock, err := s.d.locks.lock(ctx, "volume/"+id)
	if err != nil {
		return nil, toStatus(op, err)
	}
	defer unlock()
	att, err := s.reserve(ctx, id, node, mode)
	if err != nil {
		return nil, toStatus(op, err)
	}
	return &csipb.ControllerPublishVolumeResponse{PublishContext: map[string]string{PublishAttachmentID: att}}, nil
}

// reserve returns the node's attachment of the volume, reserving one when
// there is none; one in another mode is AlreadyExists, another node's
// FailedPrecondition.
func (s controller) reserve(ctx context.Context, id, node, mode string) (string, error) {
	v, err := s.d.cinder.Volume(ctx, id)
	if err != nil {
		return "", err
	}
	atts, err := s.d.cinder.Attachments(ctx, id)
	if err != nil {
		return "", err
	}
	for _, a := range atts {
		switch {
		case strings.EqualFold(a.Instance, node) && a.AttachMode != "" && a.AttachMode != mode:
			return "", status.Errorf(codes.AlreadyExists, "volume %s is published to node %s %s already, not %s: unpublish it first", id, node, a.AttachMode, mode)
		case strings.EqualFold(a.Instance, node):
			return a.ID, nil
		case !v.Multiattach:
			return "", status.Errorf(codes.FailedPrecondition, "volume %s is attached elsewhere (attachment %s, instance %s, status %s): a Cinder volume serves one node at a time",
				id, a.ID, ident.Clip(a.Instance, 64), ident.Clip(a.Status, 32))
		}
	}
	a, err := s.d.cinder.ReserveAttachment(ctx, id, node, mode)
	if err != nil {
		return "", err
	}
	return a.ID, nil
}

// ControllerUnpublishVolume deletes the node's attachments of the volume
// (every node's when no node is named); Cinder ends their exports. Gone
// already is success.
func (s controller) ControllerUnpublishVolume(ctx context.Context, req *csipb.ControllerUnpublishVolumeRequest) (*csipb.ControllerUnpublishVolumeResponse, error) {
	id, err := volumeID(req.GetVolumeId())
	if status.Code(err) == codes.NotFound {
		return &csipb.ControllerUnpublishVolumeResponse{}, nil
	}
	if err != nil {
		return nil, err
	}
	node := strings.ToLower(req.GetNodeId())
	op := "unpublish volume " + id
	unlock, err := s.d.locks.lock(ctx, "volume/"+id)
	if err != nil {
		return nil, toStatus(op, err)
	}
	defer unlock()
	atts, err := s.d.cinder.Attachments(ctx, id)
	if err != nil {
		if isNotFound(err) {
			return &csipb.ControllerUnpublishVolumeResponse{}, nil
		}
		return nil, toStatus(op, err)
	}
	for _, a := range atts {
		if node != "" && !strings.EqualFold(a.Instance, node) {
			continue
		}
		if err := s.d.cinder.DeleteAttachment(ctx, id, a.ID); err != nil {
			return nil, toStatus(op, err)
		}
	}
	return &csipb.ControllerUnpublishVolumeResponse{}, nil
}

func isNotFound(err error) bool { return codeOf(err) == codes.NotFound }
