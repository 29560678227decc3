package nvmeof

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host/hosttest"
)

func splitOptions(s string) []string { return strings.Split(s, ",") }

// refuseFabrics fails a test that reaches the kernel.
type refuseFabrics struct{ t *testing.T }

func (r refuseFabrics) Connect(context.Context, string) (string, error) {
	r.t.Error("fabrics connect reached")
	return "", errors.New("refused")
}

func (r refuseFabrics) Delete(string) error {
	r.t.Error("fabrics delete reached")
	return errors.New("refused")
}

// fakeNS is one namespace of a fake subsystem.
type fakeNS struct {
	nsid        int
	uuid, nguid string
}

// fakeKernel builds the sysfs and /dev entries the kernel would for
// fabrics connects, with native multipath on: one subsystem per NQN, one
// head per namespace, per-path nodes under each controller.
type fakeKernel struct {
	t     *testing.T
	root  string
	mu    sync.Mutex
	next  int
	subs  map[string]int // nqn -> subsystem instance
	nss   map[string][]fakeNS
	calls []string
	// noMultipath: nvme_core multipath=N, a namespace device per controller.
	noMultipath bool
}

func newFakeKernel(t *testing.T, root string) *fakeKernel {
	return &fakeKernel{t: t, root: root, subs: map[string]int{}, nss: map[string][]fakeNS{}}
}

func (k *fakeKernel) Connect(_ context.Context, options string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls = append(k.calls, options)
	opt := map[string]string{}
	for _, kv := range splitOptions(options) {
		key, val, _ := strings.Cut(kv, "=")
		opt[key] = val
	}
	nqn := opt["nqn"]
	nss, ok := k.nss[nqn]
	if !ok {
		return "", errors.New("write /dev/nvme-fabrics: input/output error")
	}
	ctrl := k.next
	k.next++
	sub, ok := k.subs[nqn]
	if !ok {
		sub = len(k.subs)
		k.subs[nqn] = sub
	}
	name := fmt.Sprintf("nvme%d", ctrl)
	dir := "/sys/class/nvme/" + name
	w := func(p, s string) { hosttest.WriteFile(k.t, k.root, p, s+"\n") }
	w(dir+"/subsysnqn", nqn)
	w(dir+"/transport", opt["transport"])
	w(dir+"/state", "live")
	w(dir+"/address", fmt.Sprintf("traddr=%s,trsvcid=%s,src_addr=127.0.0.1", opt["traddr"], opt["trsvcid"]))
	sdir := fmt.Sprintf("/sys/class/nvme-subsystem/nvme-subsys%d", sub)
	w(sdir+"/subsysnqn", nqn)
	for i, ns := range nss {
		head := fmt.Sprintf("nvme%dn%d", sub, i+1)
		if k.noMultipath {
			head = fmt.Sprintf("nvme%dn%d", ctrl, i+1)
			w(dir+"/"+head+"/dev", "259:1")
			w("/sys/block/"+head+"/uuid", ns.uuid)
			w("/sys/block/"+head+"/nsid", strconv.Itoa(ns.nsid))
			w("/dev/"+head, "")
			continue
		}
		w(fmt.Sprintf("%s/nvme%dc%dn%d/dev", dir, sub, ctrl, i+1), "259:1")
		w(sdir+"/"+head+"/dev", "259:0")
		w("/sys/block/"+head+"/uuid", ns.uuid)
		w("/sys/block/"+head+"/nguid", ns.nguid)
		w("/sys/block/"+head+"/nsid", strconv.Itoa(ns.nsid))
		w("/sys/block/"+head+"/wwid", "uuid."+ns.uuid)
		w("/dev/"+head, "")
	}
	return name, nil
}

func (k *fakeKernel) Delete(name string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls = append(k.calls, "delete "+name)
	nqn, err := os.ReadFile(filepath.Join(k.root, "/sys/class/nvme", name, "subsysnqn"))
	if err != nil {
		return nil
	}
	require.NoError(k.t, os.RemoveAll(filepath.Join(k.root, "/sys/class/nvme", name)))
	left, _ := filepath.Glob(filepath.Join(k.root, "/sys/class/nvme/*/subsysnqn"))
	for _, f := range left {
		if b, _ := os.ReadFile(f); string(b) == string(nqn) {
			return nil
		}
	}
	sub := k.subs[strings.TrimSpace(string(nqn))]
	heads, _ := filepath.Glob(filepath.Join(k.root, fmt.Sprintf("/sys/class/nvme-subsystem/nvme-subsys%d/nvme*n*", sub)))
	for _, h := range heads {
		base := filepath.Base(h)
		require.NoError(k.t, os.RemoveAll(filepath.Join(k.root, "/sys/block", base)))
		require.NoError(k.t, os.Remove(filepath.Join(k.root, "/dev", base)))
	}
	return os.RemoveAll(filepath.Join(k.root, fmt.Sprintf("/sys/class/nvme-subsystem/nvme-subsys%d", sub)))
}

func (k *fakeKernel) connects() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for _, c := range k.calls {
		if strings.HasPrefix(c, "nqn=") {
			n++
		}
	}
	return n
}

// listener returns a local portal that accepts TCP connections, as a
// live target does for the connector's probe.
func listener(t *testing.T) (string, int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return "127.0.0.1", l.Addr().(*net.TCPAddr).Port
}

// deadPort is a local port nothing listens on.
func deadPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

const (
	uuidA = "aaaaaaaa-0000-4000-8000-000000000001"
	uuidB = "bbbbbbbb-0000-4000-8000-000000000002"
)

type rig struct {
	c    *Connector
	k    *fakeKernel
	root string
}

func newRig(t *testing.T) rig {
	return newRigWith(t, Options{PortalTimeout: 2 * time.Second, DeviceTimeout: time.Second, DeleteTimeout: time.Second, SettleTimeout: 300 * time.Millisecond})
}

// newRigWith is newRig with opts' waits.
func newRigWith(t *testing.T, opts Options) rig {
	h, root := hosttest.New(t, hosttest.NewRunner(nil))
	hosttest.WriteFile(t, root, hostNQNFile, "nqn.2014-08.org.nvmexpress:uuid:12345678-1234-4234-8234-123456789abc\n")
	hosttest.WriteFile(t, root, hostIDFile, "12345678-1234-4234-8234-123456789abc\n")
	k := newFakeKernel(t, root)
	k.nss[testNQN] = []fakeNS{{1, uuidA, testNGID}, {2, uuidB, "00000000000000000000000000000000"}}
	c := New(h, opts)
	c.fab = k
	return rig{c: c, k: k, root: root}
}

func infoFor(t *testing.T, uuid string, ports ...int) connector.ConnectionInfo {
	var portals []any
	for _, p := range ports {
		portals = append(portals, []any{"127.0.0.1", p, "tcp"})
	}
	return build(t, newInfo(), map[string]any{"vol_uuid": uuid, "ns_id": nil, "volume_nguid": nil, "portals": portals})
}

func TestConnectTwoPortalsOneHead(t *testing.T) {
	r := newRig(t)
	_, p1 := listener(t)
	_, p2 := listener(t)
	dev, err := r.c.Connect(context.Background(), infoFor(t, uuidB, p1, p2))
	require.NoError(t, err)
	require.Equal(t, "/dev/nvme0n2", dev.Path, "the head of the second namespace, not a per-path node")
	require.Equal(t, "nvme0,nvme1", dev.Extra[ExtraControllers])
	require.Equal(t, "2", dev.Extra[ExtraNSID])
	require.Equal(t, 2, r.k.connects())
	require.Contains(t, r.k.calls[0], ",hostnqn=nqn.2014-08.org.nvmexpress:uuid:12345678-1234-4234-8234-123456789abc,hostid=12345678-1234-4234-8234-123456789abc")

	// A second volume of the same subsystem reuses both controllers.
	dev, err = r.c.Connect(context.Background(), infoFor(t, uuidA, p1, p2))
	require.NoError(t, err)
	require.Equal(t, "/dev/nvme0n1", dev.Path)
	require.Equal(t, 2, r.k.connects(), "no new controller")

	ro := infoFor(t, uuidA, p1, p2)
	ro.Data["access_mode"] = "ro"
	dev, err = r.c.Connect(context.Background(), ro)
	require.NoError(t, err)
	require.Equal(t, "true", dev.Extra[ExtraReadOnly])

	paths, err := r.c.DevicePaths(context.Background(), infoFor(t, uuidA, p1))
	require.NoError(t, err)
	require.Equal(t, []string{"/dev/nvme0n1"}, paths)
}

func TestConnectNamespaceLookupOrder(t *testing.T) {
	_, p := listener(t)
	for _, tc := range []struct {
		name string
		set  map[string]any
		want string
	}{
		{"uuid wins over nsid", map[string]any{"vol_uuid": uuidB, "ns_id": 1, "volume_nguid": testNGID}, "/dev/nvme0n2"},
		{"nguid when no uuid", map[string]any{"vol_uuid": nil, "ns_id": 2, "volume_nguid": testNGID}, "/dev/nvme0n1"},
		{"nsid last", map[string]any{"vol_uuid": nil, "volume_nguid": nil, "ns_id": 2}, "/dev/nvme0n2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			tc.set["portals"] = []any{[]any{"127.0.0.1", p, "tcp"}}
			dev, err := r.c.Connect(context.Background(), build(t, newInfo(), tc.set))
			require.NoError(t, err)
			require.Equal(t, tc.want, dev.Path)
		})
	}
	r := newRig(t)
	_, err := r.c.Connect(context.Background(), build(t, newInfo(), map[string]any{
		"vol_uuid": "cccccccc-0000-4000-8000-000000000003", "portals": []any{[]any{"127.0.0.1", p, "tcp"}}}))
	require.ErrorContains(t, err, "uuid cccccccc")
}

func TestConnectDeadPortal(t *testing.T) {
	r := newRig(t)
	_, live := listener(t)
	dead := deadPort(t)
	dev, err := r.c.Connect(context.Background(), infoFor(t, uuidA, dead, live))
	require.NoError(t, err, "one of two portals is enough")
	require.Equal(t, "nvme0", dev.Extra[ExtraControllers])
	require.Equal(t, 1, r.k.connects(), "the dead portal never reached the kernel")

	r = newRig(t)
	_, err = r.c.Connect(context.Background(), infoFor(t, uuidA, dead))
	require.ErrorIs(t, err, ErrNoPortal)
	require.Zero(t, r.k.connects())
}

// TestSharedSubsystemLastDetach: two volumes as two namespaces of one
// subsystem (Cinder's nvmet with shared targets). The first detach keeps
// the controllers (the other volume is attached through brick); the
// second disconnects them although the first namespace is still exported
// (nothing records, holds or opens it any more); a namespace still in use
// by something else keeps them.
func TestSharedSubsystemLastDetach(t *testing.T) {
	r := newRig(t)
	_, p1 := listener(t)
	_, p2 := listener(t)
	ctx := context.Background()
	_, err := r.c.Connect(ctx, infoFor(t, uuidA, p1, p2))
	require.NoError(t, err)
	_, err = r.c.Connect(ctx, infoFor(t, uuidB, p1, p2))
	require.NoError(t, err)

	require.NoError(t, r.c.Disconnect(ctx, infoFor(t, uuidA, p1, p2), nil, connector.DisconnectOptions{}))
	require.NotContains(t, strings.Join(r.k.calls, "\n"), "delete", "B is attached: the controllers stay")
	require.DirExists(t, filepath.Join(r.root, "/sys/class/nvme/nvme1"))

	// Namespace A is still exported, but nothing uses it: the last detach
	// deletes both controllers.
	require.DirExists(t, filepath.Join(r.root, "/sys/class/nvme-subsystem/nvme-subsys0/nvme0n1"))
	require.NoError(t, r.c.Disconnect(ctx, infoFor(t, uuidB, p1, p2), nil, connector.DisconnectOptions{}))
	entries, err := os.ReadDir(filepath.Join(r.root, "/sys/class/nvme"))
	require.NoError(t, err)
	require.Empty(t, entries, "nothing left in /sys/class/nvme")
	require.NoFileExists(t, filepath.Join(r.root, r.c.state.path(testNQN)), "no record left")

	// Already gone is success.
	require.NoError(t, r.c.Disconnect(ctx, infoFor(t, uuidB, p1, p2), nil, connector.DisconnectOptions{}))

	// A namespace held by something else (a dm or md device over it)
	// keeps the controllers, recorded or not.
	_, err = r.c.Connect(ctx, infoFor(t, uuidB, p1, p2))
	require.NoError(t, err)
	hosttest.Mkdir(t, r.root, "/sys/block/nvme0n1/holders/dm-3")
	require.NoError(t, r.c.Disconnect(ctx, infoFor(t, uuidB, p1, p2), nil, connector.DisconnectOptions{}))
	entries, err = os.ReadDir(filepath.Join(r.root, "/sys/class/nvme"))
	require.NoError(t, err)
	require.Len(t, entries, 2, "nvme0n1 is held by dm-3: the controllers stay")
}

func TestHostIdentityCreated(t *testing.T) {
	r := newRig(t)
	require.NoError(t, os.Remove(filepath.Join(r.root, hostNQNFile)))
	require.NoError(t, os.Remove(filepath.Join(r.root, hostIDFile)))
	hosttest.WriteFile(t, r.root, productUUIDFile, "4C4C4544-0000-1000-8000-000000000000\n")
	nqn, id, err := r.c.hostIdentity(Volume{})
	require.NoError(t, err)
	require.Equal(t, "nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0000-1000-8000-000000000000", nqn)
	require.Equal(t, "4c4c4544-0000-1000-8000-000000000000", id)
	b, err := os.ReadFile(filepath.Join(r.root, hostNQNFile))
	require.NoError(t, err)
	require.Equal(t, nqn+"\n", string(b))

	nqn, _, err = r.c.hostIdentity(Volume{HostNQN: "nqn.2014-08.org.example:host"})
	require.NoError(t, err)
	require.Equal(t, "nqn.2014-08.org.example:host", nqn, "the driver's host_nqn wins")

	hosttest.WriteFile(t, r.root, hostNQNFile, "nqn.x,hostid=1\n")
	_, _, err = r.c.hostIdentity(Volume{})
	require.ErrorContains(t, err, "not an NVMe qualified name")
}

func TestParseReply(t *testing.T) {
	for in, want := range map[string]string{"instance=3,cntlid=1\n": "nvme3", "cntlid=1,instance=12": "nvme12"} {
		got, err := parseReply([]byte(in))
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	for _, in := range []string{"", "instance=../x", "instance=", "garbage"} {
		_, err := parseReply([]byte(in))
		require.Error(t, err, in)
	}
}

func TestWithoutNativeMultipath(t *testing.T) {
	r := newRig(t)
	r.k.noMultipath = true
	r.k.nss[testNQN] = []fakeNS{{2, uuidB, testNGID}}
	_, p1 := listener(t)
	_, p2 := listener(t)
	ctx := context.Background()
	dev, err := r.c.Connect(ctx, infoFor(t, uuidB, p1, p2))
	require.NoError(t, err)
	require.Equal(t, "/dev/nvme0n1", dev.Path, "the first controller's device of the volume")
	// The same volume through the other controller is not "another namespace".
	require.NoError(t, r.c.Disconnect(ctx, infoFor(t, uuidB, p1, p2), nil, connector.DisconnectOptions{}))
	entries, err := os.ReadDir(filepath.Join(r.root, "/sys/class/nvme"))
	require.NoError(t, err)
	require.Len(t, entries, 0)
}
