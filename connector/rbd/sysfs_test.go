package rbd

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
)

// krbdDevice writes /sys/bus/rbd/devices/<id> as Linux 6.1 shows it;
// ns nil leaves pool_ns out (kernels before 4.19).
func krbdDevice(t *testing.T, root, id, pool string, ns *string, image, snap string) {
	t.Helper()
	dir := sysRBDDevices + "/" + id + "/"
	hosttest.WriteFile(t, root, dir+"pool", pool+"\n")
	hosttest.WriteFile(t, root, dir+"name", image+"\n")
	hosttest.WriteFile(t, root, dir+"current_snap", snap+"\n")
	hosttest.WriteFile(t, root, dir+"size", "33554432\n")
	if ns != nil {
		hosttest.WriteFile(t, root, dir+"pool_ns", *ns+"\n")
	}
}

// nbdDevice writes /sys/block/<name>/pid and, unless argv is empty, the
// process's NUL-separated cmdline.
func nbdDevice(t *testing.T, root, name, pid string, argv ...string) {
	t.Helper()
	hosttest.WriteFile(t, root, sysBlock+"/"+name+"/pid", pid+"\n")
	if len(argv) > 0 {
		hosttest.WriteFile(t, root, "/proc/"+pid+"/cmdline", strings.Join(argv, "\x00")+"\x00")
	}
}

func TestReadKRBD(t *testing.T) {
	_, root := hosttest.New(t, nil)
	h := hosttest.NewQuiet(root)
	got, err := KernelMappings(h.FS)
	require.NoError(t, err)
	require.Empty(t, got, "no rbd module: no mappings")

	empty, ns1 := "", "ns1"
	krbdDevice(t, root, "0", "volumes", &empty, "vol1", "-")
	krbdDevice(t, root, "1", "volumes2", nil, "vol1", "-")
	krbdDevice(t, root, "2", "volumes", &ns1, "vol1", "-")
	krbdDevice(t, root, "10", "volumes", &empty, "vol1", "snap1")
	got, err = KernelMappings(h.FS)
	require.NoError(t, err)
	require.Equal(t, []Mapping{
		{ID: "0", Pool: "volumes", Image: "vol1", Snap: "-", Device: "/dev/rbd0"},
		{ID: "1", Pool: "volumes2", Image: "vol1", Snap: "-", Device: "/dev/rbd1"},
		{ID: "10", Pool: "volumes", Image: "vol1", Snap: "snap1", Device: "/dev/rbd10"},
		{ID: "2", Pool: "volumes", Namespace: "ns1", Image: "vol1", Snap: "-", Device: "/dev/rbd2"},
	}, got)
	v := Volume{Pool: "volumes", Image: "vol1"}
	m, ok := find(got, v)
	require.True(t, ok)
	require.Equal(t, "/dev/rbd0", m.Device, "not volumes2's, not the namespace's, not the snapshot")

	// A device half-removed (no name any more) is skipped; a broken one
	// is an error naming it.
	hosttest.WriteFile(t, root, sysRBDDevices+"/3/pool", "volumes\n")
	got, err = KernelMappings(h.FS)
	require.NoError(t, err)
	require.Len(t, got, 4)
	hosttest.WriteFile(t, root, sysRBDDevices+"/../x", "")
	hosttest.Mkdir(t, root, sysRBDDevices+"/bogus")
	hosttest.WriteFile(t, root, sysRBDDevices+"/bogus/pool", "p\n")
	hosttest.WriteFile(t, root, sysRBDDevices+"/bogus/name", "i\n")
	hosttest.WriteFile(t, root, sysRBDDevices+"/bogus/current_snap", "-\n")
	_, err = KernelMappings(h.FS)
	require.ErrorContains(t, err, `krbd device id "bogus" is not a number`)
}

func TestParseNBDCmdline(t *testing.T) {
	const exe = "/usr/bin/rbd-nbd"
	for _, tc := range []struct {
		name string
		argv []string
		want Mapping // zero: not ok
	}{
		{"rbd device map with a private conf", []string{exe, "--conf", "/run/brick/ceph/map-1/ceph.conf", "--id", "brick", "map", "volumes/vol2"},
			Mapping{Pool: "volumes", Image: "vol2", Snap: "-"}},
		{"monitors, cluster, read-only after the spec", []string{exe, "--cluster", "ceph", "-m", "127.0.0.1:6789", "--id", "brick", "map", "volumes/ns1/vol1", "--read-only", "--device", "/dev/nbd3"},
			Mapping{Pool: "volumes", Namespace: "ns1", Image: "vol1", Snap: "-"}},
		{"option=value forms, known or not", []string{exe, "--conf=/etc/ceph/ceph.conf", "--rbd_cache=false", "map", "--io-timeout=30", "p/i"},
			Mapping{Pool: "p", Image: "i", Snap: "-"}},
		{"a snapshot", []string{exe, "map", "p/i@s1"}, Mapping{Pool: "p", Image: "i", Snap: "s1"}},
		{"a snapshot by id", []string{exe, "map", "p/i", "--snap-id", "4"}, Mapping{Pool: "p", Image: "i", Snap: "@id"}},
		{"re-attached after a restart", []string{exe, "attach", "--device", "/dev/nbd0", "--cookie", "c0ffee", "p/i"}, Mapping{Pool: "p", Image: "i", Snap: "-"}},
		{"an option brick does not know may take the spec's place", []string{exe, "--rbd_cache", "false", "map", "p/i"}, Mapping{}},
		{"no pool: the cluster's default pool", []string{exe, "map", "vol1"}, Mapping{}},
		{"list-mapped is no mapping", []string{exe, "list-mapped", "--format", "json"}, Mapping{}},
		{"unmap is no mapping", []string{exe, "unmap", "/dev/nbd0"}, Mapping{}},
		{"another program", []string{"/usr/bin/qemu-nbd", "map", "p/i"}, Mapping{}},
		{"a value option at the end", []string{exe, "map", "p/i", "--device"}, Mapping{}},
		{"two specs", []string{exe, "map", "p/i", "p/j"}, Mapping{}},
		{"empty namespace", []string{exe, "map", "p//i"}, Mapping{}},
		{"empty snapshot", []string{exe, "map", "p/i@"}, Mapping{}},
		{"too many parts", []string{exe, "map", "p/n/i/x"}, Mapping{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseNBDCmdline([]byte(strings.Join(tc.argv, "\x00") + "\x00"))
			require.Equal(t, tc.want != Mapping{}, ok)
			if ok {
				require.Equal(t, tc.want, got)
			}
		})
	}
}

func TestReadNBD(t *testing.T) {
	_, root := hosttest.New(t, nil)
	h := hosttest.NewQuiet(root)
	scan, err := readNBD(h.FS)
	require.NoError(t, err)
	require.Empty(t, scan.Mappings)

	hosttest.Mkdir(t, root, sysBlock+"/nbd2") // not served
	hosttest.Mkdir(t, root, sysBlock+"/rbd0")
	nbdDevice(t, root, "nbd0", "4242", "/usr/bin/rbd-nbd", "--id", "brick", "map", "volumes/vol2")
	nbdDevice(t, root, "nbd1", "77", "qemu-nbd", "-c", "/dev/nbd1", "disk.qcow2")
	scan, err = readNBD(h.FS)
	require.NoError(t, err)
	require.Equal(t, nbdScan{Mappings: []Mapping{{ID: "4242", Pool: "volumes", Image: "vol2", Snap: "-", Device: "/dev/nbd0"}}}, scan)

	nbdDevice(t, root, "nbd3", "999") // its process is gone
	nbdDevice(t, root, "nbd4", "5", "rbd-nbd", "--weird", "x", "map", "p/i")
	scan, err = readNBD(h.FS)
	require.NoError(t, err)
	require.Len(t, scan.Mappings, 1)
	require.Equal(t, []string{"/dev/nbd3", "/dev/nbd4"}, scan.Unknown)
}

// TestNBDClientBrickCannotReadCostsOneListing: a device served by an
// rbd-nbd brick cannot read makes Connect and Disconnect ask `rbd device
// list` once each; the answer decides.
func TestNBDClientBrickCannotReadCostsOneListing(t *testing.T) {
	c, f, r, root := newTestConnector(t, Options{Driver: DriverNBD})
	ctx := context.Background()
	nbdDevice(t, root, "nbd9", "5", "rbd-nbd", "--weird", "x", "map", "volumes/other")
	info := cinderInfo(t, nil)
	dev, err := c.Connect(ctx, info)
	require.NoError(t, err)
	require.Equal(t, "/dev/nbd0", dev.Path)
	require.NoError(t, c.Disconnect(ctx, info, dev, connector.DisconnectOptions{}))
	require.Empty(t, f.mappings)
	var lists, others int
	for _, call := range r.Calls() {
		switch {
		case strings.HasPrefix(call, "rbd device list"):
			lists++
		case !strings.HasPrefix(call, "rbd device map") && !strings.HasPrefix(call, "rbd device unmap"):
			others++
		}
	}
	require.Equal(t, 2, lists, "one for the connect, one for the disconnect: %q", r.Calls())
	require.Zero(t, others)
}

// TestNBDConfirmWaitsForTheDaemon: rbd-nbd daemonizes before the kernel
// shows its pid; the map is confirmed once it does.
func TestNBDConfirmWaitsForTheDaemon(t *testing.T) {
	f := &fakeCeph{t: t}
	var root string
	r := hosttest.NewRunner(func(ctx context.Context, cmd host.Command) (host.Result, error) {
		res, err := f.run(ctx, cmd)
		if cmd.Name == "rbd" && hosttest.Arg(t, cmd, 1) == "map" && err == nil {
			pidFile := root + sysBlock + "/nbd0/pid"
			pid, rerr := readAndRemove(pidFile)
			require.NoError(t, rerr)
			go func() {
				time.Sleep(100 * time.Millisecond)
				hosttest.WriteFile(t, root, sysBlock+"/nbd0/pid", pid)
			}()
		}
		return res, err
	})
	h, rt := hosttest.New(t, r)
	root, f.root = rt, rt
	hosttest.WriteFile(t, root, "/proc/self/mountinfo", "22 1 0:21 / / rw - ext4 /dev/vda1 rw\n")
	hosttest.WriteFile(t, root, "/proc/321/comm", "systemd-udevd\n")
	c := New(h, Options{Driver: DriverNBD, DeviceTimeout: 5 * time.Second})
	dev, err := c.Connect(context.Background(), cinderInfo(t, nil))
	require.NoError(t, err)
	require.Equal(t, "/dev/nbd0", dev.Path)
	require.Len(t, r.Calls(), 1, "no listing: %q", r.Calls())
}

// TestUnmapLeavingTheMappingFails: an unmap that exits 0 but leaves the
// kernel's record is reported.
func TestUnmapLeavingTheMappingFails(t *testing.T) {
	for _, driver := range []string{DriverKRBD, DriverNBD} {
		t.Run(driver, func(t *testing.T) {
			c, f, _, _ := newTestConnector(t, Options{Driver: driver})
			ctx := context.Background()
			info := cinderInfo(t, nil)
			dev, err := c.Connect(ctx, info)
			require.NoError(t, err)
			f.unmapNoop = true
			err = c.Disconnect(ctx, info, dev, connector.DisconnectOptions{})
			require.ErrorContains(t, err, "still mapped at "+dev.Path+" after unmap")
		})
	}
}

func readAndRemove(p string) (string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	return string(b), os.Remove(p)
}

func FuzzParseNBDCmdline(f *testing.F) {
	f.Add([]byte("/usr/bin/rbd-nbd\x00--conf\x00/c\x00--id\x00brick\x00map\x00volumes/ns/vol@s\x00--read-only\x00"))
	f.Add([]byte("rbd-nbd\x00attach\x00--device\x00/dev/nbd0\x00p/i\x00"))
	f.Add([]byte("rbd-nbd\x00--x=y\x00map\x00p/i\x00--snap-id\x004\x00"))
	f.Fuzz(func(t *testing.T, cmdline []byte) {
		m, ok := parseNBDCmdline(cmdline)
		if !ok {
			return
		}
		if m.Pool == "" || m.Image == "" || m.Snap == "" || strings.ContainsAny(m.Pool+m.Namespace+m.Image, "/@\x00") {
			t.Fatalf("accepted %q as %+v", cmdline, m)
		}
		if !strings.Contains(string(cmdline), m.Pool+"/") {
			t.Fatalf("pool %q not in %q", m.Pool, cmdline)
		}
	})
}

func FuzzParseKRBDDevice(f *testing.F) {
	f.Add("0", "volumes\n", "ns1\n", "vol1\n", "-\n")
	f.Add("12", "p", "", "i", "snap")
	f.Add("x", "\n", "\x00", "", "")
	f.Fuzz(func(t *testing.T, id, pool, ns, name, snap string) {
		m, err := parseKRBDDevice(id, map[string]string{"pool": pool, "pool_ns": ns, "name": name, "current_snap": snap})
		if err != nil {
			return
		}
		if !devicePathRE().MatchString(m.Device) || m.Device != "/dev/rbd"+id {
			t.Fatalf("device %q from id %q", m.Device, id)
		}
		if m.Pool == "" || m.Image == "" || strings.ContainsAny(m.Pool+m.Namespace+m.Image+m.Snap, "\n\x00") {
			t.Fatalf("accepted %+v", m)
		}
	})
}
