package multipath_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/multipath"
)

func TestAssemble(t *testing.T) {
	var root string
	var m *multipath.Multipath
	var mu sync.Mutex
	var known []string // the paths multipathd was handed, each once
	early := false     // a map was built before multipathd knew every path
	runner := hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
		if cmd.Name != "multipathd" || hosttest.Arg(t, cmd, 0) != "add" {
			return host.Result{}, nil
		}
		mu.Lock()
		defer mu.Unlock()
		// As multipathd with find_multipaths strict: a path of an unknown
		// WWID is kept as an orphan; once the WWID is known the map is
		// built over every path known by then.
		if p := hosttest.Arg(t, cmd, 2); !slices.Contains(known, p) {
			known = append(known, p)
		}
		if _, err := os.Stat(filepath.Join(root, "/sys/block/dm-0")); err != nil && m.WWIDs().Known(wwid) {
			early = early || len(known) < 2
			fixtureMap(t, root, "0")
		}
		return host.Result{Stdout: []byte("ok\n")}, nil
	})
	h, r := hosttest.New(t, runner)
	root = r
	for _, d := range []string{"sdb", "sdc"} {
		hosttest.Mkdir(t, root, "/sys/devices/x/"+d+"/holders") // /sys/block links come with the map fixture
	}
	m = multipath.New(h, multipath.Options{MapTimeout: 2 * time.Second})
	require.False(t, m.WWIDs().Known(wwid))

	mp, err := m.Assemble(context.Background(), wwid, "sdb", "sdc")
	require.NoError(t, err)
	require.Equal(t, "dm-0", mp.Device)
	require.Equal(t, []string{"sdb", "sdc"}, mp.Paths, "every path is in the map")
	require.False(t, early, "the map was built before multipathd knew every path: %v", runner.Calls())
	require.True(t, m.WWIDs().Known(wwid), "the WWID went into the wwids file")

	// Known WWID and a complete map: nothing runs.
	hosttest.WriteFile(t, root, "/etc/multipath/wwids", "# comment\n/"+wwid+"/\n")
	require.True(t, m.WWIDs().Known(wwid))
	n := len(runner.Calls())
	_, err = m.Assemble(context.Background(), wwid, "sdb", "sdc")
	require.NoError(t, err)
	require.Len(t, runner.Calls(), n)

	_, err = m.Assemble(context.Background(), "-bad wwid", "sdb")
	require.Error(t, err)
}

// TestAssembleDaemonGoneForgetsWWID: multipathd dead before it built the
// map (killed mid-attach): Assemble fails at once with ErrNoDaemon and
// takes back the WWID it added, so a multipathd started later builds no
// map under the single path the caller falls back to; a WWID listed before
// stays.
func TestAssembleDaemonGoneForgetsWWID(t *testing.T) {
	h, root := hosttest.New(t, hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
		return host.Result{}, hosttest.Fail(cmd, 1, "can't connect to multipathd socket")
	}))
	hosttest.WriteFile(t, root, "/proc/1/comm", "init\n")
	for _, d := range []string{"sdb", "sdc"} {
		hosttest.Mkdir(t, root, "/sys/devices/x/"+d+"/holders")
		hosttest.Symlink(t, root, "/sys/block/"+d, "../devices/x/"+d)
	}
	hosttest.Mkdir(t, root, "/dev")
	m := multipath.New(h, multipath.Options{MapTimeout: 60 * time.Second, Daemon: &fakeDaemon{down: true}})
	start := time.Now()
	_, err := m.Assemble(context.Background(), wwid, "sdb", "sdc")
	require.ErrorIs(t, err, multipath.ErrNoDaemon)
	require.Less(t, time.Since(start), 20*time.Second, "no wait for the map timeout")
	require.False(t, m.WWIDs().Known(wwid), "the WWID added for the map is taken back")

	hosttest.WriteFile(t, root, "/etc/multipath/wwids", "/"+wwid+"/\n")
	_, err = m.Assemble(context.Background(), wwid, "sdb", "sdc")
	require.ErrorIs(t, err, multipath.ErrNoDaemon)
	require.True(t, m.WWIDs().Known(wwid), "a WWID listed before stays")
}

// TestAssembleHandsOnlyNewPaths: a path a map holds already is not handed
// to multipathd again; the new one is, and the map is awaited until it
// holds it.
func TestAssembleHandsOnlyNewPaths(t *testing.T) {
	var root string
	runner := hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
		if cmd.Name == "multipathd" && hosttest.Arg(t, cmd, 0) == "add" && hosttest.Arg(t, cmd, 2) == "/dev/sdd" {
			joinFixtureMap(t, root, "sdd")
		}
		return host.Result{Stdout: []byte("ok\n")}, nil
	})
	h, r := hosttest.New(t, runner)
	root = r
	fixtureMap(t, root, "0")
	hosttest.Mkdir(t, root, "/sys/devices/x/sdd/holders")
	hosttest.Symlink(t, root, "/sys/block/sdd", "../devices/x/sdd")
	m := multipath.New(h, multipath.Options{MapTimeout: 2 * time.Second})

	mp, err := m.Assemble(context.Background(), wwid, "sdb", "sdc", "sdd")
	require.NoError(t, err)
	require.Equal(t, []string{"multipathd add path /dev/sdd"}, runner.Calls(), "sdb and sdc are in the map already")
	require.Equal(t, []string{"sdb", "sdc", "sdd"}, mp.Paths)
}

// TestAssembleWaitsForUdevBeforeTheWWID: the WWID goes into the wwids file
// only once udev has processed every path, so multipathd can identify all
// of them when it builds the map.
func TestAssembleWaitsForUdevBeforeTheWWID(t *testing.T) {
	var root string
	var once sync.Once
	runner := hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
		if cmd.Name == "multipathd" && hosttest.Arg(t, cmd, 0) == "add" {
			once.Do(func() { fixtureMap(t, root, "0") })
		}
		return host.Result{Stdout: []byte("ok\n")}, nil
	})
	h, r := hosttest.New(t, runner)
	root = r
	hosttest.WriteFile(t, root, "/run/udev/control", "")
	hosttest.Mkdir(t, root, "/run/udev/data")
	for i, d := range []string{"sdb", "sdc"} {
		hosttest.Mkdir(t, root, "/sys/devices/x/"+d+"/holders")
		hosttest.WriteFile(t, root, "/sys/devices/x/"+d+"/dev", "8:"+[]string{"16", "32"}[i]+"\n")
		hosttest.Symlink(t, root, "/sys/block/"+d, "../devices/x/"+d)
	}
	m := multipath.New(h, multipath.Options{MapTimeout: 30 * time.Second, Backoff: host.Backoff{Min: time.Millisecond, Max: 5 * time.Millisecond}})
	var early atomic.Bool
	go func() {
		time.Sleep(50 * time.Millisecond)
		hosttest.WriteFile(t, root, "/run/udev/data/b8:16", "")
		time.Sleep(50 * time.Millisecond)
		early.Store(m.WWIDs().Known(wwid))
		hosttest.WriteFile(t, root, "/run/udev/data/b8:32", "")
	}()
	mp, err := m.Assemble(context.Background(), wwid, "sdb", "sdc")
	require.NoError(t, err)
	require.False(t, early.Load(), "the WWID was added while udev still had a path to process")
	require.Equal(t, "dm-0", mp.Device)
}

// joinFixtureMap adds disk to the fixture's dm-0 as multipathd would.
func joinFixtureMap(t *testing.T, root, disk string) {
	hosttest.Symlink(t, root, "/sys/devices/x/"+disk+"/holders/dm-0", "../../../virtual/block/dm-0")
	hosttest.Symlink(t, root, "/sys/devices/virtual/block/dm-0/slaves/"+disk, "../../../../x/"+disk)
}
