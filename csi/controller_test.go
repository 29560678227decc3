package csi

import (
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/cinderapi"
)

func TestCreateVolume(t *testing.T) {
	for _, tc := range []struct {
		name     string
		req      *csipb.CreateVolumeRequest
		wantGiB  int64
		wantZone string
		wantType string
		wantMeta map[string]string // beside MetadataName
	}{
		{"no capacity: 1 GiB", &csipb.CreateVolumeRequest{}, 1, "nova", "", nil},
		{"rounded up", &csipb.CreateVolumeRequest{CapacityRange: &csipb.CapacityRange{RequiredBytes: 1<<30 + 1}}, 2, "nova", "", nil},
		{"limit only", &csipb.CreateVolumeRequest{CapacityRange: &csipb.CapacityRange{LimitBytes: 3 << 30}}, 1, "nova", "", nil},
		{"parameters", &csipb.CreateVolumeRequest{Parameters: map[string]string{"type": "fast", "availability": "zone-b",
			"csi.storage.k8s.io/pvc/name": "x", "csi.storage.k8s.io/pvc/namespace": "ns", "csi.storage.k8s.io/pv/name": "pv-1",
			"csi.storage.k8s.io/fstype": "xfs"}}, 1, "zone-b", "fast",
			map[string]string{"csi.storage.k8s.io/pvc/name": "x", "csi.storage.k8s.io/pvc/namespace": "ns", "csi.storage.k8s.io/pv/name": "pv-1"}},
		{"topology", &csipb.CreateVolumeRequest{AccessibilityRequirements: &csipb.TopologyRequirement{
			Requisite: []*csipb.Topology{{Segments: map[string]string{TopologyZoneKey: "zone-r"}}},
			Preferred: []*csipb.Topology{{Segments: map[string]string{TopologyZoneKey: "zone-p"}}},
		}}, 1, "zone-p", "", nil},
		{"a claim name Cinder cannot hold is clipped", &csipb.CreateVolumeRequest{Parameters: map[string]string{
			"csi.storage.k8s.io/pvc/name": strings.Repeat("n", 300)}}, 1, "nova", "",
			map[string]string{"csi.storage.k8s.io/pvc/name": strings.Repeat("n", 252) + "..."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.req.Name = "pvc-1"
			tc.req.VolumeCapabilities = []*csipb.VolumeCapability{mountCap()}
			resp, err := f.c.CreateVolume(ctx, tc.req)
			require.NoError(t, err)
			v := resp.GetVolume()
			require.Equal(t, tc.wantGiB<<30, v.GetCapacityBytes())
			require.Equal(t, tc.wantZone, v.GetAccessibleTopology()[0].GetSegments()[TopologyZoneKey])
			cv, err := f.cinder.Volume(ctx, v.GetVolumeId())
			require.NoError(t, err)
			require.Equal(t, tc.wantType, cv.VolumeType)
			want := map[string]string{MetadataName: "pvc-1"}
			maps.Copy(want, tc.wantMeta)
			require.Equal(t, want, cv.Metadata)
		})
	}
}

// TestCreateVolumeIdempotent: the same name again (also many at once)
// gives the same volume; another size or source is AlreadyExists.
func TestCreateVolumeIdempotent(t *testing.T) {
	f := newFixture(t)
	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids {
		wg.Add(1)
		go func() { defer wg.Done(); ids[i] = f.create("pvc-1", 2) }()
	}
	wg.Wait()
	for _, id := range ids {
		require.Equal(t, ids[0], id)
	}
	require.Equal(t, 1, f.cinder.creates)
	_, err := f.c.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: []*csipb.VolumeCapability{mountCap()},
		CapacityRange: &csipb.CapacityRange{RequiredBytes: 5 << 30}})
	requireCode(t, err, codes.AlreadyExists)
	snap, err := f.c.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "s", SourceVolumeId: ids[0]})
	require.NoError(t, err)
	_, err = f.c.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "pvc-1", VolumeCapabilities: []*csipb.VolumeCapability{mountCap()},
		VolumeContentSource: &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Snapshot{
			Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: snap.GetSnapshot().GetSnapshotId()}}}})
	requireCode(t, err, codes.AlreadyExists)
}

func TestCreateVolumeFromSource(t *testing.T) {
	f := newFixture(t)
	src := f.create("src", 2)
	snap, err := f.c.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap-1", SourceVolumeId: src})
	require.NoError(t, err)
	sid := snap.GetSnapshot().GetSnapshotId()
	for _, tc := range []struct {
		name                string
		source              *csipb.VolumeContentSource
		rng                 *csipb.CapacityRange
		wantSnap, wantClone string
		wantGiB             int64
		wantCode            codes.Code
	}{
		{"snapshot", snapSource(sid), &csipb.CapacityRange{RequiredBytes: 2 << 30}, sid, "", 2, codes.OK},
		{"clone", volSource(src), &csipb.CapacityRange{RequiredBytes: 2 << 30}, "", src, 2, codes.OK},
		{"larger than the snapshot", snapSource(sid), &csipb.CapacityRange{RequiredBytes: 3 << 30}, sid, "", 3, codes.OK},
		{"smaller than the snapshot: its size", snapSource(sid), &csipb.CapacityRange{RequiredBytes: 1 << 30}, sid, "", 2, codes.OK},
		{"no range: the clone's size", volSource(src), nil, "", src, 2, codes.OK},
		{"the source above limit_bytes", snapSource(sid), &csipb.CapacityRange{LimitBytes: 1 << 30}, "", "", 0, codes.OutOfRange},
		{"missing snapshot", snapSource(otherNode), nil, "", "", 0, codes.NotFound},
		{"snapshot not a UUID", snapSource("snap"), nil, "", "", 0, codes.NotFound},
		{"missing volume", volSource(otherNode), nil, "", "", 0, codes.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := f.c.CreateVolume(ctx, &csipb.CreateVolumeRequest{Name: "new-" + tc.name, VolumeCapabilities: []*csipb.VolumeCapability{mountCap()},
				CapacityRange: tc.rng, VolumeContentSource: tc.source})
			if tc.wantCode != codes.OK {
				requireCode(t, err, tc.wantCode)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.source, resp.GetVolume().GetContentSource())
			require.Equal(t, tc.wantGiB<<30, resp.GetVolume().GetCapacityBytes())
			v, err := f.cinder.Volume(ctx, resp.GetVolume().GetVolumeId())
			require.NoError(t, err)
			require.Equal(t, tc.wantSnap, v.SnapshotID)
			require.Equal(t, tc.wantClone, v.SourceVolID)
		})
	}
}

func snapSource(id string) *csipb.VolumeContentSource {
	return &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Snapshot{Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: id}}}
}

func volSource(id string) *csipb.VolumeContentSource {
	return &csipb.VolumeContentSource{Type: &csipb.VolumeContentSource_Volume{Volume: &csipb.VolumeContentSource_VolumeSource{VolumeId: id}}}
}

func TestPublishUnpublish(t *testing.T) {
	f := newFixture(t)
	id := f.create("pvc-1", 1)
	pub := func(node string, ro bool) (string, error) {
		resp, err := f.c.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: id, NodeId: node, VolumeCapability: mountCap(), Readonly: ro})
		return resp.GetPublishContext()[PublishAttachmentID], err
	}
	att, err := pub(testNode, false)
	require.NoError(t, err)
	again, err := pub(testNode, false)
	require.NoError(t, err)
	require.Equal(t, att, again, "publishing twice reuses the attachment")
	_, err = pub(testNode, true)
	requireCode(t, err, codes.AlreadyExists)
	_, err = pub(otherNode, false)
	requireCode(t, err, codes.FailedPrecondition)
	atts, _ := f.cinder.Attachments(ctx, id)
	require.Len(t, atts, 1)
	require.Empty(t, atts[0].Instance, "no instance: Cinder would ask Nova before deleting it")
	require.Equal(t, map[string]string{MetadataNodePrefix + testNode: att}, nodeMeta(t, f, id))
	f.cinder.use(id) // the node staged it

	for range 2 {
		_, err = f.c.ControllerUnpublishVolume(ctx, &csipb.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: testNode})
		require.NoError(t, err)
	}
	atts, _ = f.cinder.Attachments(ctx, id)
	require.Empty(t, atts)
	require.Empty(t, nodeMeta(t, f, id))
	_, err = pub(otherNode, false)
	require.NoError(t, err, "free again for another node")
}

// nodeMeta is the volume's metadata under MetadataNodePrefix.
func nodeMeta(t *testing.T, f *fixture, id string) map[string]string {
	t.Helper()
	v, err := f.cinder.Volume(ctx, id)
	require.NoError(t, err)
	out := map[string]string{}
	for k, val := range v.Metadata {
		if strings.HasPrefix(k, MetadataNodePrefix) {
			out[k] = val
		}
	}
	return out
}

func TestPublishRecovery(t *testing.T) {
	errMeta := &apierr.Error{Service: cinderapi.Service, Op: "set volume metadata", Status: 503, Kind: apierr.ErrUnreachable, Message: "down"}
	for _, tc := range []struct {
		name string
		// setup runs on the new volume before the publish.
		setup     func(f *fixture, id string)
		failMeta  func(map[string]string) error
		wantCode  codes.Code
		wantAtts  int // after the publish
		afterUnpb int // after unpublishing testNode
	}{
		{name: "crash before the record: adopted", wantAtts: 1, setup: func(f *fixture, id string) {
			require.NoError(t, f.cinder.SetVolumeMetadata(ctx, id, map[string]string{MetadataNodePrefix + testNode: MetadataReserving}))
			_, err := f.cinder.ReserveAttachment(ctx, id, "rw")
			require.NoError(t, err)
		}},
		{name: "another consumer's attachment", wantCode: codes.FailedPrecondition, wantAtts: 1, afterUnpb: 1, setup: func(f *fixture, id string) {
			f.cinder.use(id)
		}},
		{name: "reserving, attachment in use elsewhere", wantCode: codes.FailedPrecondition, wantAtts: 1, afterUnpb: 1, setup: func(f *fixture, id string) {
			require.NoError(t, f.cinder.SetVolumeMetadata(ctx, id, map[string]string{MetadataNodePrefix + testNode: MetadataReserving}))
			f.cinder.use(id)
		}},
		{name: "record fails: reservation undone", wantCode: codes.Unavailable, failMeta: func(m map[string]string) error {
			if m[MetadataNodePrefix+testNode] != MetadataReserving {
				return errMeta
			}
			return nil
		}},
		{name: "cannot record the intent: nothing reserved", wantCode: codes.Unavailable, failMeta: func(map[string]string) error { return errMeta }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			id := f.create("pvc-1", 1)
			if tc.setup != nil {
				tc.setup(f, id)
			}
			f.cinder.failMeta = tc.failMeta
			resp, err := f.c.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: id, NodeId: testNode, VolumeCapability: mountCap()})
			f.cinder.failMeta = nil
			if tc.wantCode == codes.OK {
				require.NoError(t, err)
			} else {
				requireCode(t, err, tc.wantCode)
			}
			atts, _ := f.cinder.Attachments(ctx, id)
			require.Len(t, atts, tc.wantAtts)
			if tc.wantCode == codes.OK {
				require.Equal(t, atts[0].ID, resp.GetPublishContext()[PublishAttachmentID])
				require.Equal(t, map[string]string{MetadataNodePrefix + testNode: atts[0].ID}, nodeMeta(t, f, id))
			}
			_, err = f.c.ControllerUnpublishVolume(ctx, &csipb.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: testNode})
			require.NoError(t, err)
			atts, _ = f.cinder.Attachments(ctx, id)
			require.Len(t, atts, tc.afterUnpb, "unpublish deletes only what was reserved for the node")
			require.Empty(t, nodeMeta(t, f, id))
		})
	}
}

func TestPublishConcurrent(t *testing.T) {
	f := newFixture(t)
	id := f.create("pvc-1", 1)
	got := make([]string, 4)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := f.c.ControllerPublishVolume(ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: id, NodeId: testNode, VolumeCapability: mountCap()})
			assert.NoError(t, err)
			got[i] = resp.GetPublishContext()[PublishAttachmentID]
		}()
	}
	wg.Wait()
	atts, _ := f.cinder.Attachments(ctx, id)
	require.Len(t, atts, 1)
	require.Equal(t, []string{atts[0].ID, atts[0].ID, atts[0].ID, atts[0].ID}, got)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.c.ControllerUnpublishVolume(ctx, &csipb.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: testNode})
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	atts, _ = f.cinder.Attachments(ctx, id)
	require.Empty(t, atts)
}

func TestListVolumesPages(t *testing.T) {
	f := newFixture(t)
	var ids []string
	for i := range 5 {
		ids = append(ids, f.create(fmt.Sprintf("pvc-%d", i), 1))
	}
	var got []string
	token := ""
	for {
		resp, err := f.c.ListVolumes(ctx, &csipb.ListVolumesRequest{MaxEntries: 2, StartingToken: token})
		require.NoError(t, err)
		for _, e := range resp.GetEntries() {
			got = append(got, e.GetVolume().GetVolumeId())
		}
		if token = resp.GetNextToken(); token == "" {
			break
		}
		if len(got) == 2 { // the page's last volume goes away: the next page still follows it
			_, err := f.c.DeleteVolume(ctx, &csipb.DeleteVolumeRequest{VolumeId: token})
			require.NoError(t, err)
		}
	}
	require.Equal(t, ids, got)
	_, err := f.c.ListVolumes(ctx, &csipb.ListVolumesRequest{StartingToken: "bogus"})
	requireCode(t, err, codes.Aborted)
}

func TestSnapshots(t *testing.T) {
	f := newFixture(t)
	v1, v2 := f.create("a", 1), f.create("b", 1)
	s1, err := f.c.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap", SourceVolumeId: v1})
	require.NoError(t, err)
	again, err := f.c.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap", SourceVolumeId: v1})
	require.NoError(t, err)
	require.Equal(t, s1.GetSnapshot().GetSnapshotId(), again.GetSnapshot().GetSnapshotId())
	require.True(t, s1.GetSnapshot().GetReadyToUse())
	_, err = f.c.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap", SourceVolumeId: v2})
	requireCode(t, err, codes.AlreadyExists)
	_, err = f.c.CreateSnapshot(ctx, &csipb.CreateSnapshotRequest{Name: "snap2", SourceVolumeId: v2})
	require.NoError(t, err)

	for _, tc := range []struct {
		name string
		req  *csipb.ListSnapshotsRequest
		want int
	}{
		{"all", &csipb.ListSnapshotsRequest{}, 2},
		{"by ID", &csipb.ListSnapshotsRequest{SnapshotId: s1.GetSnapshot().GetSnapshotId()}, 1},
		{"unknown ID", &csipb.ListSnapshotsRequest{SnapshotId: "none-exist-id"}, 0},
		{"by volume", &csipb.ListSnapshotsRequest{SourceVolumeId: v2}, 1},
		{"unknown volume", &csipb.ListSnapshotsRequest{SourceVolumeId: "x"}, 0},
		{"one page", &csipb.ListSnapshotsRequest{MaxEntries: 1}, 1},
	} {
		resp, err := f.c.ListSnapshots(ctx, tc.req)
		require.NoError(t, err, tc.name)
		require.Len(t, resp.GetEntries(), tc.want, tc.name)
	}
	got, err := f.c.GetSnapshot(ctx, &csipb.GetSnapshotRequest{SnapshotId: s1.GetSnapshot().GetSnapshotId()})
	require.NoError(t, err)
	require.Equal(t, v1, got.GetSnapshot().GetSourceVolumeId())
	for id, want := range map[string]codes.Code{"": codes.InvalidArgument, "none-exist-id": codes.NotFound, otherNode: codes.NotFound} {
		_, err = f.c.GetSnapshot(ctx, &csipb.GetSnapshotRequest{SnapshotId: id})
		requireCode(t, err, want)
	}
	for _, id := range []string{s1.GetSnapshot().GetSnapshotId(), s1.GetSnapshot().GetSnapshotId(), "not-a-uuid"} {
		_, err = f.c.DeleteSnapshot(ctx, &csipb.DeleteSnapshotRequest{SnapshotId: id})
		require.NoError(t, err)
	}
}

func TestControllerExpand(t *testing.T) {
	f := newFixture(t)
	id := f.create("a", 1)
	for range 2 {
		resp, err := f.c.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: id, CapacityRange: &csipb.CapacityRange{RequiredBytes: 2 << 30}})
		require.NoError(t, err)
		require.Equal(t, int64(2<<30), resp.GetCapacityBytes())
		require.True(t, resp.GetNodeExpansionRequired())
	}
	_, err := f.c.ControllerExpandVolume(ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: otherNode, CapacityRange: &csipb.CapacityRange{RequiredBytes: 2 << 30}})
	requireCode(t, err, codes.NotFound)
}
