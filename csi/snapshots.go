package csi

import (
	"context"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
)

func (s controller) CreateSnapshot(ctx context.Context, req *csipb.CreateSnapshotRequest) (*csipb.CreateSnapshotResponse, error) {
	name := req.GetName()
	if name == "" {
		return nil, invalid("snapshot name missing")
	}
	if req.GetSourceVolumeId() == "" {
		return nil, invalid("source volume ID missing")
	}
	for k := range req.GetParameters() {
		return nil, invalid("unknown snapshot parameter %q: brick csi takes none", ident.Clip(k, 64))
	}
	vol, err := volumeID(req.GetSourceVolumeId())
	if err != nil {
		return nil, err
	}
	op := "create snapshot " + name
	unlock, err := s.d.locks.lock(ctx, "snapshot/"+name)
	if err != nil {
		return nil, toStatus(op, err)
	}
	defer unlock()
	found, err := s.d.cinder.Snapshots(ctx, name, "")
	if err != nil {
		return nil, toStatus(op, err)
	}
	switch {
	case len(found) > 1:
		return nil, status.Errorf(codes.Internal, "%d Cinder snapshots are named %s: delete the extra ones", len(found), name)
	case len(found) == 1 && found[0].VolumeID != vol:
		return nil, status.Errorf(codes.AlreadyExists, "snapshot %s exists (%s) of another volume, %s", name, found[0].ID, found[0].VolumeID)
	case len(found) == 1 && found[0].Status == "available":
		return &csipb.CreateSnapshotResponse{Snapshot: snapshotOf(&found[0])}, nil
	case len(found) == 1:
		return nil, status.Errorf(codes.Aborted, "snapshot %s (%s) is %s: try again", name, found[0].ID, ident.Clip(found[0].Status, 32))
	}
	if _, err := s.d.cinder.Volume(ctx, vol); err != nil {
		return nil, toStatus(op, err)
	}
	snap, err := s.d.cinder.CreateSnapshot(ctx, vol, name, map[string]string{MetadataName: name}, 0)
	if err != nil {
		return nil, toStatus(op, err)
	}
	return &csipb.CreateSnapshotResponse{Snapshot: snapshotOf(snap)}, nil
}

func snapshotOf(s *cinderapi.Snapshot) *csipb.Snapshot {
	return &csipb.Snapshot{
		SnapshotId: s.ID, SourceVolumeId: s.VolumeID, SizeBytes: int64(s.Size) * gib,
		CreationTime: timestamppb.New(s.CreatedAt), ReadyToUse: s.Status == "available",
	}
}

func (s controller) DeleteSnapshot(ctx context.Context, req *csipb.DeleteSnapshotRequest) (*csipb.DeleteSnapshotResponse, error) {
	id := req.GetSnapshotId()
	if id == "" {
		return nil, invalid("snapshot ID missing")
	}
	if !ident.IsUUID(id) {
		return &csipb.DeleteSnapshotResponse{}, nil // no such snapshot: deleted
	}
	unlock, err := s.d.locks.lock(ctx, "snapshot-id/"+id)
	if err != nil {
		return nil, toStatus("delete snapshot "+id, err)
	}
	defer unlock()
	if err := s.d.cinder.DeleteSnapshot(ctx, id, 0); err != nil {
		return nil, toStatus("delete snapshot "+id, err)
	}
	return &csipb.DeleteSnapshotResponse{}, nil
}

// GetSnapshot answers one snapshot by ID; an ID no Cinder snapshot can
// have is NotFound.
func (s controller) GetSnapshot(ctx context.Context, req *csipb.GetSnapshotRequest) (*csipb.GetSnapshotResponse, error) {
	id := req.GetSnapshotId()
	if id == "" {
		return nil, invalid("snapshot ID missing")
	}
	if !ident.IsUUID(id) {
		return nil, notFound("snapshot %s: no such snapshot (Cinder snapshot IDs are UUIDs)", connector.Quote(id))
	}
	snap, err := s.d.cinder.GetSnapshot(ctx, id)
	if err != nil {
		return nil, toStatus("get snapshot "+id, err)
	}
	return &csipb.GetSnapshotResponse{Snapshot: snapshotOf(snap)}, nil
}

func (s controller) ListSnapshots(ctx context.Context, req *csipb.ListSnapshotsRequest) (*csipb.ListSnapshotsResponse, error) {
	snaps, err := s.listSnapshots(ctx, req.GetSnapshotId(), req.GetSourceVolumeId())
	if err != nil {
		return nil, toStatus("list snapshots", err)
	}
	byID := make(map[string]*cinderapi.Snapshot, len(snaps))
	ids := make([]string, 0, len(snaps))
	for i := range snaps {
		byID[snaps[i].ID] = &snaps[i]
		ids = append(ids, snaps[i].ID)
	}
	from, to, next, err := page(ids, req.GetStartingToken(), req.GetMaxEntries())
	if err != nil {
		return nil, err
	}
	resp := &csipb.ListSnapshotsResponse{NextToken: next}
	for _, id := range ids[from:to] {
		resp.Entries = append(resp.Entries, &csipb.ListSnapshotsResponse_Entry{Snapshot: snapshotOf(byID[id])})
	}
	return resp, nil
}

// listSnapshots lists one snapshot by ID, or those of a volume, or all; an
// ID that cannot exist lists none.
func (s controller) listSnapshots(ctx context.Context, id, volume string) ([]cinderapi.Snapshot, error) {
	switch {
	case id != "":
		if !ident.IsUUID(id) {
			return nil, nil
		}
		snap, err := s.d.cinder.GetSnapshot(ctx, id)
		if isNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if volume != "" && snap.VolumeID != volume {
			return nil, nil
		}
		return []cinderapi.Snapshot{*snap}, nil
	case volume != "" && !ident.IsUUID(volume):
		return nil, nil
	}
	return s.d.cinder.Snapshots(ctx, "", volume)
}
