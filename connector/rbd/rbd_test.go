package rbd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/secret"
)

// fakeCeph plays rbd over a fixture tree: map adds a mapping, its /dev
// node and the kernel's records (krbd: /sys/bus/rbd/devices/N; nbd:
// /sys/block/nbdN/pid and the rbd-nbd process's cmdline), unmap
// removes them, list prints JSON like Pacific.
type fakeCeph struct {
	t    *testing.T
	root string

	mu       sync.Mutex
	mappings []Mapping
	next     int
	// seen during map: the config and keyring rbd was given, and their modes.
	conf, keyring         string
	confMode, keyringMode os.FileMode
	// failures to inject
	mapErr    error
	unmapErr  error
	lie       bool // map reports success but maps nothing
	unmapNoop bool // unmap reports success but unmaps nothing
}

func (f *fakeCeph) run(_ context.Context, cmd host.Command) (host.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cmd.Name == "blockdev" {
		return host.Result{}, nil
	}
	require.Equal(f.t, "rbd", cmd.Name)
	args := cmd.Args
	require.Equal(f.t, "--device-type", hosttest.Arg(f.t, cmd, 2))
	driver := hosttest.Arg(f.t, cmd, 3)
	switch hosttest.Arg(f.t, cmd, 0) + " " + hosttest.Arg(f.t, cmd, 1) {
	case "device list":
		if f.conf != "" {
			// After a map with a key, the key must be off the disk before anything else runs.
			entries, _ := os.ReadDir(filepath.Join(f.root, DefaultTempDir))
			require.Empty(f.t, entries, "credentials still on disk when rbd device list runs")
		}
		out := make([]map[string]any, 0)
		for _, m := range f.mappings {
			if !strings.HasPrefix(m.Device, "/dev/"+map[string]string{DriverKRBD: "rbd", DriverNBD: "nbd"}[driver]) {
				continue
			}
			e := map[string]any{"id": m.ID, "pool": m.Pool, "namespace": m.Namespace, "snap": "-", "device": m.Device}
			if driver == DriverNBD {
				e["image"] = m.Image
			} else {
				e["name"] = m.Image
			}
			out = append(out, e)
		}
		b, _ := json.Marshal(out)
		return host.Result{Stdout: b}, nil
	case "device map":
		for i, a := range args {
			if a == "--conf" {
				f.readCreds(hosttest.Arg(f.t, cmd, i+1))
			}
		}
		if f.mapErr != nil {
			return host.Result{}, f.mapErr
		}
		spec := hosttest.Arg(f.t, cmd, -1)
		parts := strings.Split(spec, "/")
		m := Mapping{ID: fmt.Sprint(f.next), Pool: parts[0], Image: parts[len(parts)-1], Snap: "-"}
		if len(parts) == 3 {
			m.Namespace = parts[1]
		}
		prefix := "rbd"
		if driver == DriverNBD {
			prefix = "nbd"
		}
		m.Device = fmt.Sprintf("/dev/%s%d", prefix, f.next)
		f.next++
		if f.lie {
			return host.Result{Stdout: []byte(m.Device + "\n")}, nil
		}
		f.mappings = append(f.mappings, m)
		f.writeRecords(m, driver, args)
		hosttest.WriteFile(f.t, f.root, m.Device, "")
		ro := "0"
		if strings.Contains(strings.Join(args, " "), "--read-only") {
			ro = "1"
		}
		hosttest.WriteFile(f.t, f.root, "/sys/block/"+strings.TrimPrefix(m.Device, "/dev/")+"/ro", ro)
		return host.Result{Stdout: []byte(m.Device + "\n")}, nil
	case "device unmap":
		if f.unmapErr != nil || f.unmapNoop {
			return host.Result{}, f.unmapErr
		}
		dev := hosttest.Arg(f.t, cmd, -1)
		for i, m := range f.mappings {
			if m.Device == dev {
				f.mappings = append(f.mappings[:i], f.mappings[i+1:]...)
				_ = os.Remove(filepath.Join(f.root, dev))
				_ = os.RemoveAll(filepath.Join(f.root, sysRBDDevices, m.ID))
				_ = os.Remove(filepath.Join(f.root, sysBlock, strings.TrimPrefix(dev, "/dev/"), "pid"))
				return host.Result{}, nil
			}
		}
		return host.Result{}, hosttest.Fail(cmd, 22, "rbd: unmap failed: (22) Invalid argument")
	}
	f.t.Fatalf("unexpected command %v", cmd.Argv())
	return host.Result{}, nil
}

// writeRecords writes what the kernel shows for a new mapping. rbd-nbd's
// pid is 1000+N and its argv is what rbd device map would give it.
func (f *fakeCeph) writeRecords(m Mapping, driver string, args []string) {
	if driver == DriverKRBD {
		dir := sysRBDDevices + "/" + m.ID + "/"
		for name, v := range map[string]string{"pool": m.Pool, "pool_ns": m.Namespace, "name": m.Image, "current_snap": "-"} {
			hosttest.WriteFile(f.t, f.root, dir+name, v+"\n")
		}
		return
	}
	pid := fmt.Sprint(1000 + f.next - 1)
	hosttest.WriteFile(f.t, f.root, sysBlock+"/"+strings.TrimPrefix(m.Device, "/dev/")+"/pid", pid+"\n")
	argv := []string{"/usr/bin/rbd-nbd"}
	for i := 4; i < len(args)-1; i++ {
		if args[i] != "--read-only" {
			argv = append(argv, args[i])
		}
	}
	argv = append(argv, "map", args[len(args)-1])
	if strings.Contains(strings.Join(args, " "), "--read-only") {
		argv = append(argv, "--read-only")
	}
	hosttest.WriteFile(f.t, f.root, "/proc/"+pid+"/cmdline", strings.Join(argv, "\x00")+"\x00")
}

func (f *fakeCeph) readCreds(confPath string) {
	b, err := os.ReadFile(confPath)
	require.NoError(f.t, err)
	f.conf = string(b)
	fi, err := os.Stat(confPath)
	require.NoError(f.t, err)
	f.confMode = fi.Mode().Perm()
	for _, line := range strings.Split(f.conf, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && strings.TrimSpace(k) == "keyring" {
			p := strings.TrimSpace(v)
			b, err := os.ReadFile(p)
			require.NoError(f.t, err)
			f.keyring = string(b)
			fi, err := os.Stat(p)
			require.NoError(f.t, err)
			f.keyringMode = fi.Mode().Perm()
			dfi, err := os.Stat(filepath.Dir(p))
			require.NoError(f.t, err)
			require.Equal(f.t, os.FileMode(0o700), dfi.Mode().Perm(), "credentials directory mode")
		}
	}
}

func newTestConnector(t *testing.T, opts Options) (*Connector, *fakeCeph, *hosttest.Runner, string) {
	t.Helper()
	f := &fakeCeph{t: t}
	r := hosttest.NewRunner(f.run)
	h, root := hosttest.New(t, r)
	f.root = root
	hosttest.WriteFile(t, root, "/proc/self/mountinfo", "22 1 0:21 / / rw - ext4 /dev/vda1 rw\n")
	hosttest.Mkdir(t, root, "/dev")
	hosttest.WriteFile(t, root, "/proc/321/comm", "systemd-udevd\n")
	opts.DeviceTimeout = time.Second
	return New(h, opts), f, r, root
}

func TestConnectWithKeyWritesPrivateCredentialsAndRemovesThem(t *testing.T) {
	for _, driver := range []string{DriverKRBD, DriverNBD} {
		t.Run(driver, func(t *testing.T) {
			c, f, r, root := newTestConnector(t, Options{Driver: driver})
			info := cinderInfo(t, func(d map[string]any) {
				d["keyring"] = testKeyring
				d["hosts"] = []any{"127.0.0.1", "::1"}
				d["ports"] = []any{"6789", "6789"}
			})
			dev, err := c.Connect(context.Background(), info)
			require.NoError(t, err)
			wantDev := "/dev/rbd0"
			if driver == DriverNBD {
				wantDev = "/dev/nbd0"
			}
			require.Equal(t, &connector.Device{
				Path: wantDev, Type: "block", Protocol: "rbd",
				Extra: map[string]string{"pool": "volumes", "image": "volume-6d54cb90-a5d1-40d8-9cb2-c6adf43a02af", "driver": driver, "cluster": "ceph"},
			}, dev)

			require.Equal(t, "[client.cinder]\n\tkey = "+testKey+"\n", f.keyring, "brick writes its own keyring with only the key")
			require.Contains(t, f.conf, "mon host = 127.0.0.1:6789,[::1]:6789\n")
			require.Equal(t, os.FileMode(0o600), f.confMode)
			require.Equal(t, os.FileMode(0o600), f.keyringMode)

			entries, err := os.ReadDir(filepath.Join(root, DefaultTempDir))
			require.NoError(t, err)
			require.Empty(t, entries, "temporary credentials must be gone")
			fi, err := os.Stat(filepath.Join(root, DefaultTempDir))
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

			for _, cmd := range r.Commands() {
				require.NotContains(t, strings.Join(cmd.Argv(), " "), testKey)
			}
			calls := r.Calls()
			require.Len(t, calls, 1, "the map is the only command: mappings are read from the kernel")
			require.Regexp(t, `^rbd device map --device-type `+driver+` --conf /\S+/run/brick/ceph/map-\S+/ceph.conf --id cinder volumes/volume-6d54cb90-a5d1-40d8-9cb2-c6adf43a02af$`, calls[0])
		})
	}
}

func TestMapArgs(t *testing.T) {
	v := Volume{Pool: "volumes", Namespace: "ns1", Image: "vol1", Cluster: "ceph", User: "cinder", Monitors: []string{"192.0.2.1:6789", "[2001:db8::1]:6789"}}
	require.Equal(t,
		[]string{"device", "map", "--device-type", "krbd", "--cluster", "ceph", "-m", "192.0.2.1:6789,[2001:db8::1]:6789", "--id", "cinder", "volumes/ns1/vol1"},
		mapArgs(v, DriverKRBD, "", false))
	v.ReadOnly = true
	v.Monitors = nil
	v.User = ""
	require.Equal(t,
		[]string{"device", "map", "--device-type", "nbd", "--read-only", "--conf", "/run/brick/ceph/map-1/ceph.conf", "volumes/ns1/vol1"},
		mapArgs(v, DriverNBD, "/run/brick/ceph/map-1/ceph.conf", true))
	require.Equal(t,
		[]string{"device", "map", "--device-type", "krbd", "--read-only", "--options", "noudev", "--cluster", "ceph", "volumes/ns1/vol1"},
		mapArgs(v, DriverKRBD, "", true))
	require.Equal(t, []string{"device", "unmap", "--device-type", "krbd", "--options", "force", "/dev/rbd0"}, unmapArgs(DriverKRBD, "/dev/rbd0", true, false))
	require.Equal(t, []string{"device", "unmap", "--device-type", "krbd", "--options", "force,noudev", "/dev/rbd0"}, unmapArgs(DriverKRBD, "/dev/rbd0", true, true))
	require.Equal(t, []string{"device", "unmap", "--device-type", "krbd", "/dev/rbd0"}, unmapArgs(DriverKRBD, "/dev/rbd0", false, false))
	require.Equal(t, []string{"device", "unmap", "--device-type", "nbd", "/dev/nbd0"}, unmapArgs(DriverNBD, "/dev/nbd0", true, true))
	require.Equal(t, []string{"device", "list", "--device-type", "krbd", "--format", "json"}, listArgs(DriverKRBD))
}

func TestConnectWithoutKeyUsesHostConfig(t *testing.T) {
	c, _, r, root := newTestConnector(t, Options{})
	info := cinderInfo(t, func(d map[string]any) { d["access_mode"] = "ro"; d["name"] = "volumes/ns1/vol1" })
	dev, err := c.Connect(context.Background(), info)
	require.NoError(t, err)
	require.Equal(t, "/dev/rbd0", dev.Path)
	require.Equal(t, "ns1", dev.Extra[ExtraNamespace])
	require.Equal(t, "rbd device map --device-type krbd --read-only --cluster ceph -m 192.0.2.10:6789,192.0.2.11:6789 --id cinder volumes/ns1/vol1", r.Calls()[0])
	require.NoDirExists(t, filepath.Join(root, DefaultTempDir), "no key, no temporary file")
}

func TestConnectReusesMappingOfSamePoolOnly(t *testing.T) {
	c, f, r, root := newTestConnector(t, Options{})
	ctx := context.Background()
	// Another pool holds an image of the same name, already mapped.
	other := cinderInfo(t, func(d map[string]any) { d["name"] = "volumes2/vol1" })
	mine := cinderInfo(t, func(d map[string]any) { d["name"] = "volumes/vol1" })
	dev2, err := c.Connect(ctx, other)
	require.NoError(t, err)
	require.Equal(t, "/dev/rbd0", dev2.Path)

	dev, err := c.Connect(ctx, mine)
	require.NoError(t, err)
	require.Equal(t, "/dev/rbd1", dev.Path, "a mapping of volumes2/vol1 is not volumes/vol1")

	// Connecting again reuses /dev/rbd1 without a second map.
	hosttest.Symlink(t, root, "/dev/rbd/volumes/vol1", "../../rbd1")
	again, err := c.Connect(ctx, mine)
	require.NoError(t, err)
	require.Equal(t, "/dev/rbd1", again.Path)
	require.Equal(t, "true", again.Extra[ExtraReused])
	require.Equal(t, "/dev/rbd/volumes/vol1", again.Extra[ExtraUdevPath])
	maps := 0
	for _, call := range r.Calls() {
		if strings.HasPrefix(call, "rbd device map") {
			maps++
		}
	}
	require.Equal(t, 2, maps)

	// Disconnecting volumes/vol1 leaves volumes2/vol1 mapped.
	require.NoError(t, c.Disconnect(ctx, mine, dev, connector.DisconnectOptions{}))
	require.Len(t, f.mappings, 1)
	require.Equal(t, "volumes2", f.mappings[0].Pool)
	paths, err := c.DevicePaths(ctx, other)
	require.NoError(t, err)
	require.Equal(t, []string{"/dev/rbd0"}, paths)
	paths, err = c.DevicePaths(ctx, mine)
	require.NoError(t, err)
	require.Empty(t, paths)

	// Idempotent: disconnecting again is success, with nothing run.
	n := len(r.Calls())
	require.NoError(t, c.Disconnect(ctx, mine, nil, connector.DisconnectOptions{}))
	require.Empty(t, r.Calls()[n:])
}

func TestConnectRefusesReadOnlyMappingForWriter(t *testing.T) {
	c, _, _, _ := newTestConnector(t, Options{})
	ctx := context.Background()
	_, err := c.Connect(ctx, cinderInfo(t, func(d map[string]any) { d["access_mode"] = "ro" }))
	require.NoError(t, err)
	_, err = c.Connect(ctx, cinderInfo(t, nil))
	require.ErrorContains(t, err, "already mapped read-only at /dev/rbd0")
}

func TestConnectMapFailureRemovesCredentials(t *testing.T) {
	c, f, _, root := newTestConnector(t, Options{})
	f.mapErr = &host.ExitError{Argv: []string{"rbd", "device", "map"}, ExitCode: 1, Stderr: "rbd: sysfs write failed\nrbd: map failed: (13) Permission denied", Err: errors.New("exit status 1")}
	_, err := c.Connect(context.Background(), cinderInfo(t, func(d map[string]any) { d["keyring"] = testKeyring }))
	require.ErrorIs(t, err, ErrMapFailed)
	require.ErrorContains(t, err, "the cluster refused the connection")
	require.NotContains(t, err.Error(), testKey)
	require.NotEmpty(t, f.keyring, "the keyring existed while rbd ran")
	entries, err := os.ReadDir(filepath.Join(root, DefaultTempDir))
	require.NoError(t, err)
	require.Empty(t, entries)
}

func TestConnectDetectsMapThatMappedNothing(t *testing.T) {
	c, f, _, _ := newTestConnector(t, Options{})
	f.lie = true
	_, err := c.Connect(context.Background(), cinderInfo(t, nil))
	require.ErrorIs(t, err, ErrMapFailed)
	require.ErrorContains(t, err, "the kernel shows no such mapping")
}

func TestConnectInvalidInfoRunsNothing(t *testing.T) {
	c, _, r, _ := newTestConnector(t, Options{})
	_, err := c.Connect(context.Background(), cinderInfo(t, func(d map[string]any) { d["name"] = "-o/x" }))
	require.ErrorIs(t, err, connector.ErrInvalid)
	require.Empty(t, r.Calls())
}

func TestUnknownDriver(t *testing.T) {
	c, _, r, _ := newTestConnector(t, Options{Driver: "ggate"})
	_, err := c.Connect(context.Background(), cinderInfo(t, nil))
	require.ErrorContains(t, err, `unknown driver "ggate"`)
	require.Empty(t, r.Calls())
}

func TestDisconnectRefusesMountedUnlessForced(t *testing.T) {
	c, f, r, root := newTestConnector(t, Options{})
	ctx := context.Background()
	info := cinderInfo(t, nil)
	dev, err := c.Connect(ctx, info)
	require.NoError(t, err)
	hosttest.WriteFile(t, root, "/proc/self/mountinfo", "22 1 0:21 / / rw - ext4 /dev/vda1 rw\n40 22 251:0 / /mnt/data rw - ext4 /dev/rbd0 rw\n")

	err = c.Disconnect(ctx, info, dev, connector.DisconnectOptions{})
	require.ErrorIs(t, err, host.ErrDeviceBusy)
	require.ErrorContains(t, err, "mounted at /mnt/data")
	require.Len(t, f.mappings, 1)

	require.NoError(t, c.Disconnect(ctx, info, dev, connector.DisconnectOptions{Force: true}))
	require.Empty(t, f.mappings)
	require.Contains(t, r.Calls(), "rbd device unmap --device-type krbd --options force /dev/rbd0")
}

func TestDisconnectRefusesHeldDevice(t *testing.T) {
	c, _, _, root := newTestConnector(t, Options{})
	ctx := context.Background()
	info := cinderInfo(t, nil)
	_, err := c.Connect(ctx, info)
	require.NoError(t, err)
	hosttest.Mkdir(t, root, "/sys/block/rbd0/holders/dm-3")
	err = c.Disconnect(ctx, info, nil, connector.DisconnectOptions{})
	require.ErrorIs(t, err, host.ErrDeviceBusy)
	require.ErrorContains(t, err, "held by dm-3")
}

func TestDisconnectReportsEBUSY(t *testing.T) {
	c, f, _, _ := newTestConnector(t, Options{})
	ctx := context.Background()
	info := cinderInfo(t, nil)
	_, err := c.Connect(ctx, info)
	require.NoError(t, err)
	f.unmapErr = &host.ExitError{Argv: []string{"rbd", "device", "unmap"}, ExitCode: 16, Stderr: "rbd: sysfs write failed\nrbd: unmap failed: (16) Device or resource busy", Err: errors.New("exit status 16")}
	err = c.Disconnect(ctx, info, nil, connector.DisconnectOptions{})
	require.ErrorIs(t, err, host.ErrDeviceBusy)
	require.ErrorContains(t, err, "the device is open")
}

func TestDisconnectUsesTheDriverThatMapped(t *testing.T) {
	c, f, r, _ := newTestConnector(t, Options{Driver: DriverKRBD})
	ctx := context.Background()
	info := cinderInfo(t, nil)
	nbd := New(c.h, Options{Driver: DriverNBD, DeviceTimeout: time.Second})
	dev, err := nbd.Connect(ctx, info)
	require.NoError(t, err)
	require.Equal(t, "/dev/nbd0", dev.Path)
	require.NoError(t, c.Disconnect(ctx, info, dev, connector.DisconnectOptions{}))
	require.Empty(t, f.mappings)
	require.Contains(t, r.Calls(), "rbd device unmap --device-type nbd /dev/nbd0")
}

func TestCredentialsDirMustBePrivate(t *testing.T) {
	_, root := hosttest.New(t, nil)
	fsys := host.NewFS(root)
	v := Volume{Pool: "p", Image: "i", Cluster: "ceph", User: "u", Key: secret.New(testKey)}

	// An existing directory only root may change but others may read is
	// tightened; one others may write is refused (it may hold their files).
	require.NoError(t, os.MkdirAll(filepath.Join(root, "/run/brick/ceph"), 0o755))
	require.NoError(t, os.Chmod(filepath.Join(root, "/run/brick/ceph"), 0o755))
	cr, err := writeCreds(fsys, DefaultTempDir, v, time.Now())
	require.NoError(t, err)
	fi, err := os.Stat(filepath.Join(root, "/run/brick/ceph"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	require.NoError(t, cr.remove())
	require.NoDirExists(t, cr.Dir)
	require.NoError(t, os.Chmod(filepath.Join(root, "/run/brick/ceph"), 0o777))
	_, err = writeCreds(fsys, DefaultTempDir, v, time.Now())
	require.ErrorContains(t, err, "writable by others")
	require.NoError(t, os.Chmod(filepath.Join(root, "/run/brick/ceph"), 0o700))

	// A symlink where the directory should be is refused.
	require.NoError(t, os.RemoveAll(filepath.Join(root, "/run/brick/ceph")))
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(root, "/run/brick/ceph")))
	_, err = writeCreds(fsys, DefaultTempDir, v, time.Now())
	require.ErrorContains(t, err, "not a directory")
}

func TestStaleCredentialsAreSwept(t *testing.T) {
	_, root := hosttest.New(t, nil)
	fsys := host.NewFS(root)
	v := Volume{Pool: "p", Image: "i", Cluster: "ceph", Key: secret.New(testKey)}
	old, err := writeCreds(fsys, DefaultTempDir, v, time.Now())
	require.NoError(t, err)
	past := time.Now().Add(-2 * time.Hour)
	require.NoError(t, os.Chtimes(old.Dir, past, past))
	fresh, err := writeCreds(fsys, DefaultTempDir, v, time.Now())
	require.NoError(t, err)
	require.NoDirExists(t, old.Dir, "left by a killed brick an hour ago")
	require.DirExists(t, fresh.Dir)
	require.NoError(t, fresh.remove())
}

func TestNoUdevDaemonMeansNoudev(t *testing.T) {
	c, _, r, root := newTestConnector(t, Options{})
	require.NoError(t, os.RemoveAll(filepath.Join(root, "/proc/321")))
	ctx := context.Background()
	info := cinderInfo(t, nil)
	_, err := c.Connect(ctx, info)
	require.NoError(t, err)
	require.NoError(t, c.Disconnect(ctx, info, nil, connector.DisconnectOptions{}))
	calls := strings.Join(r.Calls(), "\n")
	require.Contains(t, calls, "rbd device map --device-type krbd --options noudev --cluster ceph")
	require.Contains(t, calls, "rbd device unmap --device-type krbd --options noudev /dev/rbd0")
}

func TestDisconnectWithoutRecordFindsTheOtherDriversMapping(t *testing.T) {
	c, f, r, _ := newTestConnector(t, Options{Driver: DriverKRBD})
	ctx := context.Background()
	info := cinderInfo(t, nil)
	nbd := New(c.h, Options{Driver: DriverNBD, DeviceTimeout: time.Second})
	_, err := nbd.Connect(ctx, info)
	require.NoError(t, err)
	require.NoError(t, c.Disconnect(ctx, info, nil, connector.DisconnectOptions{}))
	require.Empty(t, f.mappings)
	require.Contains(t, r.Calls(), "rbd device unmap --device-type nbd /dev/nbd0")
}

func TestDisconnectIgnoresAnUninstalledOtherDriver(t *testing.T) {
	f := &fakeCeph{t: t}
	r := hosttest.NewRunner(func(ctx context.Context, cmd host.Command) (host.Result, error) {
		if strings.Contains(strings.Join(cmd.Args, " "), "--device-type nbd") {
			return host.Result{}, hosttest.Fail(cmd, 1, "rbd: rbd-nbd: No such file or directory")
		}
		return f.run(ctx, cmd)
	})
	h, root := hosttest.New(t, r)
	f.root = root
	hosttest.WriteFile(t, root, "/proc/self/mountinfo", "22 1 0:21 / / rw - ext4 /dev/vda1 rw\n")
	c := New(h, Options{})
	require.NoError(t, c.Disconnect(context.Background(), cinderInfo(t, nil), nil, connector.DisconnectOptions{}))
}

func TestExplainMapError(t *testing.T) {
	for _, tt := range []struct {
		code   int
		stderr string
		want   string
	}{
		{13, "rbd: couldn't connect to the cluster!", "refused the connection"},
		{22, "failed to fetch mon config (--no-mon-config to skip)", "refused the connection"},
		{2, "rbd: error opening image vol1: (2) No such file or directory", "no such image"},
		{5, "something else", ""},
	} {
		err := explainMapError(&host.ExitError{Argv: []string{"rbd"}, ExitCode: tt.code, Stderr: tt.stderr, Err: errors.New("exit")})
		if tt.want == "" {
			require.NotContains(t, err.Error(), "(")
			continue
		}
		require.ErrorContains(t, err, tt.want)
	}
}
