package multipath_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/multipath"
)

// fakeDisks stands in for the SCSI layer: busy names the devices in use;
// Delete removes the disk from the fixture tree.
type fakeDisks struct {
	root    string
	busy    map[string]bool
	mu      sync.Mutex
	checked [][]string
	deleted []string
}

func (f *fakeDisks) CheckNotInUse(devs ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checked = append(f.checked, devs)
	for _, d := range devs {
		if f.busy[d] {
			return fmt.Errorf("/dev/%s is mounted on /mnt: %w", d, host.ErrDeviceBusy)
		}
	}
	return nil
}

func (f *fakeDisks) Delete(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, name)
	for _, p := range []string{"/sys/block/" + name, "/dev/" + name} {
		if err := os.RemoveAll(filepath.Join(f.root, p)); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeDisks) WaitGone(context.Context, ...string) error { return nil }

// fixtureDisk lays out a plain disk without a map.
func fixtureDisk(t *testing.T, root, name string) {
	hosttest.Mkdir(t, root, "/sys/devices/x/"+name+"/holders")
	hosttest.Symlink(t, root, "/sys/block/"+name, "../devices/x/"+name)
	hosttest.WriteFile(t, root, "/dev/"+name, "")
}

func TestTeardownWithoutMap(t *testing.T) {
	r := hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
		return host.Result{}, hosttest.Fail(cmd, 1, "no command expected")
	})
	h, root := hosttest.New(t, r)
	fixtureDisk(t, root, "sdb")
	m := multipath.New(h, multipath.Options{})
	ctx := context.Background()
	disks := &fakeDisks{root: root}

	v := m.FindVolume([]string{"sdb"}, "")
	require.Nil(t, v.Map)
	require.Equal(t, []string{"/dev/sdb"}, v.DevicePaths())
	// The fixture's /dev/sdb is a plain file: fsynced instead of BLKFLSBUF.
	require.NoError(t, m.Teardown(ctx, disks, v, false))
	require.Equal(t, [][]string{{"sdb"}}, disks.checked)
	require.Equal(t, []string{"sdb"}, disks.deleted)
	require.Empty(t, r.Calls(), "the flush is an ioctl, not blockdev")

	require.NoError(t, m.Teardown(ctx, disks, multipath.Volume{Disks: []string{"sdz"}}, false), "a disk that is gone has nothing to flush")
	require.Error(t, m.Teardown(ctx, disks, multipath.Volume{Disks: []string{"../etc"}}, false))
}

func TestTeardownRefusesInUse(t *testing.T) {
	h, root := hosttest.New(t, hosttest.NewRunner(nil))
	fixtureDisk(t, root, "sdb")
	m := multipath.New(h, multipath.Options{})
	disks := &fakeDisks{root: root, busy: map[string]bool{"sdb": true}}
	v := multipath.Volume{Disks: []string{"sdb"}}

	err := m.Teardown(context.Background(), disks, v, false)
	require.ErrorIs(t, err, host.ErrDeviceBusy)
	require.ErrorContains(t, err, "use --force")
	require.Empty(t, disks.deleted, "nothing is taken away while in use")

	require.NoError(t, m.Teardown(context.Background(), disks, v, true), "forced: only a warning")
	require.Equal(t, []string{"sdb"}, disks.deleted)
}

func TestTeardownWithMap(t *testing.T) {
	var root string
	r := forceRunner(t, &root, "remove", "ok")
	h, root0 := hosttest.New(t, r)
	root = root0
	fixtureMap(t, root, "0")
	hosttest.WriteFile(t, root, multipath.WWIDsFile, "/"+wwid+"/\n")
	m := multipath.New(h, multipath.Options{})
	disks := &fakeDisks{root: root}

	v := m.FindVolume([]string{"sdc", "sdb"}, "")
	require.NotNil(t, v.Map)
	require.Equal(t, wwid, v.WWID, "the map's WWID is the one to forget")
	require.Equal(t, []string{"/dev/dm-0", "/dev/sdb", "/dev/sdc"}, v.DevicePaths(), "the map first, then the sorted paths")
	require.NoError(t, m.Teardown(context.Background(), disks, v, false))
	require.Equal(t, [][]string{{"dm-0"}}, disks.checked, "the map is what is checked for use")
	require.Equal(t, []string{"multipath -f mpatha"}, r.Calls())
	require.Equal(t, []string{"sdb", "sdc"}, disks.deleted)
	require.False(t, m.WWIDs().Known(wwid), "the WWID is forgotten")
}

func TestTeardownFindsMapByWWID(t *testing.T) {
	h, root := hosttest.New(t, hosttest.NewRunner(nil))
	fixtureMap(t, root, "0")
	m := multipath.New(h, multipath.Options{})
	v := m.FindVolume(nil, wwid)
	require.NotNil(t, v.Map, "a map whose paths are gone is found by its WWID")
	require.Equal(t, []string{"/dev/dm-0"}, v.DevicePaths())
	require.Nil(t, m.FindVolume(nil, "").Map)
}

func TestTeardownHeldMapForced(t *testing.T) {
	var root string
	r := forceRunner(t, &root, "fail", "ok")
	h, root0 := hosttest.New(t, r)
	root = root0
	fixtureMap(t, root, "0")
	m := multipath.New(h, multipath.Options{MapTimeout: 50 * time.Millisecond, Backoff: host.Backoff{Min: time.Millisecond, Max: 5 * time.Millisecond}})
	disks := &fakeDisks{root: root, busy: map[string]bool{"dm-0": true}}
	err := m.Teardown(context.Background(), disks, m.FindVolume([]string{"sdb", "sdc"}, ""), true)
	require.NoError(t, err, "forced: a held map does not stop the detach")
	require.Equal(t, []string{"sdb", "sdc"}, disks.deleted, "the paths go")
	require.Equal(t, []string{"multipathd disablequeueing map mpatha", "multipath -f mpatha", "dmsetup remove --deferred mpatha"}, r.Calls(), "the held map is marked for removal at its last close")
}

func TestTeardownDeleteFailure(t *testing.T) {
	h, root := hosttest.New(t, hosttest.NewRunner(nil))
	fixtureDisk(t, root, "sdb")
	m := multipath.New(h, multipath.Options{})
	errDelete := errors.New("write /sys/block/sdb/device/delete: permission denied")
	err := m.Teardown(context.Background(), failingDelete{&fakeDisks{root: root}, errDelete}, multipath.Volume{Disks: []string{"sdb"}, WWID: wwid}, false)
	require.ErrorIs(t, err, errDelete)
}

type failingDelete struct {
	*fakeDisks
	err error
}

func (f failingDelete) Delete(context.Context, string) error { return f.err }
