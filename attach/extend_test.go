package attach

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
)

// growingConnector is fakeConnector that can also grow the device.
type growingConnector struct {
	*fakeConnector
	mu   sync.Mutex
	err  error
	size int64
	want []int64
}

func (g *growingConnector) Extend(_ context.Context, _ connector.ConnectionInfo, dev *connector.Device, want int64) (*connector.Resize, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.want = append(g.want, want)
	if g.err != nil {
		return nil, g.err
	}
	old := g.size
	g.size = max(g.size, want)
	return &connector.Resize{Device: dev.Path, OldSize: old, NewSize: g.size}, nil
}

// extendingCinder adds ExtendVolume to the fake Cinder's client.
type extendingCinder struct {
	*cinderapi.Client
	err   error
	calls []int
}

func (e *extendingCinder) ExtendVolume(_ context.Context, _ string, gib int, _ time.Duration) (*cinderapi.Volume, error) {
	e.calls = append(e.calls, gib)
	return nil, e.err
}

type extendFixture struct {
	*fixture
	m      *Manager
	conn   *growingConnector
	cinder *extendingCinder
	grows  []string
	fsErr  error
}

// newExtendFixture attaches the volume (mounted at /mnt/data when mount)
// and returns a manager whose connector and Cinder can extend.
func newExtendFixture(t *testing.T, mount bool) *extendFixture {
	f := newFixture(t, "")
	opts := AttachOptions{Volume: "data"}
	if mount {
		opts.Mountpoint, opts.Mkfs = "/mnt/data", "ext4"
	}
	_, err := f.manager().Attach(context.Background(), opts)
	require.NoError(t, err)
	ef := &extendFixture{fixture: f, conn: &growingConnector{fakeConnector: f.conn, size: 1 << 30}}
	base := f.manager()
	ef.cinder = &extendingCinder{Client: base.Cinder.(*cinderapi.Client)}
	reg := connector.NewRegistry()
	reg.Register(ef.conn, "iscsi")
	h := hosttest.NewAt(t, f.root, hosttest.NewRunner(func(ctx context.Context, cmd host.Command) (host.Result, error) {
		if cmd.Name == "resize2fs" || cmd.Name == "xfs_growfs" {
			ef.grows = append(ef.grows, strings.Join(cmd.Argv(), " "))
			return host.Result{}, ef.fsErr
		}
		return f.run(ctx, cmd)
	}))
	ef.m = &Manager{Host: h, Cinder: ef.cinder, Connectors: reg}
	return ef
}

func TestExtend(t *testing.T) {
	ef := newExtendFixture(t, true)
	res, err := ef.m.Extend(context.Background(), ExtendOptions{Volume: "data", SizeGiB: 2})
	require.NoError(t, err)
	require.Equal(t, &ExtendResult{VolumeID: volID, Device: "/dev/sdx", OldSize: 1 << 30, NewSize: 2 << 30, Filesystem: "ext4", Mountpoint: "/mnt/data"}, res)
	require.Equal(t, []int{2}, ef.cinder.calls)
	require.Equal(t, []int64{2 << 30}, ef.conn.want, "the host waits for Cinder's size")
	require.Equal(t, []string{"resize2fs /dev/sdx"}, ef.grows)
	rec, err := ef.m.Record(volID)
	require.NoError(t, err)
	require.Equal(t, int64(2<<30), rec.SizeBytes)

	// --local-only: no Cinder call, no size to wait for, the filesystem
	// is grown again (a no-op for resize2fs).
	res, err = ef.m.Extend(context.Background(), ExtendOptions{Volume: volID, LocalOnly: true})
	require.NoError(t, err)
	require.Equal(t, int64(2<<30), res.NewSize)
	require.Equal(t, []int{2}, ef.cinder.calls)
	require.Equal(t, []int64{2 << 30, 0}, ef.conn.want)
}

func TestExtendFailures(t *testing.T) {
	tests := []struct {
		name      string
		mount     bool
		opts      ExtendOptions
		cinderErr error
		growErr   error
		fsErr     error
		wantErr   []string
		wantSize  int64
	}{
		{name: "Cinder refuses: nothing on the host", opts: ExtendOptions{Volume: "data", SizeGiB: 2},
			cinderErr: &apierr.Error{Service: cinderapi.Service, Op: "extend", Kind: apierr.ErrUnsupported, Message: "needs 3.42"},
			wantErr:   []string{"extend data: cinder-extend: cinder extend: needs 3.42; nothing changed on this host"}},
		{name: "a path down: names the step and the way to finish", opts: ExtendOptions{Volume: "data", SizeGiB: 2},
			growErr: errors.New("iscsi extend: grow: path sdc is offline:\npath not running"),
			wantErr: []string{"extend data: grow-device: iscsi extend: grow: path sdc is offline:; path not running; the volume stays usable at its old size; run 'brick extend data --local-only' to finish"}},
		{name: "filesystem fails: device size recorded", mount: true, opts: ExtendOptions{Volume: "data", LocalOnly: true},
			fsErr:   errors.New("resize2fs: exit 1"),
			wantErr: []string{"grow-filesystem: grow ext4 on /mnt/data: resize2fs: exit 1", "brick extend data --local-only"}, wantSize: 1 << 30},
		{name: "size and local-only", opts: ExtendOptions{Volume: "data", SizeGiB: 2, LocalOnly: true}, wantErr: []string{"either a new size or local-only"}},
		{name: "neither", opts: ExtendOptions{Volume: "data"}, wantErr: []string{"either a new size or local-only"}},
		{name: "not attached here", opts: ExtendOptions{Volume: "other", LocalOnly: true}, wantErr: []string{"no local record", "volumes it attached here"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ef := newExtendFixture(t, tc.mount)
			ef.cinder.err, ef.conn.err, ef.fsErr = tc.cinderErr, tc.growErr, tc.fsErr
			_, err := ef.m.Extend(context.Background(), tc.opts)
			for _, w := range tc.wantErr {
				require.ErrorContains(t, err, w)
			}
			require.NotContains(t, err.Error(), "\n")
			if tc.cinderErr != nil {
				require.Empty(t, ef.conn.want, "the host was not touched")
			}
			rec, err := ef.m.Record(volID)
			require.NoError(t, err)
			require.Equal(t, tc.wantSize, rec.SizeBytes)
			require.Equal(t, PhaseAttached, rec.Phase, "the volume stays attached")
		})
	}
}

func TestExtendProtocolWithoutExtender(t *testing.T) {
	f := newFixture(t, "")
	m := f.manager()
	_, err := m.Attach(context.Background(), AttachOptions{Volume: "data"})
	require.NoError(t, err)
	_, err = m.Extend(context.Background(), ExtendOptions{Volume: "data", LocalOnly: true})
	require.ErrorIs(t, err, ErrCannotExtend)
	require.ErrorContains(t, err, "iscsi volumes: cannot grow online")
}

func TestGrowFilesystemTypes(t *testing.T) {
	ef := newExtendFixture(t, false)
	hosttest.WriteFile(t, ef.root, "/proc/self/mountinfo", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n30 22 8:16 / /mnt/x rw - xfs /dev/sdx rw\n31 22 8:32 / /mnt/y rw - btrfs /dev/sdy rw\n")
	ctx := context.Background()
	fsType, err := extendRun{m: ef.m}.growFilesystem(ctx, "/dev/sdx", "/mnt/x")
	require.NoError(t, err)
	require.Equal(t, "xfs", fsType)
	require.Equal(t, []string{"xfs_growfs /mnt/x"}, ef.grows)
	_, err = extendRun{m: ef.m}.growFilesystem(ctx, "/dev/sdy", "/mnt/y")
	require.ErrorContains(t, err, `not "btrfs"`)
	_, err = extendRun{m: ef.m}.growFilesystem(ctx, "/dev/sdz", "/mnt/z")
	require.ErrorContains(t, err, "/mnt/z is not mounted")
	_, err = extendRun{m: ef.m}.growFilesystem(ctx, "-rf", "/mnt/x")
	require.ErrorContains(t, err, "not a device path")
}

func TestExtendEncryptedNeedsTheKey(t *testing.T) {
	ef := newExtendFixture(t, false)
	rec, err := ef.m.Record(volID)
	require.NoError(t, err)
	rec.Crypt = &CryptRecord{Name: "crypt-" + volID, Path: "/dev/mapper/crypt-" + volID, Provider: "luks"}
	require.NoError(t, ef.m.store().save(rec))
	ef.m.Cinder = nil
	_, err = ef.m.Extend(context.Background(), ExtendOptions{Volume: volID, LocalOnly: true})
	require.ErrorIs(t, err, ErrEncrypted)
	require.ErrorContains(t, err, "crypt-resize: encrypted volume "+volID+": the key is needed and no Cinder is configured")
	require.ErrorContains(t, err, "--local-only' to finish")
	rec, err = ef.m.Record(volID)
	require.NoError(t, err)
	require.Equal(t, int64(1<<30), rec.SizeBytes, "the device's size is recorded")
}
