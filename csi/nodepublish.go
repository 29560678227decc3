package csi

import (
	"context"
	"path"
	"strings"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brick-storage/brick/host"
)

// mountTimeout bounds one mount or umount of a target path.
const mountTimeout = 2 * time.Minute

// NodePublishVolume bind-mounts the staged filesystem (nosuid,nodev) on a
// target directory, or the device on a target file for the block access
// type; read-only when asked.
func (s node) NodePublishVolume(ctx context.Context, req *csipb.NodePublishVolumeRequest) (*csipb.NodePublishVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, invalid("volume ID missing")
	}
	target := req.GetTargetPath()
	if err := s.d.underKubelet("target path", target); err != nil {
		return nil, err
	}
	if err := checkCap(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	if err := s.d.underKubelet("staging target path", req.GetStagingTargetPath()); err != nil {
		return nil, err
	}
	id, err := volumeID(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	op := "publish volume " + id + " at " + target
	unlock, err := s.d.locks.lock(ctx, "volume/"+id)
	if err != nil {
		return nil, toStatus(op, err)
	}
	defer unlock()
	rec, err := s.stagedRecord(id)
	if err != nil {
		return nil, toStatus(op, err)
	}
	block := req.GetVolumeCapability().GetBlock() != nil
	src := req.GetStagingTargetPath()
	if block {
		src = rec.DevicePath()
	} else if rec.Mountpoint != src {
		return nil, status.Errorf(codes.FailedPrecondition, "%s: the volume is staged at %q, not at %s", op, rec.Mountpoint, src)
	}
	ro := req.GetReadonly() || readOnly(req.GetVolumeCapability())
	if err := s.bind(ctx, src, target, block, ro); err != nil {
		return nil, toStatus(op, err)
	}
	return &csipb.NodePublishVolumeResponse{}, nil
}

// bind mounts src on target (made first: a file for a device, else a
// directory) unless it is mounted there already.
func (s node) bind(ctx context.Context, src, target string, block, ro bool) error {
	fs := s.d.host.FS
	if err := fs.MkdirAll(path.Dir(target), 0o750); err != nil {
		return err
	}
	var err error
	if block {
		err = fs.CreateFile(target)
	} else {
		err = fs.MkdirAll(target, 0o750)
	}
	if err != nil {
		return err
	}
	if mounted, err := s.d.host.Sys.IsMounted(target); err != nil || mounted {
		return err
	}
	var opts []string
	if !block {
		opts = append(opts, "nosuid", "nodev") // a device node must stay usable
	}
	if ro {
		opts = append(opts, "ro")
	}
	args := []string{"--bind"}
	if len(opts) > 0 {
		args = append(args, "-o", strings.Join(opts, ","))
	}
	_, err = s.d.host.Runner.Run(ctx, host.Command{Name: "mount", Args: append(args, "--", src, target), Timeout: mountTimeout})
	return err
}

// NodeUnpublishVolume unmounts the target path and removes it; a path
// already gone is success.
func (s node) NodeUnpublishVolume(ctx context.Context, req *csipb.NodeUnpublishVolumeRequest) (*csipb.NodeUnpublishVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, invalid("volume ID missing")
	}
	target := req.GetTargetPath()
	if err := s.d.underKubelet("target path", target); err != nil {
		return nil, err
	}
	op := "unpublish volume " + req.GetVolumeId() + " at " + target
	unlock, err := s.d.locks.lock(ctx, "volume/"+req.GetVolumeId())
	if err != nil {
		return nil, toStatus(op, err)
	}
	defer unlock()
	// A target bind-mounted twice (a retried publish elsewhere) needs two.
	for range 4 {
		mounted, err := s.d.host.Sys.IsMounted(target)
		if err != nil {
			return nil, toStatus(op, err)
		}
		if !mounted {
			break
		}
		if _, err := s.d.host.Runner.Run(ctx, host.Command{Name: "umount", Args: []string{"--", target}, Timeout: mountTimeout}); err != nil {
			return nil, toStatus(op, err)
		}
	}
	if err := s.d.host.FS.Remove(target); err != nil {
		return nil, toStatus(op, err)
	}
	return &csipb.NodeUnpublishVolumeResponse{}, nil
}
