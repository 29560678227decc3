package nvmeof

import (
	"context"
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
)

const (
	legNQN1 = "nqn.2014-08.com.kioxia:kumoscale.target-1"
	legNQN2 = "nqn.2014-08.com.kioxia:kumoscale.target-2"
	legU1   = "9b30ec12-75b9-4a53-be32-111111111111"
	legU2   = "9b30ec12-75b9-4a53-be32-222222222222"
)

// fakeMD plays mdadm on the fixture tree: superblocks per device, one
// array (md127) with /dev/md/<name>, its slaves and member states.
type fakeMD struct {
	t     *testing.T
	root  string
	mu    sync.Mutex
	super map[string]string // device -> array name
	calls []string
}

func (f *fakeMD) run(_ context.Context, cmd host.Command) (host.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cmd.Name != "mdadm" {
		return host.Result{}, fmt.Errorf("unexpected %v", cmd.Argv())
	}
	f.calls = append(f.calls, strings.Join(cmd.Args, " "))
	a := cmd.Args
	var devs []string
	for _, x := range a {
		if strings.HasPrefix(x, "/dev/nvme") {
			devs = append(devs, x)
		}
	}
	switch a[0] {
	case "--examine":
		if name, ok := f.super[a[2]]; ok {
			return host.Result{Stdout: []byte("MD_LEVEL=raid1\nMD_UUID=1:2:3:4\nMD_NAME=any:" + name + "\n")}, nil
		}
		return host.Result{}, hosttest.Fail(cmd, 1, "mdadm: No md superblock detected on "+a[2]+".")
	case "--create", "--assemble":
		name := filepath.Base(a[1])
		for _, d := range devs {
			if a[0] == "--create" {
				f.super[d] = name
			}
		}
		f.start(name, devs)
	case "--manage":
		f.addSlave(a[3])
	case "--stop":
		require.NoError(f.t, os.RemoveAll(filepath.Join(f.root, "sys/block/md127")))
		require.NoError(f.t, os.RemoveAll(filepath.Join(f.root, "dev/md")))
		require.NoError(f.t, os.RemoveAll(filepath.Join(f.root, "dev/md127")))
	}
	return host.Result{}, nil
}

func (f *fakeMD) start(name string, devs []string) {
	hosttest.WriteFile(f.t, f.root, "/sys/block/md127/md/array_state", "clean\n")
	hosttest.WriteFile(f.t, f.root, "/sys/block/md127/md/degraded", "0\n")
	hosttest.WriteFile(f.t, f.root, "/sys/block/md127/size", "2048\n")
	hosttest.WriteFile(f.t, f.root, "/dev/md127", "")
	hosttest.Symlink(f.t, f.root, "/dev/md/"+name, "../md127")
	for _, d := range devs {
		f.addSlave(d)
	}
}

func (f *fakeMD) addSlave(dev string) {
	n := filepath.Base(dev)
	hosttest.Mkdir(f.t, f.root, "/sys/block/md127/slaves/"+n)
	hosttest.WriteFile(f.t, f.root, "/sys/block/md127/md/dev-"+n+"/state", "in_sync\n")
}

func (f *fakeMD) log() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.calls, "\n")
}

func newMDRig(t *testing.T) (rig, *fakeMD) {
	f := &fakeMD{t: t, super: map[string]string{}}
	h, root := hosttest.New(t, hosttest.NewRunner(f.run))
	f.root = root
	hosttest.WriteFile(t, root, hostNQNFile, "nqn.2014-08.org.nvmexpress:uuid:12345678-1234-4234-8234-123456789abc\n")
	hosttest.WriteFile(t, root, hostIDFile, "12345678-1234-4234-8234-123456789abc\n")
	k := newFakeKernel(t, root)
	k.nss[legNQN1] = []fakeNS{{1, legU1, zeroNGUID}}
	k.nss[legNQN2] = []fakeNS{{1, legU2, zeroNGUID}}
	c := New(h, Options{PortalTimeout: 2 * time.Second, DeviceTimeout: time.Second, DeleteTimeout: time.Second, SettleTimeout: 300 * time.Millisecond})
	c.fab = k
	return rig{c: c, k: k, root: root}, f
}

// kumoScaleInfo is connection info as KIOXIA KumoScale's driver builds it
// (cinder/volume/drivers/kioxia/kumoscale.py initialize_connection): the
// Cinder volume's vol_uuid, the alias, writable, one target per replica
// with the port as a string, and replica_count.
func kumoScaleInfo(t *testing.T, count int, legs ...[2]any) connector.ConnectionInfo {
	var replicas []any
	for _, l := range legs {
		replicas = append(replicas, map[string]any{"vol_uuid": l[1], "target_nqn": l[0],
			"portals": []any{[]any{"127.0.0.1", fmt.Sprint(legPort(t)), "TCP"}}})
	}
	return build(t, map[string]any{"driver_volume_type": "nvmeof", "vol_uuid": testVol, "alias": "volume-e2e-mirror",
		"writable": true, "volume_replicas": replicas, "replica_count": count}, nil)
}

var legPorts sync.Map // *testing.T -> port, while the test runs

// legPort is one listening port per test, forgotten when the test ends
// (with -count=2 the same test name runs again, its old listener closed).
func legPort(t *testing.T) int {
	if p, ok := legPorts.Load(t); ok {
		return p.(int)
	}
	_, p := listener(t)
	legPorts.Store(t, p)
	t.Cleanup(func() { legPorts.Delete(t) })
	return p
}

func TestReplicatedMirror(t *testing.T) {
	r, f := newMDRig(t)
	ctx := context.Background()
	info := kumoScaleInfo(t, 2, [2]any{legNQN1, legU1}, [2]any{legNQN2, legU2})
	dev, err := r.c.Connect(ctx, info)
	require.NoError(t, err)
	require.Equal(t, "/dev/md/volume-e2e-mirror", dev.Path)
	require.Equal(t, "md127", dev.Extra[ExtraMD])
	require.ElementsMatch(t, []string{"nvme0n1", "nvme1n1"}, strings.Split(dev.Extra[ExtraLegs], ","))
	require.Contains(t, f.log(), "--create /dev/md/volume-e2e-mirror --run --level=1")
	require.Contains(t, f.log(), "--failfast --assume-clean /dev/nvme")
	for _, c := range r.k.calls {
		require.Contains(t, c, ",fast_io_fail_tmo=5", "legs fail fast so md goes on with the other")
	}

	paths, err := r.c.DevicePaths(ctx, info)
	require.NoError(t, err)
	require.Equal(t, []string{"/dev/md/volume-e2e-mirror"}, paths)

	require.NoError(t, r.c.Disconnect(ctx, info, dev, connector.DisconnectOptions{}))
	require.Contains(t, f.log(), "--stop /dev/md127")
	require.NoDirExists(t, filepath.Join(r.root, "sys/block/md127"))
	entries, _ := os.ReadDir(filepath.Join(r.root, "sys/class/nvme"))
	require.Empty(t, entries, "every leg's controllers are gone")

	// Re-attach: the legs carry the superblock, so the array is assembled.
	dev, err = r.c.Connect(ctx, info)
	require.NoError(t, err)
	require.Equal(t, "/dev/md/volume-e2e-mirror", dev.Path)
	require.Contains(t, f.log(), "--assemble /dev/md/volume-e2e-mirror --run /dev/nvme")
}

func TestReplicatedOneLegMissing(t *testing.T) {
	r, f := newMDRig(t)
	ctx := context.Background()
	info := kumoScaleInfo(t, 2, [2]any{legNQN1, legU1}, [2]any{legNQN2, legU2})
	// A new mirror needs every leg: with one missing nothing is created
	// and the leg that came up is detached again.
	delete(r.k.nss, legNQN2)
	_, err := r.c.Connect(ctx, info)
	require.ErrorContains(t, err, "1 of 2 legs attached")
	require.NotContains(t, f.log(), "--create")
	entries, _ := os.ReadDir(filepath.Join(r.root, "sys/class/nvme"))
	require.Empty(t, entries)

	// A mirror whose legs carry its superblock runs degraded on one leg.
	f.super["/dev/nvme0n1"] = "volume-e2e-mirror"
	dev, err := r.c.Connect(ctx, info)
	require.NoError(t, err)
	require.Equal(t, "/dev/md/volume-e2e-mirror", dev.Path)
	require.Contains(t, f.log(), "--assemble /dev/md/volume-e2e-mirror --run /dev/nvme0n1")

	// Nothing attached at all is an error naming the legs.
	r, _ = newMDRig(t)
	r.k.nss = map[string][]fakeNS{}
	_, err = r.c.Connect(ctx, info)
	require.ErrorIs(t, err, ErrNoLeg)
}

func TestReplicatedSingleLegIsPlain(t *testing.T) {
	r, f := newMDRig(t)
	ctx := context.Background()
	info := kumoScaleInfo(t, 1, [2]any{legNQN1, legU1})
	dev, err := r.c.Connect(ctx, info)
	require.NoError(t, err)
	require.Equal(t, "/dev/nvme0n1", dev.Path, "one replica: the leg's namespace, as os-brick hands it out")
	require.NotContains(t, f.log(), "--create")
	require.NotContains(t, r.k.calls[0], "fast_io_fail_tmo")
	require.NoError(t, r.c.Disconnect(ctx, info, dev, connector.DisconnectOptions{}))
	require.NotContains(t, f.log(), "--stop")
	entries, _ := os.ReadDir(filepath.Join(r.root, "sys/class/nvme"))
	require.Empty(t, entries)
}

func TestParseRequestReplicas(t *testing.T) {
	good := map[string]any{"driver_volume_type": "nvmeof", "vol_uuid": testVol, "alias": "vol-1", "replica_count": 2,
		"volume_replicas": []any{
			map[string]any{"target_nqn": legNQN1, "vol_uuid": legU1, "portals": []any{[]any{"10.0.0.1", "4420", "RoCEv2"}}},
			map[string]any{"target_nqn": legNQN2, "vol_uuid": strings.ReplaceAll(legU2, "-", ""), "portals": []any{[]any{"10.0.0.2", 4420, "tcp"}}},
		}}
	req, err := ParseRequest(build(t, good, nil))
	require.NoError(t, err)
	require.True(t, req.Mirrored())
	require.Equal(t, "vol-1", req.Alias)
	require.Len(t, req.Legs, 2)
	require.Equal(t, TransportRDMA, req.Legs[0].Portals[0].Transport)
	require.Equal(t, legU2, req.Legs[1].UUID)

	for _, tc := range []struct {
		name string
		set  map[string]any
		key  string
	}{
		{"no alias", map[string]any{"alias": nil}, "alias"},
		{"alias path", map[string]any{"alias": "../../etc/passwd"}, "alias"},
		{"alias option", map[string]any{"alias": "-rf"}, "alias"},
		{"alias long", map[string]any{"alias": strings.Repeat("a", 33)}, "alias"},
		{"replicas empty", map[string]any{"volume_replicas": []any{}}, "volume_replicas"},
		{"replica not an object", map[string]any{"volume_replicas": []any{"x"}}, "volume_replicas[0]"},
		{"replica without nqn", map[string]any{"volume_replicas": []any{map[string]any{"vol_uuid": legU1, "portals": []any{}}}}, "volume_replicas[0].target_nqn"},
		{"replica bad portal", map[string]any{"volume_replicas": []any{map[string]any{"target_nqn": legNQN1, "vol_uuid": legU1, "portals": []any{[]any{"x;y", 1, "tcp"}}}}}, "volume_replicas[0].portals[0][0]"},
		{"replica without id", map[string]any{"volume_replicas": []any{map[string]any{"target_nqn": legNQN1, "portals": []any{[]any{"10.0.0.1", 1, "tcp"}}}}}, "volume_replicas[0].vol_uuid"},
		{"count zero legs huge", map[string]any{"replica_count": 99}, "replica_count"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRequest(build(t, good, tc.set))
			require.ErrorIs(t, err, connector.ErrInvalid)
			require.Contains(t, err.Error(), `"`+tc.key+`"`)
		})
	}
}
