package csi

import (
	"context"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brick-storage/brick/host/hosttest"
)

const (
	testNode  = "3d1219c7-c4c5-404a-aa1f-6d2a48adfda4"
	otherNode = "99999999-9999-4999-8999-999999999999"
	kubelet   = "/var/lib/kubelet"
	staging   = kubelet + "/plugins/kubernetes.io/csi/cinder.brick-storage.io/abc/globalmount"
	target1   = kubelet + "/pods/p1/volumes/kubernetes.io~csi/pv/mount"
	target2   = kubelet + "/pods/p2/volumes/kubernetes.io~csi/pv/mount"
)

type fixture struct {
	t      *testing.T
	cinder *fakeCinder
	att    *fakeAttacher
	mounts *mountTable
	root   string
	c      controller
	n      node
	id     identity
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, cinder: newFakeCinder(), att: newFakeAttacher()}
	f.mounts = &mountTable{t: t, mounts: map[string]string{}}
	h, root := hosttest.New(t, hosttest.NewRunner(f.mounts.run))
	f.root, f.mounts.root = root, root
	f.mounts.write()
	d, err := New(Config{NodeID: testNode, Zone: "zone-a"}, f.cinder, f.att, h)
	require.NoError(t, err)
	f.c, f.n, f.id = controller{d: d}, node{d: d}, identity{d: d}
	return f
}

var ctx = context.Background()

func mountCap() *csipb.VolumeCapability {
	return &csipb.VolumeCapability{
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{FsType: "ext4"}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

func blockCap() *csipb.VolumeCapability {
	return &csipb.VolumeCapability{
		AccessType: &csipb.VolumeCapability_Block{Block: &csipb.VolumeCapability_BlockVolume{}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

func (f *fixture) create(name string, gib int64) string {
	f.t.Helper()
	resp, err := f.c.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: name, VolumeCapabilities: []*csipb.VolumeCapability{mountCap()},
		CapacityRange: &csipb.CapacityRange{RequiredBytes: gib << 30}})
	require.NoError(f.t, err)
	return resp.GetVolume().GetVolumeId()
}

func requireCode(t *testing.T, err error, want codes.Code) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, want, status.Code(err), "error: %v", err)
}

func TestNewRefusesBadConfig(t *testing.T) {
	h, _ := hosttest.New(t, hosttest.NewRunner(nil))
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"mode", Config{Mode: "both", NodeID: testNode}, "use controller, node or all"},
		{"node ID", Config{Mode: ModeNode, NodeID: "node-1"}, "must be a UUID"},
		{"kubelet dir", Config{Mode: ModeNode, NodeID: testNode, KubeletDir: "var/lib/kubelet"}, "clean absolute path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg, newFakeCinder(), newFakeAttacher(), h)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestMachineNodeID(t *testing.T) {
	for _, tc := range []struct{ content, want, err string }{
		{"3d1219c7c4c5404aaa1f6d2a48adfda4\n", testNode, ""},
		{"3D1219C7-C4C5-404A-AA1F-6D2A48ADFDA4", testNode, ""},
		{"uninitialized\n", "", "not 32 hex digits"},
	} {
		h, root := hosttest.New(t, hosttest.NewRunner(nil))
		hosttest.WriteFile(t, root, "/etc/machine-id", tc.content)
		got, err := MachineNodeID(h.FS)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
}

func TestSocketPath(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"unix:///csi/csi.sock", "/csi/csi.sock", ""},
		{"unix:/csi/csi.sock", "/csi/csi.sock", ""},
		{"/run/csi.sock", "/run/csi.sock", ""},
		{"tcp://127.0.0.1:9000", "", "unix socket only"},
		{"unix://csi.sock", "", "absolute"},
	} {
		got, err := SocketPath(tc.in)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
}

func TestIdentity(t *testing.T) {
	f := newFixture(t)
	info, err := f.id.GetPluginInfo(ctx, &csipb.GetPluginInfoRequest{})
	require.NoError(t, err)
	require.Equal(t, DefaultDriverName, info.GetName())
	caps, err := f.id.GetPluginCapabilities(ctx, &csipb.GetPluginCapabilitiesRequest{})
	require.NoError(t, err)
	require.Len(t, caps.GetCapabilities(), 3)
	p, err := f.id.Probe(ctx, &csipb.ProbeRequest{})
	require.NoError(t, err)
	require.True(t, p.GetReady().GetValue())
	ni, err := f.n.NodeGetInfo(ctx, &csipb.NodeGetInfoRequest{})
	require.NoError(t, err)
	require.Equal(t, testNode, ni.GetNodeId())
	require.Equal(t, "zone-a", ni.GetAccessibleTopology().GetSegments()[TopologyZoneKey])
}
