package main

import (
	"fmt"
	"os"
	"path/filepath"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// badRequests: requests kubelet or a sidecar could send wrong get the
// spec's codes and change nothing: no volume or snapshot in Cinder, no
// path or mount on the node.
func (r *run) badRequests() error {
	before, err := r.cinderCount()
	if err != nil {
		return err
	}
	outside := filepath.Join(r.o.work, "outside", "mount")
	v := r.vol
	stageReq := func(id string, cap *csipb.VolumeCapability) error {
		_, err := r.nc.NodeStageVolume(r.ctx, &csipb.NodeStageVolumeRequest{VolumeId: id, PublishContext: map[string]string{},
			StagingTargetPath: v.staging, VolumeCapability: cap})
		return err
	}
	cases := []struct {
		name string
		want codes.Code
		call func() error
	}{
		{"create-no-capability", codes.InvalidArgument, func() error {
			_, err := r.cc.CreateVolume(r.ctx, &csipb.CreateVolumeRequest{Name: "pvc-bad-nocap", CapacityRange: &csipb.CapacityRange{RequiredBytes: gib}})
			return err
		}},
		{"create-unknown-parameter", codes.InvalidArgument, func() error {
			_, err := r.cc.CreateVolume(r.ctx, &csipb.CreateVolumeRequest{Name: "pvc-bad-param", CapacityRange: &csipb.CapacityRange{RequiredBytes: gib},
				VolumeCapabilities: []*csipb.VolumeCapability{mountCap()}, Parameters: map[string]string{"tpye": "fast"}})
			return err
		}},
		{"create-size-0", codes.InvalidArgument, func() error {
			_, err := r.cc.CreateVolume(r.ctx, &csipb.CreateVolumeRequest{Name: "pvc-bad-size", CapacityRange: &csipb.CapacityRange{},
				VolumeCapabilities: []*csipb.VolumeCapability{mountCap()}})
			return err
		}},
		{"publish-not-uuid", codes.NotFound, func() error {
			_, err := r.cc.ControllerPublishVolume(r.ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: "not-a-uuid", NodeId: r.nodeID, VolumeCapability: mountCap()})
			return err
		}},
		{"stage-not-uuid", codes.NotFound, func() error { return stageReq("not-a-uuid", mountCap()) }},
		{"stage-no-capability", codes.InvalidArgument, func() error { return stageReq(v.id, nil) }},
		{"publish-outside-kubelet-dir", codes.InvalidArgument, func() error {
			_, err := r.nc.NodePublishVolume(r.ctx, &csipb.NodePublishVolumeRequest{VolumeId: v.id, StagingTargetPath: v.staging,
				TargetPath: outside, VolumeCapability: mountCap()})
			return err
		}},
	}
	var failed []string
	for _, c := range cases {
		got := status.Code(c.call())
		fmt.Printf("CODE %s %s\n", c.name, got)
		if got != c.want {
			failed = append(failed, fmt.Sprintf("%s: %s, want %s", c.name, got, c.want))
		}
	}
	after, err := r.cinderCount()
	if err != nil {
		return err
	}
	fmt.Printf("CHANGED cinder %q -> %q\n", before, after)
	if after != before {
		failed = append(failed, fmt.Sprintf("Cinder changed: %s -> %s", before, after))
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		failed = append(failed, fmt.Sprintf("%s exists after a refused publish (%v)", outside, err))
	}
	if m := mountsUnder(r.o.kubeletDir); len(m) > 0 {
		failed = append(failed, fmt.Sprintf("mounted after the bad requests: %v", m))
	}
	if len(failed) > 0 {
		return fmt.Errorf("%v", failed)
	}
	return nil
}
