package ironicattach

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/cinderapi"
)

const newVolID = "0e0e0e0e-1111-4222-8333-444444444444"

// fakeImageHost is Cinder and this host for --image: the attached
// "device" is a file, and fail makes one call fail.
type fakeImageHost struct {
	cinder *stubCinder
	dev    string
	fail   map[string]error // call -> error, once
	calls  []string
}

func (h *fakeImageHost) call(name string) error {
	h.calls = append(h.calls, name)
	if err, ok := h.fail[name]; ok {
		delete(h.fail, name)
		return err
	}
	return nil
}

func (h *fakeImageHost) CreateVolume(_ context.Context, name string, size int) (*cinderapi.Volume, error) {
	if err := h.call("create " + name); err != nil {
		return nil, err
	}
	v := &cinderapi.Volume{ID: newVolID, Name: name, Size: size, Status: "available"}
	h.cinder.vols = append(h.cinder.vols, v)
	return v, nil
}

func (h *fakeImageHost) DeleteVolume(_ context.Context, id string) error {
	return h.call("delete " + id)
}

func (h *fakeImageHost) Attach(_ context.Context, id string) (string, error) {
	if err := h.call("attach " + id); err != nil {
		return "", err
	}
	return h.dev, nil
}

func (h *fakeImageHost) Detach(_ context.Context, id string) error { return h.call("detach " + id) }

// imageFixture is a node, an empty "device" and an image of n bytes.
func imageFixture(t *testing.T, n int) (*bfvFixture, *fakeImageHost, ImageOpts, []byte) {
	f := newBFVFixture(t)
	dir := t.TempDir()
	data := bytes.Repeat([]byte("brick boot image "), n/17+1)[:n]
	img := filepath.Join(dir, "disk.img")
	require.NoError(t, os.WriteFile(img, data, 0o600))
	dev := filepath.Join(dir, "sdx")
	require.NoError(t, os.WriteFile(dev, nil, 0o600))
	h := &fakeImageHost{cinder: f.cinder, dev: dev, fail: map[string]error{}}
	return f, h, ImageOpts{Path: img, SizeGiB: 1}, data
}

func TestBootFromImage(t *testing.T) {
	f, h, img, data := imageFixture(t, 2*writeChunk+123)
	var seen []int64
	img.Progress = func(done, total int64) {
		require.Equal(t, int64(len(data)), total)
		seen = append(seen, done)
	}
	res, ir, err := f.m.BootFromImage(context.Background(), f.opts(nil), img, h)
	require.NoError(t, err)
	require.Equal(t, []string{"create brick-boot-node-1", "attach " + newVolID, "detach " + newVolID}, h.calls)
	got, err := os.ReadFile(h.dev)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got), "the device holds the image")
	require.Equal(t, []int64{writeChunk, 2 * writeChunk, int64(len(data))}, seen)
	require.Equal(t, newVolID, ir.VolumeID)
	require.Equal(t, int64(len(data)), ir.Bytes)
	require.Equal(t, newVolID, res.VolumeID)
	require.Len(t, f.ironic.targets, 1)
	require.Equal(t, newVolID, f.ironic.targets[0]["volume_id"])
}

func TestBootFromImageRollsBack(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name   string
		set    func(f *bfvFixture, h *fakeImageHost)
		want   string
		calls  []string
		undone string // the error text naming a failed undo
	}{
		{"create fails", func(_ *bfvFixture, h *fakeImageHost) { h.fail["create brick-boot-node-1"] = boom }, "create volume: boom",
			[]string{"create brick-boot-node-1"}, ""},
		{"attach fails", func(_ *bfvFixture, h *fakeImageHost) { h.fail["attach "+newVolID] = boom }, "attach volume: boom",
			[]string{"create brick-boot-node-1", "attach " + newVolID, "delete " + newVolID}, ""},
		{"write fails", func(_ *bfvFixture, h *fakeImageHost) { h.dev = filepath.Join(h.dev, "missing") }, "write image: open",
			[]string{"create brick-boot-node-1", "attach " + newVolID, "detach " + newVolID, "delete " + newVolID}, ""},
		{"detach fails", func(_ *bfvFixture, h *fakeImageHost) { h.fail["detach "+newVolID] = boom }, "detach volume: boom",
			[]string{"create brick-boot-node-1", "attach " + newVolID, "detach " + newVolID, "detach " + newVolID, "delete " + newVolID}, ""},
		{"node setup fails", func(f *bfvFixture, _ *fakeImageHost) { f.ironic.fail["POST /v1/volume/targets"] = 409 }, "set up node",
			[]string{"create brick-boot-node-1", "attach " + newVolID, "detach " + newVolID, "delete " + newVolID}, ""},
		{"delete fails too", func(_ *bfvFixture, h *fakeImageHost) {
			h.fail["attach "+newVolID] = boom
			h.fail["delete "+newVolID] = boom
		},
			"attach volume: boom", []string{"create brick-boot-node-1", "attach " + newVolID, "delete " + newVolID},
			"openstack volume delete " + newVolID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, h, img, _ := imageFixture(t, 1000)
			before := f.snapshot(t)
			tc.set(f, h)
			_, _, err := f.m.BootFromImage(context.Background(), f.opts(nil), img, h)
			require.ErrorContains(t, err, tc.want)
			require.Equal(t, tc.calls, h.calls)
			if tc.undone != "" {
				require.ErrorContains(t, err, tc.undone)
			}
			require.JSONEq(t, before, f.snapshot(t), "the node is as it was")
		})
	}
}

func TestBootFromImageRefusesBeforeCreating(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(f *bfvFixture, img *ImageOpts, o *BootOpts)
		want string
	}{
		{"qcow2", func(_ *bfvFixture, img *ImageOpts, _ *BootOpts) {
			require.NoError(t, os.WriteFile(img.Path, []byte("QFI\xfb\x00\x00\x00\x03rest"), 0o600))
		}, "is qcow2; brick writes raw images only"},
		{"too big", func(_ *bfvFixture, img *ImageOpts, _ *BootOpts) {
			require.NoError(t, os.Truncate(img.Path, gib+1))
		}, "give a --size of at least 2"},
		{"no size", func(_ *bfvFixture, img *ImageOpts, _ *BootOpts) { img.SizeGiB = 0 }, "--size 0"},
		{"missing image", func(_ *bfvFixture, img *ImageOpts, _ *BootOpts) { img.Path += ".gone" }, "no such file"},
		{"a directory", func(_ *bfvFixture, img *ImageOpts, _ *BootOpts) { img.Path = filepath.Dir(img.Path) }, "not a non-empty regular file"},
		{"powered on", func(f *bfvFixture, _ *ImageOpts, _ *BootOpts) { f.ironic.node["power_state"] = "power on" }, "is powered on"},
		{"no cinder interface", func(f *bfvFixture, _ *ImageOpts, _ *BootOpts) { f.ironic.storage = []string{"noop"} }, "no cinder storage interface"},
		{"boot index 0 taken", func(f *bfvFixture, _ *ImageOpts, _ *BootOpts) {
			f.ironic.targets = []map[string]any{{"uuid": "00000000-0000-4000-8000-0000000000d1", "node_uuid": nodeUUID, "boot_index": 0, "volume_id": volID}}
		}, "boots from volume " + volID},
		{"no initiator", func(_ *bfvFixture, _ *ImageOpts, o *BootOpts) { o.Initiator = "" }, "no iqn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, h, img, _ := imageFixture(t, 1000)
			o := f.opts(nil)
			tc.set(f, &img, &o)
			_, _, err := f.m.BootFromImage(context.Background(), o, img, h)
			require.ErrorContains(t, err, tc.want)
			require.Empty(t, h.calls, "no volume created")
			require.Empty(t, f.ironic.changes(), "nothing changed")
		})
	}
}

func TestCopyImageStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	err := copyImage(ctx, &out, strings.NewReader(strings.Repeat("x", 3*writeChunk)), 3*writeChunk, func(done, _ int64) {
		if done >= writeChunk {
			cancel()
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, writeChunk, out.Len())
	err = copyImage(context.Background(), &out, strings.NewReader("short"), 10, nil)
	require.ErrorContains(t, err, "shrank")
}

func TestBootFromVolumeAsksForStorageInterfaceVersion(t *testing.T) {
	f := newBFVFixture(t)
	require.Empty(t, f.m.Ironic.Microversion)
	require.Equal(t, BootMicroversion, f.m.forBoot().Ironic.Microversion)
	require.Empty(t, f.m.Ironic.Microversion, "the caller's client is unchanged")
	f.m.Ironic.Microversion = "1.50"
	require.Equal(t, "1.50", f.m.forBoot().Ironic.Microversion)
}
