package multipath_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/multipath"
)

// holdBy lays out a device-mapper device (or md array, for a name "md...")
// holding sdb.
func holdBy(t *testing.T, root, dev, uuid, name string) {
	t.Helper()
	hosttest.Mkdir(t, root, "/sys/devices/x/sdb/holders")
	if strings.HasPrefix(dev, "dm-") {
		hosttest.WriteFile(t, root, "/sys/devices/virtual/block/"+dev+"/dm/uuid", uuid+"\n")
		hosttest.WriteFile(t, root, "/sys/devices/virtual/block/"+dev+"/dm/name", name+"\n")
	} else {
		hosttest.Mkdir(t, root, "/sys/devices/virtual/block/"+dev)
	}
	hosttest.Symlink(t, root, "/sys/block/"+dev, "../devices/virtual/block/"+dev)
	hosttest.Symlink(t, root, "/sys/devices/x/sdb/holders/"+dev, "../../../virtual/block/"+dev)
}

// udevEntry writes udev's database entry of sdb (8:16) and marks udevd running.
func udevEntry(t *testing.T, root, content string) {
	t.Helper()
	hosttest.WriteFile(t, root, "/sys/devices/x/sdb/dev", "8:16\n")
	hosttest.WriteFile(t, root, "/run/udev/control", "")
	hosttest.WriteFile(t, root, "/run/udev/data/b8:16", content)
}

// listWWID puts the test's WWID into multipath's wwids file.
func listWWID(t *testing.T, root string) {
	t.Helper()
	hosttest.WriteFile(t, root, multipath.WWIDsFile, "/"+wwid+"/\n")
}

func TestClaimed(t *testing.T) {
	const claims = "S:disk/by-id/wwn-0x60000\nE:DM_MULTIPATH_DEVICE_PATH=1\nE:ID_FS_TYPE=mpath_member\n"
	tests := []struct {
		name     string
		setup    func(t *testing.T, root string)
		mpd      bool   // multipathd runs
		lateMap  bool   // multipathd builds the map only after Claimed started
		writable bool   // the caller wants the map read-write
		wantMap  bool   // Claimed returns dm-0
		wantErr  string // what the error says, in part
		wantIs   error  // what the error wraps
		wantWarn string // another holder: the disk is handed out with this warning
	}{
		{name: "nothing holds the disk", setup: func(*testing.T, string) {}},
		{name: "multipathd runs, udev leaves the disk alone", mpd: true,
			setup: func(t *testing.T, root string) { udevEntry(t, root, "E:DM_MULTIPATH_DEVICE_PATH=0\n") }},
		{name: "a map holds the disk already", setup: func(t *testing.T, root string) { fixtureMap(t, root, "0") }, wantMap: true},
		{name: "udev marks the disk a path, its WWID listed: wait for the map", mpd: true, lateMap: true, writable: true, wantMap: true,
			setup: func(t *testing.T, root string) { udevEntry(t, root, claims); listWWID(t, root) }},
		{name: "udev marks the disk a path, find_multipaths greedy: wait for the map", mpd: true, lateMap: true, wantMap: true,
			setup: func(t *testing.T, root string) {
				udevEntry(t, root, claims)
				hosttest.WriteFile(t, root, "/etc/multipath/conf.d/brick.conf", "defaults {\n\tfind_multipaths greedy\n}\n")
			}},
		{name: "udev marks the disk, but nothing in the configuration claims it: no wait", mpd: true,
			setup: func(t *testing.T, root string) {
				udevEntry(t, root, claims)
				hosttest.WriteFile(t, root, "/etc/multipath.conf", "defaults {\n\tfind_multipaths strict\n}\n")
			}},
		{name: "find_multipaths smart still waits for a second path: no map to wait for", mpd: true,
			setup: func(t *testing.T, root string) {
				udevEntry(t, root, claims+"E:FIND_MULTIPATHS_WAIT_UNTIL=1765000000\n")
				listWWID(t, root)
			}},
		{name: "udev marks the disk, no map comes", mpd: true,
			setup:   func(t *testing.T, root string) { udevEntry(t, root, claims); listWWID(t, root) },
			wantErr: "udev marked sdb a multipath path", wantIs: host.ErrWaitTimeout},
		{name: "the map stays read-only", writable: true,
			setup:   func(t *testing.T, root string) { fixtureMap(t, root, "1") },
			wantErr: "to become read-write", wantIs: host.ErrWaitTimeout},
		{name: "read-only wanted: a read-only map is fine", setup: func(t *testing.T, root string) { fixtureMap(t, root, "1") }, wantMap: true},
		{name: "LVM holds the disk",
			setup:    func(t *testing.T, root string) { holdBy(t, root, "dm-4", "LVM-Yc1xWvxyz", "vg0-data") },
			wantWarn: "/dev/sdb is held by dm-4 (LVM logical volume vg0-data), not a multipath map"},
		{name: "dm-crypt holds the disk",
			setup:    func(t *testing.T, root string) { holdBy(t, root, "dm-5", "CRYPT-LUKS2-abc-secret", "secret") },
			wantWarn: "dm-5 (dm-crypt mapping secret)"},
		{name: "md holds the disk",
			setup:    func(t *testing.T, root string) { holdBy(t, root, "md127", "", "") },
			wantWarn: "md127 (md RAID array)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, root := hosttest.New(t, hosttest.NewRunner(nil))
			var logs bytes.Buffer
			h.Log = slog.New(slog.NewTextHandler(&logs, nil))
			fixtureDisk(t, root, "sdb")
			hosttest.WriteFile(t, root, "/proc/1/comm", "init\n")
			if tt.mpd {
				hosttest.WriteFile(t, root, "/proc/77/comm", "multipathd\n")
			}
			tt.setup(t, root)
			if tt.lateMap {
				go func() {
					time.Sleep(30 * time.Millisecond)
					fixtureMap(t, root, "0")
				}()
			}
			// A map that comes, comes within 30 ms: the long bound is
			// for a loaded machine, and only the late map waits.
			mapTimeout := 50 * time.Millisecond
			if tt.lateMap {
				mapTimeout = 10 * time.Second
			}
			m := multipath.New(h, multipath.Options{MapTimeout: mapTimeout, ReadWriteTimeout: 50 * time.Millisecond})
			mp, err := m.Claimed(context.Background(), wwid, tt.writable, "/dev/sdb")
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.ErrorIs(t, err, tt.wantIs)
				require.Nil(t, mp)
				return
			}
			require.NoError(t, err)
			if !tt.wantMap {
				require.Nil(t, mp)
				if tt.wantWarn == "" {
					require.Empty(t, logs.String())
					return
				}
				warn := logs.String()
				require.Equal(t, 1, strings.Count(warn, "level=WARN"), "one warning: %s", warn)
				require.Contains(t, warn, tt.wantWarn)
				require.Contains(t, warn, "vgchange -an", "the fix is named")
				return
			}
			require.NotNil(t, mp)
			require.Equal(t, "dm-0", mp.Device)
			require.Equal(t, wwid, mp.WWID)
			warn := logs.String()
			require.Equal(t, 1, strings.Count(warn, "level=WARN"), "one warning: %s", warn)
			require.Equal(t, 1, strings.Count(warn, "\n"), "on one line: %s", warn)
			require.Contains(t, warn, "multipathd took sdb into map mpatha (/dev/dm-0)")
			require.Contains(t, warn, "/etc/multipath/wwids")
		})
	}
}

func TestClaimedRejectsBadNames(t *testing.T) {
	h, _ := hosttest.New(t, hosttest.NewRunner(nil))
	_, err := multipath.New(h, multipath.Options{}).Claimed(context.Background(), wwid, true, "../etc")
	require.ErrorContains(t, err, "not a disk name")
}

// The udev entry is read only once udev has processed the disk.
func TestClaimedWaitsForUdev(t *testing.T) {
	h, root := hosttest.New(t, hosttest.NewRunner(nil))
	fixtureDisk(t, root, "sdb")
	hosttest.WriteFile(t, root, "/sys/devices/x/sdb/dev", "8:16\n")
	hosttest.WriteFile(t, root, "/proc/77/comm", "multipathd\n")
	hosttest.WriteFile(t, root, "/run/udev/control", "")
	hosttest.Mkdir(t, root, "/run/udev/data")
	listWWID(t, root)
	go func() {
		time.Sleep(30 * time.Millisecond)
		hosttest.WriteFile(t, root, "/run/udev/data/b8:16", "E:DM_MULTIPATH_DEVICE_PATH=1\n")
		time.Sleep(30 * time.Millisecond)
		fixtureMap(t, root, "0")
	}()
	mp, err := multipath.New(h, multipath.Options{MapTimeout: 5 * time.Second}).Claimed(context.Background(), wwid, true, "sdb")
	require.NoError(t, err)
	require.NotNil(t, mp)
	require.Equal(t, "mpatha", mp.Name)
}
