package csi

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/attachments"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
)

// fakeCinder is an in-memory Cinder with the behaviour the controller
// relies on: names, sizes, zones, snapshots, attachments per instance.
type fakeCinder struct {
	mu      sync.Mutex
	n       int
	vols    map[string]*cinderapi.Volume
	snaps   map[string]*cinderapi.Snapshot
	atts    map[string][]cinderapi.Attachment // by volume
	creates int
	// failCreate fails the next CreateVolume with this error.
	failCreate error
	failMeta   func(map[string]string) error
}

func newFakeCinder() *fakeCinder {
	return &fakeCinder{vols: map[string]*cinderapi.Volume{}, snaps: map[string]*cinderapi.Snapshot{}, atts: map[string][]cinderapi.Attachment{}}
}

func (f *fakeCinder) id() string {
	f.n++
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", f.n)
}

func notFoundErr(what, id string) error {
	return &apierr.Error{Service: cinderapi.Service, Op: "get", Volume: id, Status: 404, Kind: apierr.ErrNotFound, Message: what + " not found"}
}

func (f *fakeCinder) Volume(_ context.Context, id string) (*cinderapi.Volume, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.vols[id]
	if !ok {
		return nil, notFoundErr("volume", id)
	}
	c := *v
	return &c, nil
}

func (f *fakeCinder) Volumes(_ context.Context, name string) ([]cinderapi.Volume, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []cinderapi.Volume
	for _, v := range f.vols {
		if name == "" || v.Name == name {
			out = append(out, *v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (f *fakeCinder) CreateVolume(_ context.Context, o cinderapi.CreateVolumeOpts, _ time.Duration) (*cinderapi.Volume, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.failCreate; err != nil {
		f.failCreate = nil
		return nil, err
	}
	if sn := f.snaps[o.SnapshotID]; sn != nil && sn.Size > o.SizeGiB {
		return nil, &apierr.Error{Service: cinderapi.Service, Op: "create", Volume: o.Name, Status: 400, Kind: apierr.ErrInvalid, Message: "smaller than the snapshot"}
	}
	if sv := f.vols[o.SourceVolID]; sv != nil && sv.Size > o.SizeGiB {
		return nil, &apierr.Error{Service: cinderapi.Service, Op: "create", Volume: o.Name, Status: 400, Kind: apierr.ErrInvalid, Message: "smaller than the source volume"}
	}
	f.creates++
	v := &cinderapi.Volume{ID: f.id(), Name: o.Name, Size: o.SizeGiB, Status: "available", VolumeType: o.VolumeType,
		AvailabilityZone: o.AvailabilityZone, SnapshotID: o.SnapshotID, SourceVolID: o.SourceVolID, Metadata: o.Metadata}
	if v.AvailabilityZone == "" {
		v.AvailabilityZone = "nova"
	}
	f.vols[v.ID] = v
	c := *v
	return &c, nil
}

func (f *fakeCinder) DeleteVolume(_ context.Context, id string, _ time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.atts[id]) > 0 {
		return &apierr.Error{Service: cinderapi.Service, Op: "delete", Volume: id, Status: 400, Kind: apierr.ErrInvalidState, Message: "volume is attached"}
	}
	delete(f.vols, id)
	return nil
}

func (f *fakeCinder) ExtendVolume(_ context.Context, id string, size int, _ time.Duration) (*cinderapi.Volume, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.vols[id]
	if !ok {
		return nil, notFoundErr("volume", id)
	}
	v.Size = size
	c := *v
	return &c, nil
}

func (f *fakeCinder) Attachments(_ context.Context, volumeID string) ([]cinderapi.Attachment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]cinderapi.Attachment(nil), f.atts[volumeID]...), nil
}

func (f *fakeCinder) ReserveAttachment(_ context.Context, volumeID, mode string) (*cinderapi.Attachment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.vols[volumeID]; !ok {
		return nil, notFoundErr("volume", volumeID)
	}
	if len(f.atts[volumeID]) > 0 {
		return nil, &apierr.Error{Service: cinderapi.Service, Op: "attachment create", Volume: volumeID, Status: 400, Kind: apierr.ErrInvalidState, Message: "status must be available"}
	}
	a := cinderapi.Attachment{Attachment: attachments.Attachment{ID: f.id(), VolumeID: volumeID, AttachMode: mode, Status: "reserved"}}
	f.atts[volumeID] = append(f.atts[volumeID], a)
	return &a, nil
}

// SetVolumeMetadata fails with failMeta's error when it returns one.
func (f *fakeCinder) SetVolumeMetadata(_ context.Context, volumeID string, meta map[string]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failMeta != nil {
		if err := f.failMeta(meta); err != nil {
			return err
		}
	}
	v, ok := f.vols[volumeID]
	if !ok {
		return notFoundErr("volume", volumeID)
	}
	m := map[string]string{}
	for k, val := range v.Metadata {
		m[k] = val
	}
	for k, val := range meta {
		m[k] = val
	}
	v.Metadata = m
	return nil
}

func (f *fakeCinder) DeleteVolumeMetadata(_ context.Context, volumeID, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v, ok := f.vols[volumeID]; ok {
		m := map[string]string{}
		for k, val := range v.Metadata {
			if k != key {
				m[k] = val
			}
		}
		v.Metadata = m
	}
	return nil
}

// use completes every attachment of the volume, as a node's NodeStage
// does, or adds a used one of another consumer when none is there.
func (f *fakeCinder) use(volumeID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.atts[volumeID]) == 0 {
		f.atts[volumeID] = []cinderapi.Attachment{{Attachment: attachments.Attachment{ID: f.id(), VolumeID: volumeID, Instance: otherNode}}}
	}
	for i := range f.atts[volumeID] {
		a := &f.atts[volumeID][i]
		a.Status, a.ConnectionInfo = "attached", map[string]any{"driver_volume_type": "iscsi"}
	}
}

// DeleteAttachment refuses, as Zed without Nova does (HTTP 500), a used
// attachment that names an instance.
func (f *fakeCinder) DeleteAttachment(_ context.Context, volumeID, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var keep []cinderapi.Attachment
	for _, a := range f.atts[volumeID] {
		if a.ID == id && a.Instance != "" && a.HasConnection() {
			return &apierr.Error{Service: cinderapi.Service, Op: "attachment delete", Volume: volumeID, Status: 500, Kind: apierr.ErrUnreachable, Message: "EndpointNotFound (nova)"}
		}
		if a.ID != id {
			keep = append(keep, a)
		}
	}
	f.atts[volumeID] = keep
	return nil
}

func (f *fakeCinder) GetSnapshot(_ context.Context, id string) (*cinderapi.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.snaps[id]
	if !ok {
		return nil, notFoundErr("snapshot", id)
	}
	c := *s
	return &c, nil
}

func (f *fakeCinder) Snapshots(_ context.Context, name, volumeID string) ([]cinderapi.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []cinderapi.Snapshot
	for _, s := range f.snaps {
		if (name == "" || s.Name == name) && (volumeID == "" || s.VolumeID == volumeID) {
			out = append(out, *s)
		}
	}
	return out, nil
}

func (f *fakeCinder) CreateSnapshot(_ context.Context, volumeID, name string, md map[string]string, _ time.Duration) (*cinderapi.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.vols[volumeID]
	if !ok {
		return nil, notFoundErr("volume", volumeID)
	}
	s := &cinderapi.Snapshot{ID: f.id(), Name: name, VolumeID: volumeID, Size: v.Size, Status: "available", Metadata: md, CreatedAt: time.Unix(1e9, 0)}
	f.snaps[s.ID] = s
	c := *s
	return &c, nil
}

func (f *fakeCinder) DeleteSnapshot(_ context.Context, id string, _ time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.snaps, id)
	return nil
}

// fakeAttacher keeps records in memory as brick's attach would on disk.
type fakeAttacher struct {
	mu        sync.Mutex
	recs      map[string]*attach.Record
	attachErr error
	calls     []string
	size      int64
}

func newFakeAttacher() *fakeAttacher {
	return &fakeAttacher{recs: map[string]*attach.Record{}, size: 1 << 30}
}

func (f *fakeAttacher) Attach(_ context.Context, o attach.AttachOptions) (*attach.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "attach "+o.Volume+" "+o.Attachment+" "+o.Mountpoint+" "+o.Mkfs+" "+o.Mode)
	if f.attachErr != nil {
		return nil, f.attachErr
	}
	r := &attach.Record{VolumeID: o.Volume, AttachmentID: o.Attachment, ExternalAttachment: o.Attachment != "", Phase: attach.PhaseAttached,
		Mountpoint: o.Mountpoint, Mounted: o.Mountpoint != "", Mode: o.Mode,
		Device: &connector.Device{Path: "/dev/dm-0", Type: connector.TypeBlock, Paths: []string{"/dev/sda", "/dev/sdb"}}}
	f.recs[o.Volume] = r
	return r, nil
}

func (f *fakeAttacher) Detach(_ context.Context, o attach.DetachOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "detach "+o.Volume)
	delete(f.recs, o.Volume)
	return nil
}

func (f *fakeAttacher) Record(ref string) (*attach.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.recs[ref]
	if !ok {
		return nil, fmt.Errorf("volume %s: %w", ref, attach.ErrNoRecord)
	}
	c := *r
	return &c, nil
}

func (f *fakeAttacher) Records() ([]*attach.Record, []error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*attach.Record
	for _, r := range f.recs {
		c := *r
		out = append(out, &c)
	}
	return out, nil
}

func (f *fakeAttacher) Cleanup(_ context.Context, ref string, _ bool) ([]attach.CleanupResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "cleanup "+ref)
	delete(f.recs, ref)
	return nil, nil
}

func (f *fakeAttacher) Extend(_ context.Context, o attach.ExtendOptions) (*attach.ExtendResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "extend "+o.Volume)
	f.size *= 2
	return &attach.ExtendResult{VolumeID: o.Volume, NewSize: f.size}, nil
}

func (f *fakeAttacher) DeviceSize(*attach.Record) int64 { return f.size }

func (f *fakeAttacher) callList() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// mountTable is the fake kernel's mount table the scripted runner keeps.
type mountTable struct {
	t      testing.TB
	root   string
	mu     sync.Mutex
	mounts map[string]string // target -> source
	argv   []string
}

func (m *mountTable) run(_ context.Context, cmd host.Command) (host.Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.argv = append(m.argv, strings.Join(cmd.Argv(), " "))
	switch cmd.Name {
	case "mount":
		m.mounts[hosttest.Arg(m.t, cmd, -1)] = hosttest.Arg(m.t, cmd, -2)
	case "umount":
		delete(m.mounts, hosttest.Arg(m.t, cmd, -1))
	default:
		return host.Result{}, fmt.Errorf("unexpected command %v", cmd.Argv())
	}
	m.write()
	return host.Result{}, nil
}

func (m *mountTable) write() {
	var b strings.Builder
	b.WriteString("22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n")
	i := 30
	for mp, dev := range m.mounts {
		fmt.Fprintf(&b, "%d 22 8:16 / %s rw,relatime - ext4 %s rw\n", i, mp, dev)
		i++
	}
	hosttest.WriteFile(m.t, m.root, "/proc/self/mountinfo", b.String())
}
