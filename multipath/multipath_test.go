package multipath_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/multipath"
)

const wwid = "360000000000000000e00000000010001"

// fixtureMap lays out dm-0 = mpatha over sdb and sdc (keeping disk links
// already there).
func fixtureMap(t *testing.T, root string, ro string) {
	t.Helper()
	hosttest.WriteFile(t, root, "/sys/devices/virtual/block/dm-0/dm/uuid", "mpath-"+wwid+"\n")
	hosttest.WriteFile(t, root, "/sys/devices/virtual/block/dm-0/dm/name", "mpatha\n")
	hosttest.WriteFile(t, root, "/sys/devices/virtual/block/dm-0/ro", ro+"\n")
	hosttest.Symlink(t, root, "/sys/block/dm-0", "../devices/virtual/block/dm-0")
	for _, d := range []string{"sdb", "sdc"} {
		hosttest.Mkdir(t, root, "/sys/devices/x/"+d+"/holders")
		if _, err := os.Lstat(filepath.Join(root, "/sys/block", d)); err != nil {
			hosttest.Symlink(t, root, "/sys/block/"+d, "../devices/x/"+d)
		}
		hosttest.Symlink(t, root, "/sys/devices/x/"+d+"/holders/dm-0", "../../../virtual/block/dm-0")
		hosttest.Symlink(t, root, "/sys/devices/virtual/block/dm-0/slaves/"+d, "../../../../x/"+d)
	}
	hosttest.WriteFile(t, root, "/dev/dm-0", "")
	hosttest.Symlink(t, root, "/dev/disk/by-id/dm-uuid-mpath-"+wwid, "../../dm-0")
}

func removeMap(t *testing.T, root string) {
	for _, p := range []string{"/sys/block/dm-0", "/sys/devices/virtual/block/dm-0", "/sys/devices/x/sdb/holders/dm-0", "/sys/devices/x/sdc/holders/dm-0", "/dev/dm-0", "/dev/disk/by-id/dm-uuid-mpath-" + wwid} {
		require.NoError(t, os.RemoveAll(filepath.Join(root, p)))
	}
}

func TestFindMap(t *testing.T) {
	h, root := hosttest.New(t, nil)
	fixtureMap(t, root, "0")
	m := multipath.New(h, multipath.Options{})

	mp, err := m.Maps().MapOf("/dev/sdc")
	require.NoError(t, err)
	require.Equal(t, &multipath.Map{Device: "dm-0", Name: "mpatha", WWID: wwid, Paths: []string{"sdb", "sdc"}}, mp)
	require.Equal(t, "/dev/dm-0", mp.DevPath())
	require.Equal(t, "/dev/disk/by-id/dm-uuid-mpath-"+wwid, mp.ByIDPath())

	byID, err := m.Maps().MapByWWID(wwid)
	require.NoError(t, err)
	require.Equal(t, mp, byID)

	// Without the udev link, sysfs still finds it.
	require.NoError(t, os.Remove(filepath.Join(root, "/dev/disk/by-id/dm-uuid-mpath-"+wwid)))
	byID, err = m.Maps().MapByWWID(wwid)
	require.NoError(t, err)
	require.Equal(t, mp, byID)

	_, err = m.Maps().MapByWWID("3600")
	require.ErrorIs(t, err, multipath.ErrNoMap)
	_, err = m.Maps().MapOf("sdd")
	require.ErrorIs(t, err, multipath.ErrNoMap)
	_, err = m.Maps().MapOf("../sdb")
	require.Error(t, err)
	_, err = m.Maps().MapByWWID("-f")
	require.Error(t, err)
}

func TestWaitForMapAndReadWrite(t *testing.T) {
	h, root := hosttest.New(t, nil)
	for _, d := range []string{"sdb", "sdc"} {
		hosttest.Mkdir(t, root, "/sys/devices/x/"+d+"/holders")
		hosttest.Symlink(t, root, "/sys/block/"+d, "../devices/x/"+d)
	}
	hosttest.Mkdir(t, root, "/dev")
	m := multipath.New(h, multipath.Options{MapTimeout: 100 * time.Millisecond, ReadWriteTimeout: 100 * time.Millisecond})
	ctx := context.Background()
	_, err := m.WaitForMap(ctx, wwid, "sdb", "sdc")
	require.ErrorIs(t, err, host.ErrWaitTimeout)

	require.NoError(t, os.RemoveAll(filepath.Join(root, "/sys")))
	fixtureMap(t, root, "1")
	mp, err := m.WaitForMap(ctx, wwid, "sdb")
	require.NoError(t, err)
	require.True(t, mp.ReadOnly)
	require.ErrorIs(t, m.WaitReadWrite(ctx, mp), host.ErrWaitTimeout)
	go func() {
		_ = os.WriteFile(filepath.Join(root, "/sys/devices/virtual/block/dm-0/ro"), []byte("0\n"), 0o644)
	}()
	m2 := multipath.New(h, multipath.Options{ReadWriteTimeout: 5 * time.Second})
	require.NoError(t, m2.WaitReadWrite(ctx, mp))
	require.False(t, mp.ReadOnly)

	// A map with another WWID over our paths is an error, not a wait.
	_, err = m.WaitForMap(ctx, "3600aaaa", "sdb")
	require.ErrorContains(t, err, "holds the paths")
}

// multipathd gone while brick waits for its map (killed mid-attach): no
// map will come, so the wait ends at once with ErrNoDaemon, not at the
// map timeout.
func TestWaitForMapDaemonGone(t *testing.T) {
	h, root := hosttest.New(t, nil)
	hosttest.Mkdir(t, root, "/sys/devices/x/sdb/holders")
	hosttest.Symlink(t, root, "/sys/block/sdb", "../devices/x/sdb")
	hosttest.Mkdir(t, root, "/dev")
	hosttest.WriteFile(t, root, "/proc/1/comm", "init\n")
	// A bound far below the map timeout, and far above a loaded machine's
	// scheduling delays.
	m := multipath.New(h, multipath.Options{MapTimeout: 60 * time.Second})
	start := time.Now()
	_, err := m.WaitForMap(context.Background(), wwid, "sdb")
	require.ErrorIs(t, err, multipath.ErrNoDaemon)
	require.ErrorContains(t, err, "stopped during the attach")
	require.Less(t, time.Since(start), 15*time.Second, "no wait for the map timeout")

	// multipathd running: the wait goes on until the timeout.
	hosttest.WriteFile(t, root, "/proc/77/comm", "multipathd\n")
	m = multipath.New(h, multipath.Options{MapTimeout: 100 * time.Millisecond})
	_, err = m.WaitForMap(context.Background(), wwid, "sdb")
	require.ErrorIs(t, err, host.ErrWaitTimeout)
}

func TestFlushRetriesUntilGone(t *testing.T) {
	var root string
	var flushes atomic.Int32
	r := hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
		if cmd.Name == "multipath" && hosttest.Arg(t, cmd, 0) == "-f" {
			if flushes.Add(1) < 3 {
				return host.Result{}, hosttest.Fail(cmd, 1, "mpatha: map in use")
			}
			removeMap(t, root)
		}
		return host.Result{}, nil
	})
	h, root0 := hosttest.New(t, r)
	root = root0
	fixtureMap(t, root, "0")
	m := multipath.New(h, multipath.Options{Backoff: host.Backoff{Min: time.Millisecond, Max: 2 * time.Millisecond}})
	mp, err := m.Maps().MapOf("sdb")
	require.NoError(t, err)
	require.NoError(t, m.Flush(context.Background(), mp))
	require.Equal(t, int32(3), flushes.Load())
	require.Equal(t, "multipath -f mpatha", r.Calls()[0], "udev's queue is read from /run/udev, not by running udevadm")
	// Gone: success without running multipath again.
	require.NoError(t, m.Flush(context.Background(), mp))
	require.Equal(t, int32(3), flushes.Load())
}

func TestFlushGivesUpAtDeadline(t *testing.T) {
	r := hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
		if cmd.Name == "multipath" {
			return host.Result{}, hosttest.Fail(cmd, 1, "mpatha: map in use")
		}
		return host.Result{}, nil
	})
	h, root := hosttest.New(t, r)
	fixtureMap(t, root, "0")
	m := multipath.New(h, multipath.Options{FlushTimeout: 150 * time.Millisecond, Backoff: host.Backoff{Min: 10 * time.Millisecond, Max: 20 * time.Millisecond}})
	mp, err := m.Maps().MapOf("sdb")
	require.NoError(t, err)
	err = m.Flush(context.Background(), mp)
	require.ErrorIs(t, err, host.ErrWaitTimeout)
	require.ErrorContains(t, err, "map in use")
}

func TestWWIDCommands(t *testing.T) {
	r := hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
		if cmd.Name == "multipathd" {
			return host.Result{Stdout: []byte("ok\n")}, nil
		}
		return host.Result{}, nil
	})
	h, root := hosttest.New(t, r)
	m := multipath.New(h, multipath.Options{})
	ctx := context.Background()
	wwids := filepath.Join(root, multipath.WWIDsFile)
	require.NoError(t, m.WWIDs().Add(ctx, wwid))
	require.True(t, m.WWIDs().Known(wwid))
	require.NoError(t, m.WWIDs().Add(ctx, wwid), "twice is once")
	data, err := os.ReadFile(wwids)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(data), "/"+wwid+"/\n"))
	require.True(t, strings.HasPrefix(string(data), "# Multipath wwids"), "a new file gets multipath's header")
	require.NoError(t, m.Daemon().AddPath(ctx, "/dev/sdb"))
	require.NoError(t, m.Daemon().DelPath(ctx, "sdb"))
	require.NoError(t, m.WWIDs().Remove(ctx, wwid))
	require.False(t, m.WWIDs().Known(wwid))
	data, err = os.ReadFile(wwids)
	require.NoError(t, err)
	require.Contains(t, string(data), "#"+wwid+"/\n", "forgotten as multipath -w does: the line becomes a comment")
	require.NoError(t, m.WWIDs().Remove(ctx, "36000000000000000000000000000dead"), "unknown is success")
	require.Equal(t, []string{
		"multipathd add path /dev/sdb",
		"multipathd del path sdb",
	}, r.Calls(), "the wwids file is written directly, not by running multipath")
	for _, bad := range []string{"", "-w", "a b", "../x", "36\x00"} {
		require.Error(t, m.WWIDs().Add(ctx, bad), bad)
		require.Error(t, m.WWIDs().Remove(ctx, bad), bad)
	}
	require.Error(t, m.Daemon().AddPath(ctx, "-sdb"))
}

func TestWWIDFallsBackToCommand(t *testing.T) {
	r := hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
		return host.Result{}, nil
	})
	h, root := hosttest.New(t, r)
	// /etc/multipath is a file: the wwids file cannot be written.
	hosttest.WriteFile(t, root, "/etc/multipath", "")
	m := multipath.New(h, multipath.Options{})
	require.NoError(t, m.WWIDs().Add(context.Background(), wwid))
	require.NoError(t, m.WWIDs().Remove(context.Background(), wwid))
	require.Equal(t, []string{"multipath -a " + wwid, "multipath -w " + wwid}, r.Calls())
}

func TestAddPathFailReportedOnStdout(t *testing.T) {
	r := hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
		return host.Result{Stdout: []byte("fail\n")}, nil
	})
	h, _ := hosttest.New(t, r)
	m := multipath.New(h, multipath.Options{})
	require.ErrorContains(t, m.Daemon().AddPath(context.Background(), "sdb"), "fail")
}

func TestDaemonRunning(t *testing.T) {
	h, root := hosttest.New(t, nil)
	m := multipath.New(h, multipath.Options{})
	hosttest.WriteFile(t, root, "/proc/1/comm", "init\n")
	require.False(t, m.Daemon().Running())
	hosttest.WriteFile(t, root, "/proc/77/comm", "multipathd\n")
	require.True(t, m.Daemon().Running())
}

func TestWaitUdevDone(t *testing.T) {
	h, root := hosttest.New(t, hosttest.NewRunner(nil))
	hosttest.WriteFile(t, root, "/sys/block/sdb/dev", "8:16\n")
	m := multipath.New(h, multipath.Options{MapTimeout: 200 * time.Millisecond})
	ctx := context.Background()

	// No udevd: nothing to wait for.
	require.NoError(t, m.WaitUdevDone(ctx, "sdb"))

	hosttest.WriteFile(t, root, "/run/udev/control", "")
	hosttest.Mkdir(t, root, "/run/udev/data")
	err := m.WaitUdevDone(ctx, "/dev/sdb")
	require.ErrorIs(t, err, host.ErrWaitTimeout)
	require.ErrorContains(t, err, "b8:16")

	go func() {
		time.Sleep(20 * time.Millisecond)
		hosttest.WriteFile(t, root, "/run/udev/data/b8:16", "E:ID_SERIAL="+wwid+"\n")
	}()
	m = multipath.New(h, multipath.Options{MapTimeout: 30 * time.Second})
	require.NoError(t, m.WaitUdevDone(ctx, "sdb"))

	require.Error(t, m.WaitUdevDone(ctx, "../etc"))
}

func TestSettleWaitsForTheUdevQueue(t *testing.T) {
	h, root := hosttest.New(t, hosttest.NewRunner(nil))
	ctx := context.Background()
	m := multipath.New(h, multipath.Options{SettleTimeout: 200 * time.Millisecond})
	require.NoError(t, m.Settle(ctx), "no udevd: nothing to wait for")

	hosttest.WriteFile(t, root, "/run/udev/control", "")
	require.NoError(t, m.Settle(ctx), "empty queue")
	hosttest.WriteFile(t, root, "/run/udev/queue", "")
	require.ErrorIs(t, m.Settle(ctx), host.ErrWaitTimeout)

	go func() {
		time.Sleep(20 * time.Millisecond)
		_ = os.Remove(filepath.Join(root, "/run/udev/queue"))
	}()
	m = multipath.New(h, multipath.Options{SettleTimeout: 30 * time.Second})
	require.NoError(t, m.Settle(ctx))
}

func TestUse(t *testing.T) {
	h, root := hosttest.New(t, nil)
	m := multipath.New(h, multipath.Options{})
	use, err := m.Use(false, false)
	require.NoError(t, err)
	require.False(t, use, "not asked for")
	use, err = m.Use(true, false)
	require.NoError(t, err)
	require.False(t, use, "no multipathd: a single path")
	_, err = m.Use(false, true)
	require.ErrorIs(t, err, multipath.ErrNoDaemon, "enforced without multipathd")
	hosttest.WriteFile(t, root, "/proc/77/comm", "multipathd\n")
	for _, enforce := range []bool{false, true} {
		use, err = m.Use(!enforce, enforce)
		require.NoError(t, err)
		require.True(t, use)
	}
}
