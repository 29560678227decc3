package csi

import (
	"context"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
)

// ControllerExpandVolume grows the volume in Cinder (os-extend at a
// microversion that allows in-use volumes); the node then grows its side.
func (s controller) ControllerExpandVolume(ctx context.Context, req *csipb.ControllerExpandVolumeRequest) (*csipb.ControllerExpandVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, invalid("volume ID missing")
	}
	if req.GetCapacityRange() == nil {
		return nil, invalid("capacity range missing")
	}
	if c := req.GetVolumeCapability(); c != nil {
		if err := checkCap(c); err != nil {
			return nil, err
		}
	}
	size, err := sizeGiB(req.GetCapacityRange())
	if err != nil {
		return nil, err
	}
	id, err := volumeID(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	op := "expand volume " + id
	unlock, err := s.d.locks.lock(ctx, "volume/"+id)
	if err != nil {
		return nil, toStatus(op, err)
	}
	defer unlock()
	v, err := s.d.cinder.Volume(ctx, id)
	if err != nil {
		return nil, toStatus(op, err)
	}
	if v.Size < size {
		if v, err = s.d.cinder.ExtendVolume(ctx, id, size, 0); err != nil {
			return nil, toStatus(op, err)
		}
	}
	return &csipb.ControllerExpandVolumeResponse{CapacityBytes: int64(v.Size) * gib, NodeExpansionRequired: true}, nil
}
