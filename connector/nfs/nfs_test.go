package nfs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
)

// fakeKernel plays mount, umount and losetup on a fixture tree: mounts go
// to /proc/self/mountinfo, a mounted share shows the server's files in the
// mount point, loop devices appear under /sys/block.
type fakeKernel struct {
	t    *testing.T
	root string

	mu          sync.Mutex
	refuse      map[string]string // version -> mount.nfs stderr
	serverFiles []string          // files the share holds
	mounts      []string          // mountinfo lines
	busy        bool              // umount answers "device is busy"
	symlink     string            // a symlink the share holds, to /etc/passwd
	dir         string            // a directory the share holds
	loops       int
}

func newFake(t *testing.T) (*Connector, *fakeKernel, *hosttest.Runner) {
	k := &fakeKernel{t: t, refuse: map[string]string{}, serverFiles: []string{"volume-a", "volume-b"}}
	r := hosttest.NewRunner(k.run)
	h, root := hosttest.New(t, r)
	k.root = root
	hosttest.WriteFile(t, root, "/proc/self/mountinfo", "")
	hosttest.Mkdir(t, root, "/sys/block")
	return New(h, Options{}), k, r
}

func (k *fakeKernel) writeMounts() {
	hosttest.WriteFile(k.t, k.root, "/proc/self/mountinfo", strings.Join(k.mounts, ""))
}

func (k *fakeKernel) run(_ context.Context, cmd host.Command) (host.Result, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch cmd.Name {
	case "mount":
		opts, src, mp := hosttest.Arg(k.t, cmd, 3), hosttest.Arg(k.t, cmd, 4), hosttest.Arg(k.t, cmd, 5)
		vers := "4.2"
		for _, o := range strings.Split(opts, ",") {
			if v, ok := strings.CutPrefix(o, "vers="); ok {
				vers = v
			}
		}
		if msg, ok := k.refuse[vers]; ok {
			return host.Result{}, hosttest.Fail(cmd, 32, msg)
		}
		fstype := "nfs4"
		if vers == "3" {
			fstype = "nfs"
		}
		// The kernel escapes a space in mountinfo as \040.
		esc := strings.ReplaceAll(src, " ", `\040`)
		k.mounts = append(k.mounts, fmt.Sprintf("40 29 0:37 / %s rw,relatime - %s %s rw,vers=%s,hard,proto=tcp\n", mp, fstype, esc, vers))
		k.writeMounts()
		for _, f := range k.serverFiles {
			require.NoError(k.t, os.WriteFile(filepath.Join(mp, f), []byte("data"), 0o644))
		}
		if k.symlink != "" {
			hosttest.WriteFile(k.t, k.root, "/etc/passwd", "root:x:0:0\n")
			require.NoError(k.t, os.Symlink("/etc/passwd", filepath.Join(mp, k.symlink)))
		}
		if k.dir != "" {
			require.NoError(k.t, os.Mkdir(filepath.Join(mp, k.dir), 0o755))
		}
	case "umount":
		mp := hosttest.Arg(k.t, cmd, -1)
		if k.busy && hosttest.Arg(k.t, cmd, 0) != "-l" {
			return host.Result{}, hosttest.Fail(cmd, 16, "umount.nfs4: "+mp+": device is busy")
		}
		kept := k.mounts[:0]
		found := false
		for _, m := range k.mounts {
			if strings.Contains(m, " "+mp+" ") {
				found = true
				continue
			}
			kept = append(kept, m)
		}
		if !found {
			return host.Result{}, hosttest.Fail(cmd, 32, "umount: "+mp+": not mounted.")
		}
		k.mounts = kept
		k.writeMounts()
		entries, _ := os.ReadDir(mp)
		for _, e := range entries {
			os.RemoveAll(filepath.Join(mp, e.Name()))
		}
	case "losetup":
		if hosttest.Arg(k.t, cmd, 0) == "--detach" {
			dev := filepath.Base(hosttest.Arg(k.t, cmd, 1))
			require.NoError(k.t, os.RemoveAll(filepath.Join(k.root, "sys/block", dev)))
			return host.Result{}, nil
		}
		file := hosttest.Arg(k.t, cmd, -1)
		dev := fmt.Sprintf("loop%d", k.loops)
		k.loops++
		hosttest.WriteFile(k.t, k.root, "/sys/block/"+dev+"/loop/backing_file", file+"\n")
		return host.Result{Stdout: []byte("/dev/" + dev + "\n")}, nil
	default:
		return host.Result{}, hosttest.Fail(cmd, 127, "unexpected command")
	}
	return host.Result{}, nil
}

func (k *fakeKernel) mounted() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.mounts)
}

func nfsInfo(t *testing.T, data string) connector.ConnectionInfo {
	t.Helper()
	info, err := connector.ParseConnectionInfo([]byte(`{"driver_volume_type":"nfs","data":` + data + `}`))
	require.NoError(t, err)
	return info
}

const (
	volA = `{"export":"10.0.0.5:/srv/cinder","name":"volume-a"}`
	volB = `{"export":"10.0.0.5:/srv/cinder/","name":"volume-b"}`
)

func mountCalls(r *hosttest.Runner) []string {
	var out []string
	for _, c := range r.Calls() {
		if strings.HasPrefix(c, "mount ") || strings.HasPrefix(c, "umount ") {
			out = append(out, c)
		}
	}
	return out
}

func TestConnectDisconnect(t *testing.T) {
	c, k, r := newFake(t)
	ctx := context.Background()
	info := nfsInfo(t, volA)
	exp, _ := ParseExport("10.0.0.5:/srv/cinder")
	mp := filepath.Join(DefaultMountBase, exp.ID())

	dev, err := c.Connect(ctx, info)
	require.NoError(t, err)
	require.Equal(t, mp+"/volume-a", dev.Path)
	require.Equal(t, connector.TypeFile, dev.Type)
	require.Equal(t, "nfs", dev.Protocol)
	require.Equal(t, "4.2", dev.Extra[ExtraVersion])
	require.Equal(t, mp, dev.Extra[ExtraMountPoint])
	require.Equal(t, "false", dev.Extra[ExtraReused])
	require.Equal(t, []string{"mount -t nfs -o nosuid,nodev,noexec,vers=4.2 10.0.0.5:/srv/cinder " + c.h.FS.Path(mp)}, mountCalls(r))

	paths, err := c.DevicePaths(ctx, info)
	require.NoError(t, err)
	require.Equal(t, []string{dev.Path}, paths)

	var st shareState
	data, err := c.h.FS.ReadFile(filepath.Join(DefaultStateDir, exp.ID()+".json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &st))
	require.Contains(t, st.Users, "volume-a")
	fi, err := c.h.FS.Stat(filepath.Join(DefaultStateDir, exp.ID()+".json"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	require.NoError(t, c.Disconnect(ctx, info, dev, connector.DisconnectOptions{}))
	require.Equal(t, 0, k.mounted())
	require.False(t, c.h.FS.Exists(mp), "empty mount point removed")
	require.False(t, c.h.FS.Exists(filepath.Join(DefaultStateDir, exp.ID()+".json")))

	// Idempotent: again, and without the device record.
	n := len(r.Calls())
	require.NoError(t, c.Disconnect(ctx, info, dev, connector.DisconnectOptions{}))
	require.NoError(t, c.Disconnect(ctx, info, nil, connector.DisconnectOptions{}))
	require.Len(t, r.Calls(), n, "nothing left to do, nothing run")
	paths, err = c.DevicePaths(ctx, info)
	require.NoError(t, err)
	require.Empty(t, paths)
}

// TestExportWithSpace: a share path with a space, as Cinder's remotefs hands
// it out (raw) or as its shares file spells it (\040); mount gets the real
// space inside one argv element, and the mount is recognised again in
// mountinfo (where the kernel writes \040).
func TestExportWithSpace(t *testing.T) {
	for _, export := range []string{`10.0.0.5:/srv/my\\040vols`, "10.0.0.5:/srv/my vols"} {
		t.Run(export, func(t *testing.T) { testExportWithSpace(t, export) })
	}
}

func testExportWithSpace(t *testing.T, export string) {
	c, k, r := newFake(t)
	ctx := context.Background()
	info := nfsInfo(t, `{"export":"`+export+`","name":"volume-a"}`)
	dev, err := c.Connect(ctx, info)
	require.NoError(t, err)
	var srcs []string
	for _, call := range r.Commands() {
		if call.Name == "mount" {
			srcs = append(srcs, hosttest.Arg(t, call, 4))
		}
	}
	require.Equal(t, []string{"10.0.0.5:/srv/my vols"}, srcs)
	_, err = c.Connect(ctx, info)
	require.NoError(t, err, "the existing mount is recognised")
	require.Len(t, mountCalls(r), 1)
	require.NoError(t, c.Disconnect(ctx, info, dev, connector.DisconnectOptions{}))
	require.Equal(t, 0, k.mounted())
}

func TestVersionFallback(t *testing.T) {
	tests := []struct {
		name     string
		refuse   map[string]string
		wantVers string
		wantN    int
		wantErr  string
	}{
		{name: "4.2", wantVers: "4.2", wantN: 1},
		{name: "4.1", refuse: map[string]string{"4.2": "mount.nfs: Protocol not supported"}, wantVers: "4.1", wantN: 2},
		{name: "3", refuse: map[string]string{"4.2": "mount.nfs: Protocol not supported", "4.1": "mount.nfs: Protocol not supported"}, wantVers: "3", wantN: 3},
		{name: "none", refuse: map[string]string{"4.2": "nope 4.2", "4.1": "nope 4.1", "3": "access denied by server"}, wantN: 3, wantErr: "access denied"},
		{name: "timeout stops", refuse: map[string]string{"4.2": "mount.nfs: Connection timed out"}, wantN: 1, wantErr: "timed out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, k, r := newFake(t)
			k.refuse = tt.refuse
			dev, err := c.Connect(context.Background(), nfsInfo(t, volA))
			require.Len(t, mountCalls(r), tt.wantN)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.Equal(t, 0, k.mounted())
				require.False(t, c.h.FS.Exists(c.opts.MountBase+"/"+mustExport(t).ID()), "mount point cleaned up")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantVers, dev.Extra[ExtraVersion])
		})
	}
}

func mustExport(t *testing.T) Export {
	e, err := ParseExport("10.0.0.5:/srv/cinder")
	require.NoError(t, err)
	return e
}

func TestMountOptionsOrder(t *testing.T) {
	c, _, r := newFake(t)
	c.opts.MountOptions = "nfsvers=4.1,suid"
	_, err := c.Connect(context.Background(), nfsInfo(t, `{"export":"10.0.0.5:/srv/cinder","name":"volume-a","options":"-o vers=3,nolock"}`))
	require.NoError(t, err)
	calls := mountCalls(r)
	require.Len(t, calls, 1, "a given version means no fallback")
	require.Contains(t, calls[0], "-o nosuid,nodev,noexec,vers=3,nolock,nfsvers=4.1,suid ")

	c.opts.MountOptions = "uhelper=x"
	_, err = c.Connect(context.Background(), nfsInfo(t, volB))
	require.ErrorContains(t, err, `invalid --nfs-mount-options`)
	require.ErrorContains(t, err, `"uhelper" is not allowed`)
	require.NotErrorIs(t, err, connector.ErrInvalid, "the config is at fault, not the connection info")
}

func TestTwoVolumesOneShare(t *testing.T) {
	c, k, r := newFake(t)
	ctx := context.Background()
	a, b := nfsInfo(t, volA), nfsInfo(t, volB)
	devA, err := c.Connect(ctx, a)
	require.NoError(t, err)
	devB, err := c.Connect(ctx, b)
	require.NoError(t, err)
	require.Equal(t, "true", devB.Extra[ExtraReused])
	require.Equal(t, "4.2", devB.Extra[ExtraVersion])
	require.Equal(t, devA.Extra[ExtraMountPoint], devB.Extra[ExtraMountPoint])
	require.Len(t, mountCalls(r), 1)

	require.NoError(t, c.Disconnect(ctx, a, devA, connector.DisconnectOptions{}))
	require.Equal(t, 1, k.mounted(), "the second volume keeps the share")
	require.True(t, c.h.FS.Exists(devB.Path))
	require.NoError(t, c.Disconnect(ctx, b, devB, connector.DisconnectOptions{}))
	require.Equal(t, 0, k.mounted())
	require.Len(t, mountCalls(r), 2)
}

func TestReconnectIsIdempotent(t *testing.T) {
	c, _, r := newFake(t)
	c.opts.AsBlock = true
	ctx := context.Background()
	d1, err := c.Connect(ctx, nfsInfo(t, volA))
	require.NoError(t, err)
	n := len(r.Calls())
	d2, err := c.Connect(ctx, nfsInfo(t, volA))
	require.NoError(t, err)
	require.Equal(t, d1.Path, d2.Path)
	require.Len(t, r.Calls(), n)
}

func TestReuseExistingMount(t *testing.T) {
	c, k, r := newFake(t)
	mp := c.h.FS.Path(filepath.Join(DefaultMountBase, mustExport(t).ID()))
	require.NoError(t, os.MkdirAll(mp, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mp, "volume-a"), nil, 0o644))
	k.mounts = []string{fmt.Sprintf("40 29 0:37 / %s rw - nfs 10.0.0.5:/srv/cinder rw,vers=3,hard\n", mp)}
	k.writeMounts()
	dev, err := c.Connect(context.Background(), nfsInfo(t, volA))
	require.NoError(t, err)
	require.Empty(t, mountCalls(r))
	require.Equal(t, "3", dev.Extra[ExtraVersion])
	require.Equal(t, "true", dev.Extra[ExtraReused])

	// Something else on brick's mount point is refused.
	k.mounts = []string{fmt.Sprintf("40 29 0:37 / %s rw - nfs 10.9.9.9:/evil rw,vers=3\n", mp)}
	k.writeMounts()
	_, err = c.Connect(context.Background(), nfsInfo(t, volB))
	require.ErrorContains(t, err, "already holds nfs")
}

func TestAsBlock(t *testing.T) {
	c, k, r := newFake(t)
	c.opts.AsBlock = true
	ctx := context.Background()
	info := nfsInfo(t, volA)
	dev, err := c.Connect(ctx, info)
	require.NoError(t, err)
	require.Equal(t, "/dev/loop0", dev.Path)
	require.Equal(t, connector.TypeBlock, dev.Type)
	require.Equal(t, "/dev/loop0", dev.Extra[ExtraLoop])
	file := dev.Extra[ExtraFile]
	require.Contains(t, r.Calls(), "losetup --find --show --direct-io=on "+c.h.FS.Path(file))
	paths, err := c.DevicePaths(ctx, info)
	require.NoError(t, err)
	require.Equal(t, []string{file, "/dev/loop0"}, paths)

	// Someone has the loop device open: refused, nothing changed.
	hosttest.WriteFile(t, k.root, "/proc/4242/comm", "qemu-img\n")
	hosttest.Symlink(t, k.root, "/proc/4242/fd/7", "/dev/loop0")
	err = c.Disconnect(ctx, info, dev, connector.DisconnectOptions{})
	require.ErrorIs(t, err, ErrBusy)
	require.ErrorContains(t, err, "4242 (qemu-img)")
	require.True(t, c.h.FS.Exists("/sys/block/loop0"))
	require.Equal(t, 1, k.mounted())

	require.NoError(t, os.RemoveAll(filepath.Join(k.root, "proc/4242")))
	require.NoError(t, c.Disconnect(ctx, info, nil, connector.DisconnectOptions{}))
	require.Contains(t, r.Calls(), "losetup --detach /dev/loop0")
	require.False(t, c.h.FS.Exists("/sys/block/loop0"))
	require.Equal(t, 0, k.mounted())
}

func TestAsBlockRefusesQcow2(t *testing.T) {
	c, _, r := newFake(t)
	c.opts.AsBlock = true
	_, err := c.Connect(context.Background(), nfsInfo(t, `{"export":"h:/x","name":"volume-a","format":"qcow2"}`))
	require.ErrorIs(t, err, connector.ErrInvalid)
	require.Empty(t, r.Calls())
}

func TestLoopNotOursIsLeftAlone(t *testing.T) {
	c, k, r := newFake(t)
	c.opts.AsBlock = true
	ctx := context.Background()
	info := nfsInfo(t, volA)
	dev, err := c.Connect(ctx, info)
	require.NoError(t, err)
	// loop0 was detached behind brick's back and now backs another file.
	hosttest.WriteFile(t, k.root, "/sys/block/loop0/loop/backing_file", "/other/file\n")
	require.NoError(t, c.Disconnect(ctx, info, dev, connector.DisconnectOptions{}))
	require.NotContains(t, r.Calls(), "losetup --detach /dev/loop0")
	require.True(t, c.h.FS.Exists("/sys/block/loop0"))
}

func TestOpenFiles(t *testing.T) {
	c, k, r := newFake(t)
	ctx := context.Background()
	a, b := nfsInfo(t, volA), nfsInfo(t, volB)
	devA, err := c.Connect(ctx, a)
	require.NoError(t, err)
	devB, err := c.Connect(ctx, b)
	require.NoError(t, err)
	hosttest.WriteFile(t, k.root, "/proc/77/comm", "dd\n")
	hosttest.Symlink(t, k.root, "/proc/77/fd/3", c.h.FS.Path(devB.Path))

	// B is open, but A's disconnect does not unmount: it goes through.
	require.NoError(t, c.Disconnect(ctx, a, devA, connector.DisconnectOptions{}))
	// B itself is open: refused.
	err = c.Disconnect(ctx, b, devB, connector.DisconnectOptions{})
	require.ErrorIs(t, err, ErrBusy)
	require.ErrorContains(t, err, "77 (dd)")
	require.Equal(t, 1, k.mounted())

	// An unrelated file on the share is open: the last disconnect refuses too.
	require.NoError(t, os.RemoveAll(filepath.Join(k.root, "proc/77/fd/3")))
	hosttest.Symlink(t, k.root, "/proc/77/cwd", c.h.FS.Path(devB.Extra[ExtraMountPoint]))
	err = c.Disconnect(ctx, b, devB, connector.DisconnectOptions{})
	require.ErrorIs(t, err, ErrBusy)
	require.ErrorContains(t, err, "share")

	// --force: umount is busy, so the share is detached lazily.
	k.busy = true
	require.NoError(t, c.Disconnect(ctx, b, devB, connector.DisconnectOptions{Force: true}))
	require.Contains(t, r.Calls(), "umount -l "+c.h.FS.Path(devB.Extra[ExtraMountPoint]))
	require.Equal(t, 0, k.mounted())
}

func TestUmountBusyWithoutForce(t *testing.T) {
	c, k, _ := newFake(t)
	ctx := context.Background()
	info := nfsInfo(t, volA)
	dev, err := c.Connect(ctx, info)
	require.NoError(t, err)
	k.busy = true
	err = c.Disconnect(ctx, info, dev, connector.DisconnectOptions{})
	require.ErrorIs(t, err, ErrBusy)
	require.Equal(t, 1, k.mounted())
	// The retry, once the kernel lets go, finishes the job.
	k.busy = false
	require.NoError(t, c.Disconnect(ctx, info, dev, connector.DisconnectOptions{}))
	require.Equal(t, 0, k.mounted())
	require.False(t, c.h.FS.Exists(dev.Extra[ExtraMountPoint]))
}

func TestConnectFileProblems(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, k *fakeKernel)
		info    string
		wantErr string
	}{
		{name: "missing file", info: `{"export":"10.0.0.5:/srv/cinder","name":"volume-zzz"}`, wantErr: "not found on the share"},
		{
			name: "symlink", info: `{"export":"10.0.0.5:/srv/cinder","name":"volume-a"}`, wantErr: "symlink",
			setup: func(t *testing.T, k *fakeKernel) { k.serverFiles = nil; k.symlink = "volume-a" },
		},
		{
			name: "directory", info: `{"export":"10.0.0.5:/srv/cinder","name":"volume-a"}`, wantErr: "not a regular file",
			setup: func(t *testing.T, k *fakeKernel) { k.serverFiles = nil; k.dir = "volume-a" },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, k, _ := newFake(t)
			if tt.setup != nil {
				tt.setup(t, k)
			}
			_, err := c.Connect(context.Background(), nfsInfo(t, tt.info))
			require.ErrorContains(t, err, tt.wantErr)
			require.Equal(t, 0, k.mounted(), "the share brick mounted is unmounted again")
			require.False(t, c.h.FS.Exists(filepath.Join(DefaultMountBase, mustExport(t).ID())))
		})
	}
}

func TestInvalidInfoRunsNothing(t *testing.T) {
	for _, data := range []string{
		`{"export":"-oremount:/x","name":"v"}`,
		`{"export":"h:/x","name":"../../etc/shadow"}`,
		`{"export":"h:/x","name":"v","options":"-o vers=3 h2:/y"}`,
		`{"export":"h:/x"}`,
	} {
		c, _, r := newFake(t)
		info := nfsInfo(t, data)
		_, err := c.Connect(context.Background(), info)
		require.ErrorIs(t, err, connector.ErrInvalid, data)
		require.ErrorIs(t, c.Disconnect(context.Background(), info, nil, connector.DisconnectOptions{}), connector.ErrInvalid)
		require.Empty(t, r.Calls(), data)
	}
}

func TestOwnDescriptorsDoNotCount(t *testing.T) {
	c, k, _ := newFake(t)
	ctx := context.Background()
	info := nfsInfo(t, volA)
	dev, err := c.Connect(ctx, info)
	require.NoError(t, err)
	// brick (pid 500) inherited its caller's descriptor; the caller is gone.
	require.NoError(t, os.Rename(filepath.Join(k.root, "proc/self"), filepath.Join(k.root, "proc/500")))
	hosttest.Symlink(t, k.root, "/proc/self", "500")
	hosttest.WriteFile(t, k.root, "/proc/500/comm", "brick\n")
	hosttest.Symlink(t, k.root, "/proc/500/fd/9", c.h.FS.Path(dev.Path))
	require.NoError(t, c.Disconnect(ctx, info, dev, connector.DisconnectOptions{}))
	require.Equal(t, 0, k.mounted())
}

func TestConcurrentConnectsMountOnce(t *testing.T) {
	c, k, r := newFake(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, info := range []connector.ConnectionInfo{nfsInfo(t, volA), nfsInfo(t, volB)} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.Connect(ctx, info)
		}()
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.Len(t, mountCalls(r), 1, "the share lock serialises the mount decision")
	require.Equal(t, 1, k.mounted())
}

func TestStaleUsersAfterReboot(t *testing.T) {
	c, k, _ := newFake(t)
	ctx := context.Background()
	// The record survived, the mount did not (a state dir on disk, a reboot).
	id := mustExport(t).ID()
	hosttest.WriteFile(t, k.root, filepath.Join(DefaultStateDir, id+".json"),
		`{"export":"10.0.0.5:/srv/cinder","users":{"volume-gone":{"loop_device":"/dev/loop7"}}}`)
	info := nfsInfo(t, volA)
	dev, err := c.Connect(ctx, info)
	require.NoError(t, err)
	require.NoError(t, c.Disconnect(ctx, info, dev, connector.DisconnectOptions{}))
	require.Equal(t, 0, k.mounted(), "the stale user does not keep the share mounted")
}
