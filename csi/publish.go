package csi

import (
	"context"
	"errors"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brick-storage/brick/cinderapi"
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

// ControllerPublishVolume reserves a Cinder attachment for the node and
// hands its ID to the node, which exports and completes it with its own
// connector at NodeStage.
func (s controller) ControllerPublishVolume(ctx context.Context, req *csipb.ControllerPublishVolumeRequest) (*csipb.ControllerPublishVolumeResponse, error) {
	// Every field is checked (InvalidArgument) before an ID is looked
	// at (NotFound), as the spec's codes go.
	switch {
	case req.GetVolumeId() == "":
		return nil, invalid("volume ID missing")
	case req.GetNodeId() == "":
		return nil, invalid("node ID missing")
	}
	if err := checkCap(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	id, err := volumeID(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	node, err := nodeID(req.GetNodeId())
	if err != nil {
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

// nodeAttachments is what the controller knows of a volume's attachments:
// which node each of its reservations is for (from the volume's metadata,
// since the attachments carry no instance), and the nodes whose
// reservation a crash may have cut short.
type nodeAttachments struct {
	atts      []cinderapi.Attachment
	owner     map[string]string // attachment ID → node
	reserving map[string]bool   // node → reservation under way
	keys      map[string]string // node → its metadata key
}

func (s controller) nodeAttachments(ctx context.Context, id string) (*cinderapi.Volume, *nodeAttachments, error) {
	v, err := s.d.cinder.Volume(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	atts, err := s.d.cinder.Attachments(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	na := &nodeAttachments{atts: atts, owner: map[string]string{}, reserving: map[string]bool{}, keys: map[string]string{}}
	for k, val := range v.Metadata {
		node, ok := strings.CutPrefix(k, MetadataNodePrefix)
		if !ok {
			continue
		}
		na.keys[node] = k
		if val == MetadataReserving {
			na.reserving[node] = true
		} else {
			na.owner[val] = node
		}
	}
	return v, na, nil
}

// mine reports whether attachment a is node's: reserved for it, or (after
// a crash between the reservation and its record) never used by anyone
// while node's reservation was under way.
func (na *nodeAttachments) mine(a cinderapi.Attachment, node string) bool {
	if o, ok := na.owner[a.ID]; ok {
		return o == node
	}
	return na.reserving[node] && a.Instance == "" && !a.HasConnection() && a.Status == "reserved"
}

// reserve returns the node's attachment of the volume, reserving one when
// there is none; one in another mode is AlreadyExists, another
// consumer's FailedPrecondition (unless the volume is multiattach).
func (s controller) reserve(ctx context.Context, id, node, mode string) (string, error) {
	v, na, err := s.nodeAttachments(ctx, id)
	if err != nil {
		return "", err
	}
	for _, a := range na.atts {
		switch mine := na.mine(a, node); {
		case mine && a.AttachMode != "" && a.AttachMode != mode:
			return "", status.Errorf(codes.AlreadyExists, "volume %s is published to node %s %s already, not %s: unpublish it first", id, node, a.AttachMode, mode)
		case mine && na.owner[a.ID] == node:
			return a.ID, nil
		case mine: // adopt the reservation a crash left unrecorded
			return a.ID, s.record(ctx, id, node, a.ID)
		case !v.Multiattach:
			return "", status.Errorf(codes.FailedPrecondition, "volume %s is attached elsewhere (attachment %s, status %s): a Cinder volume serves one node at a time",
				id, a.ID, ident.Clip(a.Status, 32))
		}
	}
	if err := s.record(ctx, id, node, MetadataReserving); err != nil {
		return "", err
	}
	a, err := s.d.cinder.ReserveAttachment(ctx, id, mode)
	if err != nil {
		return "", errors.Join(err, s.d.cinder.DeleteVolumeMetadata(ctx, id, MetadataNodePrefix+node))
	}
	if err := s.record(ctx, id, node, a.ID); err != nil {
		return "", errors.Join(err, s.d.cinder.DeleteAttachment(ctx, id, a.ID))
	}
	return a.ID, nil
}

// record writes which attachment (or MetadataReserving) is node's into
// the volume's metadata.
func (s controller) record(ctx context.Context, id, node, val string) error {
	return s.d.cinder.SetVolumeMetadata(ctx, id, map[string]string{MetadataNodePrefix + node: val})
}

// ControllerUnpublishVolume deletes the node's attachments of the volume
// (every node's brick csi reserved when no node is named), then their
// records; Cinder ends their exports. Gone already is success.
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
	_, na, err := s.nodeAttachments(ctx, id)
	if isNotFound(err) {
		return &csipb.ControllerUnpublishVolumeResponse{}, nil
	}
	if err != nil {
		return nil, toStatus(op, err)
	}
	if err := s.release(ctx, id, node, na); err != nil {
		return nil, toStatus(op, err)
	}
	return &csipb.ControllerUnpublishVolumeResponse{}, nil
}

// release deletes node's attachments (every recorded node's when node is
// ""), then the records, so a failure leaves the record for the retry.
func (s controller) release(ctx context.Context, id, node string, na *nodeAttachments) error {
	for n, key := range na.keys {
		if node != "" && n != node {
			continue
		}
		for _, a := range na.atts {
			if na.mine(a, n) {
				if err := s.d.cinder.DeleteAttachment(ctx, id, a.ID); err != nil {
					return err
				}
			}
		}
		if err := s.d.cinder.DeleteVolumeMetadata(ctx, id, key); err != nil {
			return err
		}
	}
	return nil
}

func isNotFound(err error) bool { return codeOf(err) == codes.NotFound }
