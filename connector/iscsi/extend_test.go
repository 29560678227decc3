package iscsi_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/multipath"
)

// growable gives each disk a size, a state and a rescan file that, once
// written, makes the disk report newSectors, as the kernel's rescan does.
func growable(t *testing.T, fk *fakeKernel, disks []string, state string, newSectors int) {
	for _, d := range disks {
		hosttest.WriteFile(t, fk.root, "/sys/block/"+d+"/size", "2097152\n")
		hosttest.WriteFile(t, fk.root, "/sys/block/"+d+"/device/state", state+"\n")
		hosttest.WriteFile(t, fk.root, "/sys/block/"+d+"/device/rescan", "")
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			for _, d := range disks {
				if b, _ := os.ReadFile(fk.path("/sys/block/" + d + "/device/rescan")); string(b) == "1" {
					// Atomically: a reader must never see a half-written size.
					p, _ := filepath.EvalSymlinks(fk.path("/sys/block/" + d))
					_ = os.WriteFile(p+"/size.new", []byte(strconv.Itoa(newSectors)+"\n"), 0o644)
					_ = os.Rename(p+"/size.new", p+"/size")
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
}

func rescanned(t *testing.T, fk *fakeKernel, disk string) bool {
	b, err := os.ReadFile(fk.path("/sys/block/" + disk + "/device/rescan"))
	require.NoError(t, err)
	return string(b) == "1"
}

func TestExtendSinglePath(t *testing.T) {
	fk, _, h := newFakeKernel(t)
	c := iscsi.New(h, fastOptions())
	ctx := context.Background()
	ci := singleInfo(t, 1, false)
	dev, err := c.Connect(ctx, ci)
	require.NoError(t, err)
	growable(t, fk, []string{"sda"}, "running", 4194304)

	sz, err := c.Extend(ctx, ci, dev, 2<<30)
	require.NoError(t, err)
	require.Equal(t, &connector.Resize{Device: "/dev/sda", OldSize: 1 << 30, NewSize: 2 << 30}, sz)
	require.True(t, rescanned(t, fk, "sda"))

	// Again, size unknown (local-only): nothing to do, same answer.
	sz, err = c.Extend(ctx, ci, dev, 0)
	require.NoError(t, err)
	require.Equal(t, int64(2<<30), sz.NewSize)
}

func TestExtendRefusesAPathThatIsDown(t *testing.T) {
	fk, _, h := newFakeKernel(t)
	c := iscsi.New(h, fastOptions())
	ctx := context.Background()
	ci := singleInfo(t, 1, false)
	dev, err := c.Connect(ctx, ci)
	require.NoError(t, err)
	growable(t, fk, []string{"sda"}, "transport-offline", 4194304)

	_, err = c.Extend(ctx, ci, dev, 2<<30)
	require.ErrorIs(t, err, multipath.ErrPathDown)
	require.ErrorContains(t, err, "path sda is transport-offline")
	require.False(t, rescanned(t, fk, "sda"), "nothing was rescanned")
}

func TestExtendNotAttached(t *testing.T) {
	_, _, h := newFakeKernel(t)
	c := iscsi.New(h, fastOptions())
	_, err := c.Extend(context.Background(), singleInfo(t, 1, false), nil, 0)
	require.ErrorContains(t, err, "no device of the volume")
	_, err = c.Extend(context.Background(), connInfo(t, `{"driver_volume_type":"iscsi","data":{"target_portal":"x;y","target_iqn":"bad","target_lun":1}}`), nil, 0)
	require.Error(t, err)
}

func TestExtendMultipath(t *testing.T) {
	fk, _, h := newFakeKernel(t)
	hosttest.WriteFile(t, fk.root, "/proc/42/comm", "multipathd\n")
	opts := fastOptions()
	opts.Multipath = true
	d := &mapResizer{root: fk.root}
	opts.MultipathOptions.Daemon = d
	c := iscsi.New(h, opts)
	ctx := context.Background()
	ci := connInfo(t, `{"driver_volume_type":"iscsi","target_portals":["127.0.0.1:3260","127.0.0.2:3260"],"target_iqns":["`+tgtIQN+`","`+tgtIQN+`"],"target_luns":[1,1]}`)
	fk.luns = map[int]string{1: fk.luns[1]}
	dev, err := c.Connect(ctx, ci)
	require.NoError(t, err)
	require.Equal(t, "/dev/dm-0", dev.Path)
	hosttest.WriteFile(t, fk.root, "/sys/block/dm-0/size", "2097152\n")
	growable(t, fk, []string{"sda", "sdb"}, "running", 4194304)

	// A path multipathd holds failed is waited for up to MapTimeout,
	// then refused; nothing here reinstates it, so a short bound proves it.
	d.states = "sda:active\nsdb:failed\n"
	refusing := opts
	refusing.MultipathOptions.MapTimeout = 100 * time.Millisecond
	_, err = iscsi.New(h, refusing).Extend(ctx, ci, dev, 2<<30)
	require.ErrorIs(t, err, multipath.ErrPathDown)
	require.ErrorContains(t, err, "path sdb failed")
	require.False(t, rescanned(t, fk, "sda"))

	d.states = "sda:active\nsdb:active\n"
	sz, err := c.Extend(ctx, ci, dev, 2<<30)
	require.NoError(t, err)
	require.Equal(t, &connector.Resize{Device: "/dev/dm-0", OldSize: 1 << 30, NewSize: 2 << 30}, sz)
}

// mapResizer answers multipathd's path states and makes "resize map" set
// dm-0 to its first path's size.
type mapResizer struct {
	root   string
	states string
}

func (m *mapResizer) Command(_ context.Context, cmd string) (string, error) {
	switch {
	case cmd == "show paths raw format %d:%t":
		return m.states, nil
	case len(cmd) > 11 && cmd[:11] == "resize map ":
		b, err := os.ReadFile(filepath.Join(m.root, "/sys/block/sda/size"))
		if err != nil {
			return "fail", nil
		}
		p, _ := filepath.EvalSymlinks(filepath.Join(m.root, "/sys/block/dm-0"))
		if err := os.WriteFile(p+"/size.new", b, 0o644); err != nil {
			return "fail", nil
		}
		return "ok", os.Rename(p+"/size.new", p+"/size")
	}
	return "", multipath.ErrNoSocket
}
