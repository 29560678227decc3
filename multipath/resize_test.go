package multipath_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/multipath"
)

// resizeDaemon plays multipathd for Grow: path states, and "resize map"
// setting the map's size to what it is told.
type resizeDaemon struct {
	mu      sync.Mutex
	root    string
	states  string
	mapSize string // sectors written by "resize map"
	silent  int    // path-state queries left unanswered until their deadline
	got     []string
}

func (d *resizeDaemon) Command(ctx context.Context, cmd string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, cmd)
	switch cmd {
	case "show paths raw format %d:%t":
		if d.silent > 0 {
			d.silent--
			d.mu.Unlock()
			<-ctx.Done()
			d.mu.Lock()
			return "", fmt.Errorf("reply: %w", os.ErrDeadlineExceeded)
		}
		return d.states, nil
	case "resize map mpatha":
		if d.mapSize == "" {
			return "fail", nil
		}
		return "ok", os.WriteFile(filepath.Join(d.root, "/sys/devices/virtual/block/dm-0/size"), []byte(d.mapSize+"\n"), 0o644)
	}
	return "fail", nil
}

const (
	gib1 = 2097152 // sectors
	gib2 = 4194304
)

// fixtureGrow lays out dm-0 over sdb and sdc: the map at 1 GiB, each path
// at the size the rescan would have read, and each path's state.
func fixtureGrow(t *testing.T, root string, sizes, states [2]string) {
	t.Helper()
	fixtureMap(t, root, "0")
	hosttest.WriteFile(t, root, "/sys/devices/virtual/block/dm-0/size", strconv.Itoa(gib1)+"\n")
	for i, d := range []string{"sdb", "sdc"} {
		hosttest.WriteFile(t, root, "/sys/devices/x/"+d+"/size", sizes[i]+"\n")
		hosttest.WriteFile(t, root, "/sys/devices/x/"+d+"/device/state", states[i]+"\n")
		hosttest.WriteFile(t, root, "/sys/devices/x/"+d+"/device/rescan", "")
	}
}

func TestGrow(t *testing.T) {
	two, one := strconv.Itoa(gib2), strconv.Itoa(gib1)
	tests := []struct {
		name       string
		sizes      [2]string
		states     [2]string
		dmStates   string
		mapSize    string
		wantErr    string
		wantResize bool
		wantNew    int64
	}{
		{name: "both paths grew: map resized", sizes: [2]string{two, two}, states: [2]string{"running", "running"},
			dmStates: "sdb:active\nsdc:active\nsdz:failed\n", mapSize: two, wantResize: true, wantNew: gib2 * 512},
		{name: "nothing changed: no resize", sizes: [2]string{one, one}, states: [2]string{"running", "running"},
			dmStates: "sdb:active\nsdc:active\n", wantNew: gib1 * 512},
		{name: "offline path refused, named", sizes: [2]string{two, one}, states: [2]string{"running", "offline"},
			dmStates: "sdb:active\nsdc:failed\n", wantErr: "path sdc is offline"},
		{name: "blocked path that stays blocked refused", sizes: [2]string{two, two}, states: [2]string{"blocked", "running"},
			dmStates: "sdb:active\nsdc:active\n", wantErr: "path sdb stayed blocked"},
		{name: "path failed in multipathd refused", sizes: [2]string{two, two}, states: [2]string{"running", "running"},
			dmStates: "sdb:active\nsdc:failed\n", wantErr: "multipathd holds path sdc failed"},
		{name: "paths disagree: map left alone", sizes: [2]string{two, one}, states: [2]string{"running", "running"},
			dmStates: "sdb:active\nsdc:active\n", wantErr: "sizes disagree"},
		{name: "map does not follow", sizes: [2]string{two, two}, states: [2]string{"running", "running"},
			dmStates: "sdb:active\nsdc:active\n", mapSize: one, wantResize: true, wantErr: "reports 1073741824 bytes, its paths 2147483648"},
		{name: "multipathd refuses the resize", sizes: [2]string{two, two}, states: [2]string{"running", "running"},
			dmStates: "sdb:active\nsdc:active\n", wantResize: true, wantErr: "resize map mpatha (dm-0)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, root := hosttest.New(t, nil)
			fixtureGrow(t, root, tc.sizes, tc.states)
			d := &resizeDaemon{root: root, states: tc.dmStates, mapSize: tc.mapSize}
			m := multipath.New(h, multipath.Options{Daemon: d, CommandTimeout: 200 * time.Millisecond, MapTimeout: 200 * time.Millisecond})
			v := m.FindVolume([]string{"sdb", "sdc"}, "")
			require.NotNil(t, v.Map)
			g, err := m.Grow(context.Background(), v, 0)
			require.Equal(t, tc.wantResize, contains(d.got, "resize map mpatha"), "commands: %v", d.got)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, &multipath.Growth{Device: "/dev/dm-0", OldSize: gib1 * 512, NewSize: tc.wantNew}, g)
			// Each path was rescanned.
			for _, disk := range []string{"sdb", "sdc"} {
				b, err := os.ReadFile(filepath.Join(root, "/sys/devices/x", disk, "device/rescan"))
				require.NoError(t, err)
				require.Equal(t, "1", string(b))
			}
		})
	}
}

func TestGrowWaitsForARecoveringPath(t *testing.T) {
	h, root := hosttest.New(t, nil)
	two := strconv.Itoa(gib2)
	fixtureGrow(t, root, [2]string{two, two}, [2]string{"running", "blocked"})
	d := &resizeDaemon{root: root, states: "sdb:active\nsdc:failed\n", mapSize: two}
	m := multipath.New(h, multipath.Options{Daemon: d, MapTimeout: 30 * time.Second})
	go func() {
		time.Sleep(50 * time.Millisecond)
		// Atomically: a reader must never see a half-written state.
		p := filepath.Join(root, "/sys/devices/x/sdc/device/state")
		_ = os.WriteFile(p+".new", []byte("running\n"), 0o644)
		_ = os.Rename(p+".new", p)
		time.Sleep(50 * time.Millisecond)
		d.mu.Lock()
		d.states = "sdb:active\nsdc:active\n"
		d.mu.Unlock()
	}()
	g, err := m.Grow(context.Background(), m.FindVolume([]string{"sdb", "sdc"}, ""), 0)
	require.NoError(t, err)
	require.Equal(t, int64(gib2*512), g.NewSize)
}

// A multipathd that does not answer while paths recover is asked again;
// one that stays silent gets the refusal naming the path last seen down.
func TestGrowSilentMultipathd(t *testing.T) {
	two := strconv.Itoa(gib2)
	tests := []struct {
		name    string
		silent  int
		state   string        // sdc's state in sysfs
		bound   time.Duration // MapTimeout; a query gets a third of it
		wantErr []string
	}{
		// The silent first query costs a third of the bound; the rest is
		// the margin the second query has on a loaded machine.
		{name: "answers on the second query", silent: 1, state: "running", bound: 1500 * time.Millisecond},
		{name: "silent throughout", silent: 1000, state: "running", bound: 300 * time.Millisecond, wantErr: []string{"multipathd did not answer"}},
		{name: "silent, path blocked", silent: 1000, state: "blocked", bound: 300 * time.Millisecond, wantErr: []string{"path sdc stayed blocked", "path not running"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, root := hosttest.New(t, nil)
			fixtureGrow(t, root, [2]string{two, two}, [2]string{"running", tc.state})
			d := &resizeDaemon{root: root, states: "sdb:active\nsdc:active\n", mapSize: two, silent: tc.silent}
			m := multipath.New(h, multipath.Options{Daemon: d, MapTimeout: tc.bound})
			_, err := m.Grow(context.Background(), m.FindVolume([]string{"sdb", "sdc"}, ""), 0)
			if tc.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, multipath.ErrPathDown)
			for _, w := range tc.wantErr {
				require.ErrorContains(t, err, w)
			}
		})
	}
}

func TestGrowSinglePath(t *testing.T) {
	h, root := hosttest.New(t, nil)
	hosttest.Symlink(t, root, "/sys/block/sdb", "../devices/x/sdb")
	hosttest.WriteFile(t, root, "/sys/devices/x/sdb/size", strconv.Itoa(gib2)+"\n")
	hosttest.WriteFile(t, root, "/sys/devices/x/sdb/device/state", "running\n")
	hosttest.WriteFile(t, root, "/sys/devices/x/sdb/device/rescan", "")
	d := &resizeDaemon{root: root}
	m := multipath.New(h, multipath.Options{Daemon: d})
	g, err := m.Grow(context.Background(), multipath.Volume{Disks: []string{"sdb"}}, 0)
	require.NoError(t, err)
	// The old size is read before the rescan; the fixture has none.
	require.Equal(t, int64(gib2*512), g.NewSize)
	require.Equal(t, "/dev/sdb", g.Device, "without a map the disk is the device")
	require.Empty(t, d.got, "no multipathd command without a map")

	_, err = m.Grow(context.Background(), multipath.Volume{}, 0)
	require.ErrorContains(t, err, "no path")
	_, err = m.Grow(context.Background(), multipath.Volume{Disks: []string{"../sdb"}}, 0)
	require.ErrorContains(t, err, "not a disk name")
}

func TestParsePathStates(t *testing.T) {
	got := multipath.ParsePathStates("sdb:active\n  sdc:failed \nnot a line\n../x:active\nsdd:\n")
	require.Equal(t, map[string]string{"sdb": "active", "sdc": "failed", "sdd": ""}, got)
}

func FuzzParsePathStates(f *testing.F) {
	f.Add("sdb:active\nsdc:failed\n")
	f.Fuzz(func(t *testing.T, s string) {
		for d := range multipath.ParsePathStates(s) {
			require.NotContains(t, d, "/")
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
