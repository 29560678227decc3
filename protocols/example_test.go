package protocols_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/cinderapi/cindertest"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/osauth"
	"github.com/brick-storage/brick/protocols"
)

// The examples run on a fixture tree with a scripted mount/umount (no root,
// no NFS server). On a real host the same code starts with
//
//	h := host.New("/", logger, host.NewRedactor())

// Example_getConnector prints what Cinder needs to know about this host,
// as `brick get-connector` does.
func Example_getConnector() {
	h, done := exampleHost()
	defer done()

	props, warnings, err := protocols.New(h, protocols.Options{}).Gather(h.FS, connector.GatherOptions{IP: "192.0.2.10", Hostname: "node1"})
	if err != nil {
		fmt.Println("get-connector:", err)
		return
	}
	for _, w := range warnings {
		fmt.Println("warning:", w)
	}
	fmt.Println("host:", props.Host)
	fmt.Println("ip:", props.IP)
	fmt.Println("initiator:", props.Initiator)
	fmt.Println("do_local_attach:", props.DoLocalAttach)
	// Output:
	// host: node1
	// ip: 192.0.2.10
	// initiator: iqn.1993-08.org.debian:01:node1
	// do_local_attach: true
}

// Example_connectDisconnect attaches a volume from Cinder-style connection
// info and detaches it again, as `brick connect` / `brick disconnect` do:
// no Cinder call, the caller brings the connection info.
func Example_connectDisconnect() {
	h, done := exampleHost()
	defer done()
	ctx := context.Background()

	info, err := connector.ParseConnectionInfo([]byte(`{
		"driver_volume_type": "nfs",
		"data": {"export": "192.0.2.5:/srv/cinder", "name": "volume-1"}
	}`))
	if err != nil {
		fmt.Println("connection info:", err)
		return
	}
	reg := protocols.New(h, protocols.Options{})
	conn, err := reg.For(info.DriverVolumeType)
	if err != nil {
		fmt.Println(err)
		return
	}
	dev, err := conn.Connect(ctx, info)
	if err != nil {
		fmt.Println("connect:", err)
		return
	}
	fmt.Println(dev.Protocol, dev.Type, filepath.Base(dev.Path))

	// Keep dev (brick connect prints it as JSON): disconnect uses it to
	// find exactly what connect made.
	if err := conn.Disconnect(ctx, info, dev, connector.DisconnectOptions{}); err != nil {
		fmt.Println("disconnect:", err)
		return
	}
	fmt.Println("disconnected")
	// Output:
	// nfs file volume-1
	// disconnected
}

// Example_localAttach runs the whole local-attach / local-detach use case
// with attach.Manager against a Cinder (here a fake one, reached as a
// standalone Cinder without Keystone is: noauth and an endpoint).
func Example_localAttach() {
	h, done := exampleHost()
	defer done()
	ctx := context.Background()
	endpoint, stop := exampleCinder("7c0c4d6e-0000-4000-8000-000000000001", "data")
	defer stop()

	sc, err := osauth.BlockStorageClient(ctx, osauth.Options{AuthType: "noauth", CinderEndpoint: endpoint})
	if err != nil {
		fmt.Println("auth:", err)
		return
	}
	cinder, err := cinderapi.NewClient(ctx, sc, "") // "": the newest flow both sides speak
	if err != nil {
		fmt.Println("cinder:", err)
		return
	}
	m := &attach.Manager{Host: h, Cinder: cinder, Connectors: protocols.New(h, protocols.Options{})}

	rec, err := m.Attach(ctx, attach.AttachOptions{Volume: "data"})
	if err != nil {
		fmt.Println("local-attach:", err)
		return
	}
	fmt.Println("attached:", rec.VolumeID, rec.Device.Protocol, filepath.Base(rec.Device.Path))

	list, _ := m.List(ctx)
	for _, e := range list {
		fmt.Println("list:", e.Record.VolumeID, e.Record.Phase, e.CinderStatus)
	}
	if err := m.Detach(ctx, attach.DetachOptions{Volume: "data"}); err != nil {
		fmt.Println("local-detach:", err)
		return
	}
	vol, err := cinder.Volume(ctx, rec.VolumeID)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("detached:", vol.Status)
	// Output:
	// attached: 7c0c4d6e-0000-4000-8000-000000000001 nfs volume-7c0c4d6e-0000-4000-8000-000000000001
	// list: 7c0c4d6e-0000-4000-8000-000000000001 attached in-use
	// detached: available
}

// exampleHost returns a host over a fresh fixture tree whose runner plays
// mount.nfs and umount: a mount shows the share's volume files.
func exampleHost() (*host.Host, func()) {
	root, err := os.MkdirTemp("", "brick-example-")
	if err != nil {
		panic(err)
	}
	for p, content := range map[string]string{
		"etc/iscsi/initiatorname.iscsi": "InitiatorName=iqn.1993-08.org.debian:01:node1\n",
		"proc/sys/kernel/hostname":      "node1\n",
		"proc/self/mountinfo":           "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n",
	} {
		must(os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755))
		must(os.WriteFile(filepath.Join(root, p), []byte(content), 0o644))
	}
	must(os.MkdirAll(filepath.Join(root, "sys/block"), 0o755))
	h := host.New(root, nil, nil)
	h.Runner = &nfsKernel{root: root}
	return h, func() { _ = os.RemoveAll(root) }
}

// nfsKernel answers mount -t nfs and umount on a fixture tree.
type nfsKernel struct {
	mu     sync.Mutex
	root   string
	mounts []string
}

func (k *nfsKernel) Run(_ context.Context, cmd host.Command) (host.Result, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	// An example has no *testing.T: a command line this kernel cannot read
	// is an error the example prints, so its output no longer matches.
	if n := len(cmd.Args); n == 0 || cmd.Name == "mount" && n < 2 {
		return host.Result{}, fmt.Errorf("fake kernel: unexpected command %q", cmd.Argv())
	}
	switch cmd.Name {
	case "mount":
		n := len(cmd.Args)
		src, mp := cmd.Args[n-2], cmd.Args[n-1]
		k.mounts = append(k.mounts, fmt.Sprintf("40 22 0:37 / %s rw - nfs4 %s rw,vers=4.2\n", mp, src))
		for _, v := range []string{"volume-1", "volume-7c0c4d6e-0000-4000-8000-000000000001"} {
			must(os.WriteFile(filepath.Join(mp, v), nil, 0o644))
		}
	case "umount":
		mp := cmd.Args[len(cmd.Args)-1]
		kept := k.mounts[:0]
		for _, m := range k.mounts {
			if !strings.Contains(m, " "+mp+" ") {
				kept = append(kept, m)
			}
		}
		k.mounts = kept
		entries, _ := os.ReadDir(mp)
		for _, e := range entries {
			must(os.RemoveAll(filepath.Join(mp, e.Name())))
		}
	default:
		return host.Result{}, fmt.Errorf("example: unexpected command %v", cmd.Argv())
	}
	info := "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n" + strings.Join(k.mounts, "")
	must(os.WriteFile(filepath.Join(k.root, "proc/self/mountinfo"), []byte(info), 0o644))
	return host.Result{}, nil
}

// exampleCinder starts the fake Cinder of brick's tests with one volume
// exported over NFS and returns its noauth endpoint.
func exampleCinder(id, name string) (string, func()) {
	var t cleanupTB
	s := cindertest.New(&t)
	s.ConnectionInfo = func(volumeID string, _ map[string]any) map[string]any {
		return map[string]any{"driver_volume_type": "nfs", "export": "192.0.2.5:/srv/cinder", "name": "volume-" + volumeID}
	}
	s.AddVolume(id, name)
	return s.Endpoint(), t.cleanup
}

// cleanupTB is the one part of testing.TB cindertest.New uses outside a
// test: Cleanup.
type cleanupTB struct {
	testing.TB
	funcs []func()
}

func (c *cleanupTB) Cleanup(f func()) { c.funcs = append(c.funcs, f) }

func (c *cleanupTB) cleanup() {
	for i := len(c.funcs) - 1; i >= 0; i-- {
		c.funcs[i]()
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
