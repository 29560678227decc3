package csi

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
)

// StorageClass parameters, named as cinder-csi-plugin names them.
const (
	ParamType         = "type"
	ParamAvailability = "availability"
)

// k8sParamPrefix marks parameters the sidecars add (PVC name, namespace...).
const k8sParamPrefix = "csi.storage.k8s.io/"

// k8sMetadata are the sidecar parameters (external-provisioner's
// --extra-create-metadata) copied into the Cinder volume's metadata under
// their own names, as cinder-csi-plugin does: an admin sees which claim a
// volume serves.
var k8sMetadata = []string{k8sParamPrefix + "pvc/name", k8sParamPrefix + "pvc/namespace", k8sParamPrefix + "pv/name"}

// maxMetadataValue is Cinder's limit on a metadata value's length.
const maxMetadataValue = 255

// controller serves CSI's Controller service.
type controller struct {
	csipb.UnimplementedControllerServer
	d *Driver
}

func (s controller) ControllerGetCapabilities(context.Context, *csipb.ControllerGetCapabilitiesRequest) (*csipb.ControllerGetCapabilitiesResponse, error) {
	var caps []*csipb.ControllerServiceCapability
	for _, t := range []csipb.ControllerServiceCapability_RPC_Type{
		csipb.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csipb.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME,
		csipb.ControllerServiceCapability_RPC_LIST_VOLUMES,
		csipb.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT,
		csipb.ControllerServiceCapability_RPC_LIST_SNAPSHOTS,
		csipb.ControllerServiceCapability_RPC_GET_SNAPSHOT,
		csipb.ControllerServiceCapability_RPC_CLONE_VOLUME,
		csipb.ControllerServiceCapability_RPC_EXPAND_VOLUME,
		csipb.ControllerServiceCapability_RPC_PUBLISH_READONLY,
	} {
		caps = append(caps, &csipb.ControllerServiceCapability{Type: &csipb.ControllerServiceCapability_Rpc{
			Rpc: &csipb.ControllerServiceCapability_RPC{Type: t}}})
	}
	return &csipb.ControllerGetCapabilitiesResponse{Capabilities: caps}, nil
}

// createParams are CreateVolume's parameters, checked.
type createParams struct {
	volumeType, zone string
	meta             map[string]string // the k8sMetadata given
}

// parseParams refuses unknown parameters, so a typo does not silently
// make a volume of the default type.
func parseParams(p map[string]string) (createParams, error) {
	var o createParams
	for k, v := range p {
		switch {
		case k == ParamType:
			o.volumeType = v
		case k == ParamAvailability:
			o.zone = v
		case slices.Contains(k8sMetadata, k):
			if o.meta == nil {
				o.meta = map[string]string{}
			}
			o.meta[k] = ident.Clip(v, maxMetadataValue-len("..."))
		case strings.HasPrefix(k, k8sParamPrefix):
		default:
			return o, invalid("unknown parameter %s: brick csi takes %s and %s", connector.Quote(k), ParamType, ParamAvailability)
		}
	}
	return o, nil
}

// sizeGiB turns a capacity range into whole GiB: 1 GiB without one.
func sizeGiB(r *csipb.CapacityRange) (int, error) {
	if r == nil {
		return 1, nil
	}
	req, lim := r.GetRequiredBytes(), r.GetLimitBytes()
	switch {
	case req < 0 || lim < 0:
		return 0, invalid("capacity range: negative bytes")
	case req == 0 && lim == 0:
		return 0, invalid("capacity range: give required_bytes or limit_bytes (or no range for 1 GiB)")
	case lim > 0 && req > lim:
		return 0, invalid("capacity range: required_bytes %d above limit_bytes %d", req, lim)
	}
	n := max((req+gib-1)/gib, 1)
	if lim > 0 && n*gib > lim {
		return 0, status.Errorf(codes.OutOfRange, "capacity range: Cinder sizes volumes in whole GiB; %d GiB exceeds limit_bytes %d", n, lim)
	}
	if n > 1<<20 {
		return 0, status.Errorf(codes.OutOfRange, "capacity range: %d GiB is more than brick asks of Cinder", n)
	}
	return int(n), nil
}

// fits reports whether a volume of size GiB satisfies the range.
func fits(size int, r *csipb.CapacityRange) bool {
	b := int64(size) * gib
	return b >= r.GetRequiredBytes() && (r.GetLimitBytes() == 0 || b <= r.GetLimitBytes())
}

// zoneFor picks the zone: the parameter, else the first preferred, else
// the first requisite topology naming one.
func zoneFor(p createParams, req *csipb.TopologyRequirement) string {
	if p.zone != "" {
		return p.zone
	}
	for _, t := range append(slices.Clone(req.GetPreferred()), req.GetRequisite()...) {
		if z := t.GetSegments()[TopologyZoneKey]; z != "" {
			return z
		}
	}
	return ""
}

func (s controller) CreateVolume(ctx context.Context, req *csipb.CreateVolumeRequest) (*csipb.CreateVolumeResponse, error) {
	name := req.GetName()
	if name == "" {
		return nil, invalid("volume name missing")
	}
	if err := checkCaps(req.GetVolumeCapabilities()); err != nil {
		return nil, err
	}
	p, err := parseParams(req.GetParameters())
	if err != nil {
		return nil, err
	}
	size, err := sizeGiB(req.GetCapacityRange())
	if err != nil {
		return nil, err
	}
	unlock, err := s.d.locks.lock(ctx, "name/"+name)
	if err != nil {
		return nil, toStatus("create volume "+name, err)
	}
	defer unlock()
	op := "create volume " + name
	if v, err := s.existing(ctx, name, req); err != nil || v != nil {
		return s.response(v, req), toStatus(op, err)
	}
	meta := map[string]string{MetadataName: name}
	maps.Copy(meta, p.meta)
	o := cinderapi.CreateVolumeOpts{Name: name, SizeGiB: size, VolumeType: p.volumeType,
		AvailabilityZone: zoneFor(p, req.GetAccessibilityRequirements()), Metadata: meta}
	srcSize, err := s.source(ctx, req.GetVolumeContentSource(), &o)
	if err != nil {
		return nil, toStatus(op, err)
	}
	if o.SizeGiB, err = fitSource(size, srcSize, req.GetCapacityRange()); err != nil {
		return nil, err
	}
	v, err := s.d.cinder.CreateVolume(ctx, o, 0)
	if err != nil {
		return nil, toStatus(op, err)
	}
	return s.response(v, req), nil
}

// existing returns the volume made for name already, or nil; one that does
// not fit the request is AlreadyExists.
func (s controller) existing(ctx context.Context, name string, req *csipb.CreateVolumeRequest) (*cinderapi.Volume, error) {
	vols, err := s.d.cinder.Volumes(ctx, name)
	if err != nil || len(vols) == 0 {
		return nil, err
	}
	if len(vols) > 1 {
		return nil, status.Errorf(codes.Internal, "%d Cinder volumes are named %s: delete the extra ones", len(vols), name)
	}
	v := &vols[0]
	src := req.GetVolumeContentSource()
	switch {
	case !fits(v.Size, req.GetCapacityRange()) && req.GetCapacityRange() != nil:
		return nil, status.Errorf(codes.AlreadyExists, "volume %s exists (%s, %d GiB) with another size", name, v.ID, v.Size)
	case src.GetSnapshot() != nil && src.GetSnapshot().GetSnapshotId() != v.SnapshotID,
		src.GetVolume() != nil && src.GetVolume().GetVolumeId() != v.SourceVolID:
		return nil, status.Errorf(codes.AlreadyExists, "volume %s exists (%s) with another content source", name, v.ID)
	case v.Status == "creating" || v.Status == "downloading":
		return nil, status.Errorf(codes.Aborted, "volume %s (%s) is still being created: try again", name, v.ID)
	case v.Status == "error":
		return nil, status.Errorf(codes.Internal, "volume %s (%s) is in status error: delete it in Cinder, then try again", name, v.ID)
	}
	return v, nil
}

// source sets the snapshot or the volume to start from and returns its
// size in GiB (0 without one).
func (s controller) source(ctx context.Context, src *csipb.VolumeContentSource, o *cinderapi.CreateVolumeOpts) (int, error) {
	switch {
	case src.GetSnapshot() != nil:
		id := src.GetSnapshot().GetSnapshotId()
		if !ident.IsUUID(id) {
			return 0, notFound("source snapshot %s: no such snapshot", connector.Quote(id))
		}
		snap, err := s.d.cinder.GetSnapshot(ctx, id)
		if err != nil {
			return 0, err
		}
		o.SnapshotID = id
		return snap.Size, nil
	case src.GetVolume() != nil:
		id, err := volumeID(src.GetVolume().GetVolumeId())
		if err != nil {
			return 0, err
		}
		v, err := s.d.cinder.Volume(ctx, id)
		if err != nil {
			return 0, err
		}
		o.SourceVolID = id
		return v.Size, nil
	case src != nil:
		return 0, invalid("volume content source: give a snapshot or a volume")
	}
	return 0, nil
}

// fitSource sizes a volume made from a source of srcSize GiB: Cinder
// makes none smaller than its source, and required_bytes is only a
// minimum, so a smaller request gets the source's size unless
// limit_bytes forbids it.
func fitSource(size, srcSize int, r *csipb.CapacityRange) (int, error) {
	if srcSize <= size {
		return size, nil
	}
	if lim := r.GetLimitBytes(); lim > 0 && int64(srcSize)*gib > lim {
		return 0, status.Errorf(codes.OutOfRange, "capacity range: the source is %d GiB, more than limit_bytes %d; Cinder makes no volume smaller than its source", srcSize, lim)
	}
	return srcSize, nil
}

func (s controller) response(v *cinderapi.Volume, req *csipb.CreateVolumeRequest) *csipb.CreateVolumeResponse {
	if v == nil {
		return nil
	}
	return &csipb.CreateVolumeResponse{Volume: &csipb.Volume{
		VolumeId: v.ID, CapacityBytes: int64(v.Size) * gib, ContentSource: req.GetVolumeContentSource(),
		AccessibleTopology: topology(v.AvailabilityZone),
	}}
}

func topology(zone string) []*csipb.Topology {
	if zone == "" {
		return nil
	}
	return []*csipb.Topology{{Segments: map[string]string{TopologyZoneKey: zone}}}
}

func (s controller) DeleteVolume(ctx context.Context, req *csipb.DeleteVolumeRequest) (*csipb.DeleteVolumeResponse, error) {
	id, err := volumeID(req.GetVolumeId())
	if status.Code(err) == codes.NotFound {
		return &csipb.DeleteVolumeResponse{}, nil // no such volume: deleted
	}
	if err != nil {
		return nil, err
	}
	unlock, err := s.d.locks.lock(ctx, "volume/"+id)
	if err != nil {
		return nil, toStatus("delete volume "+id, err)
	}
	defer unlock()
	if err := s.d.cinder.DeleteVolume(ctx, id, 0); err != nil {
		return nil, toStatus("delete volume "+id, err)
	}
	return &csipb.DeleteVolumeResponse{}, nil
}

func (s controller) ValidateVolumeCapabilities(ctx context.Context, req *csipb.ValidateVolumeCapabilitiesRequest) (*csipb.ValidateVolumeCapabilitiesResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, invalid("volume ID missing")
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, invalid("volume capabilities missing")
	}
	id, err := volumeID(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	if _, err := s.d.cinder.Volume(ctx, id); err != nil {
		return nil, toStatus("validate volume "+id, err)
	}
	if err := checkCaps(req.GetVolumeCapabilities()); err != nil {
		return &csipb.ValidateVolumeCapabilitiesResponse{Message: status.Convert(err).Message()}, nil
	}
	if _, err := parseParams(req.GetParameters()); err != nil {
		return &csipb.ValidateVolumeCapabilitiesResponse{Message: status.Convert(err).Message()}, nil
	}
	return &csipb.ValidateVolumeCapabilitiesResponse{Confirmed: &csipb.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext: req.GetVolumeContext(), VolumeCapabilities: req.GetVolumeCapabilities(), Parameters: req.GetParameters(),
	}}, nil
}

func (s controller) ListVolumes(ctx context.Context, req *csipb.ListVolumesRequest) (*csipb.ListVolumesResponse, error) {
	vols, err := s.d.cinder.Volumes(ctx, "")
	if err != nil {
		return nil, toStatus("list volumes", err)
	}
	ids := make([]string, len(vols))
	for i, v := range vols {
		ids[i] = v.ID
	}
	from, to, next, err := page(ids, req.GetStartingToken(), req.GetMaxEntries())
	if err != nil {
		return nil, err
	}
	resp := &csipb.ListVolumesResponse{NextToken: next}
	sort.Slice(vols, func(i, j int) bool { return vols[i].ID < vols[j].ID })
	for _, v := range vols[from:to] {
		resp.Entries = append(resp.Entries, &csipb.ListVolumesResponse_Entry{Volume: &csipb.Volume{
			VolumeId: v.ID, CapacityBytes: int64(v.Size) * gib, AccessibleTopology: topology(v.AvailabilityZone)}})
	}
	return resp, nil
}

// page picks a page of ids (sorted here): the token is the last ID of the
// previous page, so a page starts after it even when that one is gone.
func page(ids []string, token string, maxEntries int32) (from, to int, next string, err error) {
	if maxEntries < 0 {
		return 0, 0, "", invalid("max_entries %d: must not be negative", maxEntries)
	}
	if token != "" && !ident.IsUUID(token) {
		return 0, 0, "", status.Errorf(codes.Aborted, "starting token %s: not a token brick csi handed out", connector.Quote(token))
	}
	sort.Strings(ids)
	from = sort.SearchStrings(ids, token)
	if from < len(ids) && ids[from] == token {
		from++
	}
	to = len(ids)
	if maxEntries > 0 && from+int(maxEntries) < to {
		to = from + int(maxEntries)
		next = ids[to-1]
	}
	return from, to, next, nil
}

// describe names a volume for errors.
func describe(v *cinderapi.Volume) string {
	return fmt.Sprintf("%s (%s, %d GiB)", v.ID, v.Status, v.Size)
}
