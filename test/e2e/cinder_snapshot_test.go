//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed"
)

// TestCinderSnapshots proves the test bed Cinder does what a CSI
// controller asks of it (test/cinder/brick_tb_driver.py, sparse-file
// copies): a snapshot of a volume with data, a larger volume from the
// snapshot, a clone, an extend; each new backing file holds the data and
// stays sparse; deleting them leaves no file behind. On the host only,
// seconds.
func TestCinderSnapshots(t *testing.T) {
	lane(t, laneServices)
	c := needCinder(t, testbed.CinderOptions{AcceptRunning: true})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()

	src, err := c.CreateVolume(ctx, "brick-e2e-snap-src", 1)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.DeleteVolume(context.Background(), src.ID) })
	pattern := make([]byte, 1<<20)
	_, err = rand.Read(pattern)
	require.NoError(t, err)
	writeAt(t, c.BackingFile(src.ID), pattern, 4<<20)

	snap := createSnapshot(t, ctx, c, src.ID)
	fromSnap := createVolumeFrom(t, ctx, c, map[string]any{"snapshot_id": snap, "size": 2}, "brick-e2e-snap-restored")
	clone := createVolumeFrom(t, ctx, c, map[string]any{"source_volid": src.ID, "size": 1}, "brick-e2e-snap-clone")
	for _, v := range []struct {
		id   string
		size int64
	}{{fromSnap, 2 << 30}, {clone, 1 << 30}} {
		requireSparseCopy(t, c.BackingFile(v.id), pattern, 4<<20, v.size)
	}

	require.NoError(t, c.Request(ctx, http.MethodPost, "/volumes/"+clone+"/action", "3.42", map[string]any{"os-extend": map[string]any{"new_size": 3}}, nil))
	require.NoError(t, waitSize(ctx, c, clone, 3))
	requireSparseCopy(t, c.BackingFile(clone), pattern, 4<<20, 3<<30)

	require.NoError(t, c.Request(ctx, http.MethodDelete, "/snapshots/"+snap, "", nil, nil))
	require.NoError(t, waitGone(ctx, c, "/snapshots/"+snap))
	for _, id := range []string{fromSnap, clone, src.ID} {
		require.NoError(t, c.DeleteVolume(ctx, id))
		_, err := os.Stat(c.BackingFile(id))
		require.True(t, os.IsNotExist(err), "backing file of %s after delete: %v", id, err)
	}
	entries, err := os.ReadDir(c.VolumesDir)
	require.NoError(t, err)
	for _, e := range entries {
		require.NotContains(t, e.Name(), snap, "the snapshot's file is gone")
	}
	t.Logf("snapshot, restore, clone, extend, delete: %s", time.Since(start).Round(time.Millisecond))
}

func writeAt(t *testing.T, path string, data []byte, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(data, off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// requireSparseCopy: path is size bytes, holds want at off, and has no
// more than a few MiB allocated (a copy kept the source's holes).
func requireSparseCopy(t *testing.T, path string, want []byte, off, size int64) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, size, fi.Size(), path)
	st, ok := fi.Sys().(*syscall.Stat_t)
	require.True(t, ok)
	require.Less(t, st.Blocks*512, int64(8<<20), "%s: allocated %d bytes of %d: holes filled", path, st.Blocks*512, size)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	got := make([]byte, len(want))
	_, err = f.ReadAt(got, off)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "%s: the data at %d", path, off)
}

// createSnapshot snapshots an available volume and waits for it.
func createSnapshot(t *testing.T, ctx context.Context, c *testbed.Cinder, volID string) string {
	t.Helper()
	var r struct {
		Snapshot struct {
			ID string `json:"id"`
		} `json:"snapshot"`
	}
	require.NoError(t, c.Request(ctx, http.MethodPost, "/snapshots", "", map[string]any{"snapshot": map[string]any{
		"volume_id": volID, "name": "brick-e2e-snap"}}, &r))
	id := r.Snapshot.ID
	t.Cleanup(func() { _ = c.Request(context.Background(), http.MethodDelete, "/snapshots/"+id, "", nil, nil) })
	require.NoError(t, waitStatus(ctx, c, "/snapshots/"+id, "snapshot", "available"))
	return id
}

// createVolumeFrom creates a volume with the extra create fields (a
// snapshot_id or a source_volid) and waits until it is available.
func createVolumeFrom(t *testing.T, ctx context.Context, c *testbed.Cinder, fields map[string]any, name string) string {
	t.Helper()
	fields["name"] = name
	var r struct{ Volume testbed.Volume }
	require.NoError(t, c.Request(ctx, http.MethodPost, "/volumes", "", map[string]any{"volume": fields}, &r))
	id := r.Volume.ID
	t.Cleanup(func() { _ = c.DeleteVolume(context.Background(), id) })
	_, err := c.WaitVolume(ctx, id, "available")
	require.NoError(t, err)
	return id
}

// waitStatus polls GET path until the object under key has status want;
// an error status fails at once.
func waitStatus(ctx context.Context, c *testbed.Cinder, path, key, want string) error {
	for {
		var r map[string]struct {
			Status string `json:"status"`
		}
		if err := c.Request(ctx, http.MethodGet, path, "", nil, &r); err != nil {
			return err
		}
		switch s := r[key].Status; {
		case s == want:
			return nil
		case len(s) >= 5 && s[:5] == "error":
			return fmt.Errorf("%s is %s", path, s)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (status %q)", path, ctx.Err(), r[key].Status)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitSize polls the volume until Cinder reports size GiB and available.
func waitSize(ctx context.Context, c *testbed.Cinder, id string, size int) error {
	for {
		v, err := c.GetVolume(ctx, id)
		if err != nil {
			return err
		}
		if v.Size == size && v.Status == "available" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("volume %s to reach %d GiB: %w (size %d, %s)", id, size, ctx.Err(), v.Size, v.Status)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitGone polls GET path until it answers 404.
func waitGone(ctx context.Context, c *testbed.Cinder, path string) error {
	for {
		err := c.Request(ctx, http.MethodGet, path, "", nil, nil)
		if testbed.StatusOf(err) == http.StatusNotFound {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s to be gone: %w (last %v)", path, ctx.Err(), err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
