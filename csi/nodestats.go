package csi

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/ident"
)

// NodeGetVolumeStats reports bytes and inodes of a mounted volume, bytes
// of a block one.
func (s node) NodeGetVolumeStats(ctx context.Context, req *csipb.NodeGetVolumeStatsRequest) (*csipb.NodeGetVolumeStatsResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, invalid("volume ID missing")
	}
	if req.GetVolumePath() == "" {
		return nil, invalid("volume path missing")
	}
	rec, p, err := s.published(req.GetVolumeId(), req.GetVolumePath())
	if err != nil {
		return nil, err
	}
	op := "volume stats of " + rec.VolumeID
	fi, err := s.d.host.FS.Stat(p)
	if err != nil {
		return nil, notFound("%s: volume path %s: %v", op, p, err)
	}
	if !fi.IsDir() {
		n := s.d.att.DeviceSize(rec)
		return &csipb.NodeGetVolumeStatsResponse{Usage: []*csipb.VolumeUsage{{Total: n, Unit: csipb.VolumeUsage_BYTES}}}, nil
	}
	u, err := s.d.host.FS.Statfs(p)
	if err != nil {
		return nil, toStatus(op, err)
	}
	return &csipb.NodeGetVolumeStatsResponse{Usage: []*csipb.VolumeUsage{
		{Available: u.AvailableBytes, Total: u.TotalBytes, Used: u.UsedBytes, Unit: csipb.VolumeUsage_BYTES},
		{Available: u.FreeInodes, Total: u.TotalInodes, Used: u.UsedInodes, Unit: csipb.VolumeUsage_INODES},
	}}, nil
}

// published returns the record of a volume staged here and the clean
// volume path, NotFound when either is unknown.
func (s node) published(volume, p string) (*attach.Record, string, error) {
	id, err := volumeID(volume)
	if err != nil {
		return nil, "", err
	}
	rec, err := s.stagedRecord(id)
	if err != nil {
		return nil, "", toStatus("volume "+id, err)
	}
	if !path.IsAbs(p) || path.Clean(p) != p || !strings.HasPrefix(p, s.d.cfg.KubeletDir+"/") {
		return nil, "", notFound("volume %s is not published at %s (not under the kubelet directory)", id, ident.Clip(p, 256))
	}
	return rec, p, nil
}

// NodeGetVolumeHealth says whether every path of a staged volume is up:
// some down is DEGRADED, all down INACCESSIBLE.
func (s node) NodeGetVolumeHealth(ctx context.Context, req *csipb.NodeGetVolumeHealthRequest) (*csipb.NodeGetVolumeHealthResponse, error) {
	id, err := volumeID(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	rec, err := s.stagedRecord(id)
	if err != nil {
		return nil, toStatus("volume health of "+id, err)
	}
	h := &csipb.VolumeHealth{VolumeId: id}
	down, total := s.pathsDown(rec)
	switch {
	case total > 0 && len(down) == total:
		h.HealthStatuses = []*csipb.VolumeHealth_VolumeHealthEntry{{Status: csipb.VolumeHealthErrorType_INACCESSIBLE,
			Reason: "AllPathsDown", Message: fmt.Sprintf("every path is down: %s", strings.Join(down, ", "))}}
	case len(down) > 0:
		h.HealthStatuses = []*csipb.VolumeHealth_VolumeHealthEntry{{Status: csipb.VolumeHealthErrorType_DEGRADED,
			Reason: "PathsDown", Message: fmt.Sprintf("%d of %d paths down: %s", len(down), total, strings.Join(down, ", "))}}
	}
	return &csipb.NodeGetVolumeHealthResponse{VolumeHealth: h}, nil
}

// pathsDown lists the volume's SCSI paths the kernel does not run (gone,
// offline, blocked) and how many paths it has.
func (s node) pathsDown(rec *attach.Record) ([]string, int) {
	if rec.Device == nil {
		return nil, 0
	}
	var down []string
	for _, p := range rec.Device.Paths {
		name := strings.TrimPrefix(p, "/dev/")
		if !ident.DiskName(name) {
			continue
		}
		state, err := s.d.host.FS.ReadString("/sys/block/" + name + "/device/state")
		if err != nil || state != "running" {
			down = append(down, name)
		}
	}
	return down, len(rec.Device.Paths)
}

// NodeExpandVolume grows the volume on this host after Cinder grew it:
// every path rescanned, the map and LUKS resized, the filesystem grown,
// as brick extend --local-only does.
func (s node) NodeExpandVolume(ctx context.Context, req *csipb.NodeExpandVolumeRequest) (*csipb.NodeExpandVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, invalid("volume ID missing")
	}
	if req.GetVolumePath() == "" {
		return nil, invalid("volume path missing")
	}
	rec, _, err := s.published(req.GetVolumeId(), req.GetVolumePath())
	if err != nil {
		return nil, err
	}
	op := "expand volume " + rec.VolumeID
	unlock, err := s.d.locks.lock(ctx, "volume/"+rec.VolumeID)
	if err != nil {
		return nil, toStatus(op, err)
	}
	defer unlock()
	res, err := s.d.att.Extend(ctx, attach.ExtendOptions{Volume: rec.VolumeID, LocalOnly: true})
	if err != nil && !errors.Is(err, attach.ErrCannotExtend) {
		return nil, toStatus(op, err)
	}
	if res == nil {
		return &csipb.NodeExpandVolumeResponse{CapacityBytes: s.d.att.DeviceSize(rec)}, nil
	}
	return &csipb.NodeExpandVolumeResponse{CapacityBytes: res.NewSize}, nil
}
