package csi

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/host/hosttest"
)

// published creates a volume, publishes it to the node and returns its ID
// and publish context.
func (f *fixture) published(name string) (string, map[string]string) {
	f.t.Helper()
	id := f.create(name, 1)
	resp, err := f.c.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: id, NodeId: testNode, VolumeCapability: mountCap()})
	require.NoError(f.t, err)
	return id, resp.GetPublishContext()
}

func (f *fixture) exists(p string) bool {
	_, err := os.Lstat(filepath.Join(f.root, p))
	return err == nil
}

// TestNodeLifecycle is kubelet's order: stage, publish to two pods, stats,
// expand, unpublish both, unstage; each call twice, as retries come.
func TestNodeLifecycle(t *testing.T) {
	f := newFixture(t)
	id, pc := f.published("pvc-1")
	for range 2 {
		_, err := f.n.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: mountCap(), PublishContext: pc})
		require.NoError(t, err)
	}
	require.Equal(t, []string{"attach " + id + " " + pc[PublishAttachmentID] + " " + staging + " ext4 rw"}, f.att.callList())
	for _, tgt := range []string{target1, target2, target1} {
		_, err := f.n.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: staging, TargetPath: tgt,
			VolumeCapability: mountCap(), PublishContext: pc, Readonly: tgt == target2})
		require.NoError(t, err)
	}
	require.Equal(t, []string{
		"mount --bind -o nosuid,nodev -- " + staging + " " + target1,
		"mount --bind -o nosuid,nodev,ro -- " + staging + " " + target2,
	}, f.mounts.argv)

	hosttest.Mkdir(t, f.root, "/sys/block/sda/device")
	hosttest.WriteFile(t, f.root, "/sys/block/sda/device/state", "running\n")
	stats, err := f.n.NodeGetVolumeStats(ctx, &csipb.NodeGetVolumeStatsRequest{VolumeId: id, VolumePath: target1})
	require.NoError(t, err)
	require.Len(t, stats.GetUsage(), 2)
	health, err := f.n.NodeGetVolumeHealth(ctx, &csipb.NodeGetVolumeHealthRequest{VolumeId: id})
	require.NoError(t, err)
	require.Equal(t, csipb.VolumeHealthErrorType_DEGRADED, health.GetVolumeHealth().GetHealthStatuses()[0].GetStatus(), "sdb has no state: down")
	exp, err := f.n.NodeExpandVolume(ctx, &csipb.NodeExpandVolumeRequest{VolumeId: id, VolumePath: target1})
	require.NoError(t, err)
	require.Equal(t, int64(2<<30), exp.GetCapacityBytes())

	for _, tgt := range []string{target1, target2, target2} {
		_, err := f.n.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: tgt})
		require.NoError(t, err)
		require.False(t, f.exists(tgt), "target path removed")
	}
	require.Empty(t, f.mounts.mounts)
	for range 2 {
		_, err := f.n.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: staging})
		require.NoError(t, err)
	}
	_, err = f.att.Record(id)
	require.ErrorIs(t, err, attach.ErrNoRecord)
	atts, _ := f.cinder.Attachments(ctx, id)
	require.Len(t, atts, 1, "the attachment stays for ControllerUnpublish")
}

func TestNodeBlock(t *testing.T) {
	f := newFixture(t)
	id, pc := f.published("pvc-b")
	_, err := f.n.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: blockCap(), PublishContext: pc})
	require.NoError(t, err)
	_, err = f.n.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: staging, TargetPath: target1, VolumeCapability: blockCap(), PublishContext: pc})
	require.NoError(t, err)
	require.Equal(t, []string{"mount --bind -- /dev/dm-0 " + target1}, f.mounts.argv)
	fi, err := os.Stat(filepath.Join(f.root, target1))
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular(), "a file to bind the device on")
	stats, err := f.n.NodeGetVolumeStats(ctx, &csipb.NodeGetVolumeStatsRequest{VolumeId: id, VolumePath: target1})
	require.NoError(t, err)
	require.Equal(t, int64(1<<30), stats.GetUsage()[0].GetTotal())
}

// TestNodeStageAfterRestart: the record, not memory, says what is staged;
// a half-done one is cleaned up first, one of an old attachment detached.
func TestNodeStageAfterRestart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rec   func(id, att string) *attach.Record
		calls func(id, att string) []string
	}{
		{"staged", func(id, att string) *attach.Record {
			return &attach.Record{VolumeID: id, AttachmentID: att, ExternalAttachment: true, Phase: attach.PhaseAttached, Mountpoint: staging}
		}, func(string, string) []string { return nil }},
		{"half done", func(id, att string) *attach.Record {
			return &attach.Record{VolumeID: id, AttachmentID: att, ExternalAttachment: true, Phase: attach.PhaseAttaching, Step: "connect"}
		}, func(id, att string) []string {
			return []string{"cleanup " + id, "attach " + id + " " + att + " " + staging + " ext4 rw"}
		}},
		{"old attachment", func(id, _ string) *attach.Record {
			return &attach.Record{VolumeID: id, AttachmentID: otherNode, ExternalAttachment: true, Phase: attach.PhaseAttached, Mountpoint: staging}
		}, func(id, att string) []string {
			return []string{"detach " + id, "attach " + id + " " + att + " " + staging + " ext4 rw"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			id, pc := f.published("pvc-r")
			f.att.recs[id] = tc.rec(id, pc[PublishAttachmentID])
			_, err := f.n.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: mountCap(), PublishContext: pc})
			require.NoError(t, err)
			require.Equal(t, tc.calls(id, pc[PublishAttachmentID]), f.att.callList())
		})
	}
}

func TestRecover(t *testing.T) {
	f := newFixture(t)
	f.att.recs["a"] = &attach.Record{VolumeID: "a", ExternalAttachment: true, Phase: attach.PhaseAttaching}
	f.att.recs["b"] = &attach.Record{VolumeID: "b", ExternalAttachment: true, Phase: attach.PhaseAttached}
	f.att.recs["c"] = &attach.Record{VolumeID: "c", Phase: attach.PhaseDetaching}
	require.NoError(t, f.n.d.Recover(ctx))
	require.Equal(t, []string{"cleanup a"}, f.att.callList(), "only Kubernetes' unfinished volumes")
}

func TestNodeStageFails(t *testing.T) {
	f := newFixture(t)
	id, pc := f.published("pvc-f")
	f.att.attachErr = errors.New("local-attach x: connect: iscsi login: no route")
	_, err := f.n.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: mountCap(), PublishContext: pc})
	requireCode(t, err, codes.Internal)
	require.ErrorContains(t, err, "stage volume "+id+": local-attach x: connect: iscsi login: no route")
	f.att.recs[id] = &attach.Record{VolumeID: id, Phase: attach.PhaseAttached}
	_, err = f.n.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: mountCap(), PublishContext: pc})
	requireCode(t, err, codes.FailedPrecondition)
	_, err = f.n.NodeUnstageVolume(ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: staging})
	requireCode(t, err, codes.FailedPrecondition)
	require.Contains(t, f.att.recs, id, "brick local-attach's volume is left alone")
}

// TestBadRequests: each gets its code and changes nothing.
func TestBadRequests(t *testing.T) {
	type call func(f *fixture, id string, pc map[string]string) error
	mc := mountCap()
	noMode := &csipb.VolumeCapability{AccessType: mc.AccessType}
	multi := &csipb.VolumeCapability{AccessType: mc.AccessType, AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER}}
	create := func(req *csipb.CreateVolumeRequest) call {
		return func(f *fixture, _ string, _ map[string]string) error {
			_, err := f.c.CreateVolume(ctx, req)
			return err
		}
	}
	stage := func(vol, path string, c *csipb.VolumeCapability, noContext bool) call {
		return func(f *fixture, id string, pc map[string]string) error {
			switch vol {
			case "":
				vol = id
			case "none":
				vol = ""
			}
			if noContext {
				pc = nil
			}
			_, err := f.n.NodeStageVolume(ctx, &csipb.NodeStageVolumeRequest{VolumeId: vol, StagingTargetPath: path, VolumeCapability: c, PublishContext: pc})
			return err
		}
	}
	publish := func(path string) call {
		return func(f *fixture, id string, pc map[string]string) error {
			_, err := f.n.NodePublishVolume(ctx, &csipb.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: staging, TargetPath: path, VolumeCapability: mc, PublishContext: pc})
			return err
		}
	}
	caps := []*csipb.VolumeCapability{mc}
	for _, tc := range []struct {
		name string
		call call
		want codes.Code
	}{
		{"create: no name", create(&csipb.CreateVolumeRequest{VolumeCapabilities: caps}), codes.InvalidArgument},
		{"create: no capability", create(&csipb.CreateVolumeRequest{Name: "n"}), codes.InvalidArgument},
		{"create: no access mode", create(&csipb.CreateVolumeRequest{Name: "n", VolumeCapabilities: []*csipb.VolumeCapability{noMode}}), codes.InvalidArgument},
		{"create: multi-node", create(&csipb.CreateVolumeRequest{Name: "n", VolumeCapabilities: []*csipb.VolumeCapability{multi}}), codes.InvalidArgument},
		{"create: unknown parameter", create(&csipb.CreateVolumeRequest{Name: "n", VolumeCapabilities: caps, Parameters: map[string]string{"tpye": "x"}}), codes.InvalidArgument},
		{"create: size 0", create(&csipb.CreateVolumeRequest{Name: "n", VolumeCapabilities: caps, CapacityRange: &csipb.CapacityRange{}}), codes.InvalidArgument},
		{"create: below 1 GiB", create(&csipb.CreateVolumeRequest{Name: "n", VolumeCapabilities: caps, CapacityRange: &csipb.CapacityRange{RequiredBytes: 1, LimitBytes: 1 << 20}}), codes.OutOfRange},
		{"create: fs type", create(&csipb.CreateVolumeRequest{Name: "n", VolumeCapabilities: []*csipb.VolumeCapability{{AccessMode: mc.AccessMode,
			AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{FsType: "ntfs"}}}}}), codes.InvalidArgument},
		{"publish: volume not a UUID", func(f *fixture, _ string, _ map[string]string) error {
			_, err := f.c.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: "fake-vol-id", NodeId: testNode, VolumeCapability: mc})
			return err
		}, codes.NotFound},
		{"publish: unknown node", func(f *fixture, id string, _ map[string]string) error {
			_, err := f.c.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: id, NodeId: "fake-node-id", VolumeCapability: mc})
			return err
		}, codes.NotFound},
		{"publish: no capability", func(f *fixture, id string, _ map[string]string) error {
			_, err := f.c.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: id, NodeId: testNode})
			return err
		}, codes.InvalidArgument},
		{"publish: no node before the fake volume", func(f *fixture, _ string, _ map[string]string) error {
			_, err := f.c.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: "fake-vol-id", VolumeCapability: mc})
			return err
		}, codes.InvalidArgument},
		{"publish: no capability before the fake volume", func(f *fixture, _ string, _ map[string]string) error {
			_, err := f.c.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: "fake-vol-id", NodeId: testNode})
			return err
		}, codes.InvalidArgument},
		{"validate: no capability before the fake volume", func(f *fixture, _ string, _ map[string]string) error {
			_, err := f.c.ValidateVolumeCapabilities(ctx, &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: "fake-vol-id"})
			return err
		}, codes.InvalidArgument},
		{"validate: missing volume", func(f *fixture, _ string, _ map[string]string) error {
			_, err := f.c.ValidateVolumeCapabilities(ctx, &csipb.ValidateVolumeCapabilitiesRequest{VolumeId: otherNode, VolumeCapabilities: caps})
			return err
		}, codes.NotFound},
		{"stage: no volume ID", stage("none", staging, mc, false), codes.InvalidArgument},
		{"stage: volume not a UUID", stage("fake-vol-id", staging, mc, false), codes.NotFound},
		{"stage: no capability", stage("", staging, nil, false), codes.InvalidArgument},
		{"stage: no staging path", stage("", "", mc, false), codes.InvalidArgument},
		{"stage: outside kubelet dir", stage("", "/etc/cron.d/x", mc, false), codes.InvalidArgument},
		{"stage: escapes kubelet dir", stage("", kubelet+"/../../etc", mc, false), codes.InvalidArgument},
		{"stage: no publish context", stage("", staging, mc, true), codes.InvalidArgument},
		{"publish: outside kubelet dir", publish("/tmp/target"), codes.InvalidArgument},
		{"publish: not staged", publish(target1), codes.NotFound},
		{"unpublish: outside kubelet dir", func(f *fixture, id string, _ map[string]string) error {
			_, err := f.n.NodeUnpublishVolume(ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: "/"})
			return err
		}, codes.InvalidArgument},
		{"stats: not staged", func(f *fixture, id string, _ map[string]string) error {
			_, err := f.n.NodeGetVolumeStats(ctx, &csipb.NodeGetVolumeStatsRequest{VolumeId: id, VolumePath: target1})
			return err
		}, codes.NotFound},
		{"expand: volume not a UUID", func(f *fixture, _ string, _ map[string]string) error {
			_, err := f.n.NodeExpandVolume(ctx, &csipb.NodeExpandVolumeRequest{VolumeId: "fake-vol-id", VolumePath: "some/path"})
			return err
		}, codes.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			id, pc := f.published("pvc-x")
			vols, _ := f.cinder.Volumes(ctx, "")
			requireCode(t, tc.call(f, id, pc), tc.want)
			after, _ := f.cinder.Volumes(ctx, "")
			require.Equal(t, vols, after, "Cinder's volumes unchanged")
			atts, _ := f.cinder.Attachments(ctx, id)
			require.Len(t, atts, 1)
			require.Empty(t, f.att.callList(), "nothing attached")
			require.Empty(t, f.mounts.argv, "nothing mounted")
		})
	}
}
