package iscsi_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/multipath"
	"github.com/brick-storage/brick/scsi"
)

const tgtIQN = "iqn.2026-12.org.brick:target1"

// fakeKernel plays open-iscsi, the SCSI midlayer and multipathd over a
// fixture tree: iscsiadm creates records and sessions, a login shows the
// LUNs the target exports, a write to a device's delete file removes it.
type fakeKernel struct {
	t    *testing.T
	root string

	mu       sync.Mutex
	luns     map[int]string    // LUN -> WWID the target exports
	sessions map[string]int    // portal -> session ID
	ifaces   map[string]string // portal -> the session's open-iscsi interface
	nextSess int
	nextDisk byte
	loginErr map[string]error // portal -> login failure
	password string           // the CHAP password the target wants ("" for none)
	dupLogin bool             // a login makes two sessions (a racing open-iscsi)
	lingers  bool             // a failed login leaves its session (iscsid finished it)
	claim    string           // what takes LUN 1's disk at login: "multipath" (multipathd on its own), "lvm"
	maps     int
}

func newFakeKernel(t *testing.T) (*fakeKernel, *hosttest.Runner, *host.Host) {
	fk := &fakeKernel{t: t, luns: map[int]string{1: "360000000000000000e00000000010001", 2: "360000000000000000e00000000010002"},
		sessions: map[string]int{}, ifaces: map[string]string{}, nextSess: 1, nextDisk: 'a', loginErr: map[string]error{}}
	r := hosttest.NewRunner(fk.run)
	h, root := hosttest.New(t, r)
	fk.root = root
	hosttest.WriteFile(t, root, "/proc/self/mountinfo", "22 1 0:21 / / rw - ext4 /dev/vda1 rw\n")
	hosttest.Mkdir(t, root, "/dev")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go fk.deleter(ctx)
	return fk, r, h
}

func (fk *fakeKernel) path(p string) string { return filepath.Join(fk.root, p) }

func (fk *fakeKernel) recordFile(iqn, portal string) string {
	p, err := iscsi.ParsePortal(portal)
	require.NoError(fk.t, err)
	return fmt.Sprintf("/etc/iscsi/nodes/%s/%s,%d", iqn, p.Host, p.Port)
}

func (fk *fakeKernel) run(_ context.Context, cmd host.Command) (host.Result, error) {
	fk.mu.Lock()
	defer fk.mu.Unlock()
	args := strings.Join(cmd.Args, " ")
	switch cmd.Name {
	case "iscsiadm":
		iqn, portal, iface := "", "", "default"
		for i, a := range cmd.Args {
			switch a {
			case "-T":
				iqn = hosttest.Arg(fk.t, cmd, i+1)
			case "-p":
				portal = hosttest.Arg(fk.t, cmd, i+1)
			case "-I":
				iface = hosttest.Arg(fk.t, cmd, i+1)
			}
		}
		args = strings.Replace(args, " -I "+iface, "", 1)
		var rec string
		if portal != "" {
			rec = fk.recordFile(iqn, portal)
		}
		switch {
		case strings.HasSuffix(args, "-o new"):
			hosttest.WriteFile(fk.t, fk.root, rec, "# BEGIN RECORD 2.1.8\nnode.name = "+iqn+"\niface.iscsi_ifacename = "+iface+"\nnode.session.auth.authmethod = None\nnode.session.scan = auto\nnode.conn[0].timeo.login_timeout = 15\n# END RECORD\n")
			return host.Result{}, nil
		case strings.HasSuffix(args, "--login"):
			if _, ok := fk.sessions[portal]; ok {
				return host.Result{ExitCode: 15}, nil
			}
			fk.ifaces[portal] = iface
			if err := fk.loginErr[portal]; err != nil {
				if fk.lingers {
					fk.addSession(iqn, portal)
				}
				return host.Result{}, err
			}
			data, err := os.ReadFile(fk.path(rec))
			if err != nil || !strings.Contains(string(data), "iface.iscsi_ifacename = "+iface+"\n") {
				return host.Result{}, hosttest.Fail(cmd, 21, "iscsiadm: No records found")
			}
			if fk.password != "" && !strings.Contains(string(data), "node.session.auth.password = "+fk.password+"\n") {
				return host.Result{}, hosttest.Fail(cmd, 24, "iscsiadm: initiator reported error (24 - iSCSI login failed due to authorization failure)")
			}
			fk.addSession(iqn, portal)
			if fk.dupLogin {
				first := fk.sessions[portal]
				fk.addSession(iqn, portal)
				fk.sessions[portal] = first
			}
			return host.Result{}, nil
		case strings.HasPrefix(args, "-m session -r ") && strings.HasSuffix(args, "--logout"):
			id, err := strconv.Atoi(hosttest.Arg(fk.t, cmd, 3))
			require.NoError(fk.t, err)
			blocks, _ := filepath.Glob(fk.path(fmt.Sprintf("/sys/devices/platform/host%d/session%d/target*/*/block/*", id, id)))
			for _, b := range blocks {
				require.NoError(fk.t, os.Remove(fk.path("/dev/"+filepath.Base(b))))
				require.NoError(fk.t, os.Remove(fk.path("/sys/block/"+filepath.Base(b))))
			}
			for _, p := range []string{fmt.Sprintf("/sys/class/iscsi_session/session%d", id), fmt.Sprintf("/sys/class/iscsi_connection/connection%d:0", id), fmt.Sprintf("/sys/devices/platform/host%d", id)} {
				require.NoError(fk.t, os.RemoveAll(fk.path(p)))
			}
			return host.Result{}, nil
		case strings.HasSuffix(args, "--logout"):
			id, ok := fk.sessions[portal]
			if !ok || fk.ifaces[portal] != iface {
				return host.Result{}, hosttest.Fail(cmd, 21, "iscsiadm: No matching sessions found")
			}
			delete(fk.sessions, portal)
			for _, p := range []string{fmt.Sprintf("/sys/class/iscsi_session/session%d", id), fmt.Sprintf("/sys/class/iscsi_connection/connection%d:0", id), fmt.Sprintf("/sys/devices/platform/host%d", id)} {
				require.NoError(fk.t, os.RemoveAll(fk.path(p)))
			}
			return host.Result{}, nil
		case strings.HasSuffix(args, "-o delete"):
			if err := os.Remove(fk.path(rec)); err != nil {
				return host.Result{}, hosttest.Fail(cmd, 21, "iscsiadm: No records found")
			}
			return host.Result{}, nil
		}
	case "multipath":
		switch hosttest.Arg(fk.t, cmd, 0) {
		case "-a":
			hosttest.WriteFile(fk.t, fk.root, "/etc/multipath/wwids", "/"+hosttest.Arg(fk.t, cmd, 1)+"/\n")
			return host.Result{}, nil
		case "-w":
			hosttest.WriteFile(fk.t, fk.root, "/etc/multipath/wwids", "")
			return host.Result{}, nil
		case "-f":
			fk.removeMap()
			return host.Result{}, nil
		}
	case "multipathd":
		if strings.HasPrefix(args, "add path") {
			fk.makeMap()
			return host.Result{Stdout: []byte("ok\n")}, nil
		}
		return host.Result{Stdout: []byte("ok\n")}, nil
	case "blockdev", "udevadm":
		return host.Result{}, nil
	}
	return host.Result{}, fmt.Errorf("fake kernel: unexpected command %s", strings.Join(cmd.Argv(), " "))
}

// addSession shows a logged-in session (host N = session N) and, as a
// kernel scan would, the target's LUNs.
func (fk *fakeKernel) addSession(iqn, portal string) {
	p, _ := iscsi.ParsePortal(portal)
	id := fk.nextSess
	fk.nextSess++
	fk.sessions[portal] = id
	t, root := fk.t, fk.root
	sess := fmt.Sprintf("/sys/devices/platform/host%d/session%d", id, id)
	hosttest.Mkdir(t, root, sess)
	cls := fmt.Sprintf("/sys/class/iscsi_session/session%d", id)
	hosttest.WriteFile(t, root, cls+"/targetname", iqn+"\n")
	hosttest.WriteFile(t, root, cls+"/state", "LOGGED_IN\n")
	hosttest.WriteFile(t, root, cls+"/ifacename", cmp.Or(fk.ifaces[portal], "default")+"\n")
	hosttest.Symlink(t, root, cls+"/device", fmt.Sprintf("../../../devices/platform/host%d/session%d", id, id))
	conn := fmt.Sprintf("/sys/class/iscsi_connection/connection%d:0", id)
	hosttest.WriteFile(t, root, conn+"/persistent_address", p.Host+"\n")
	hosttest.WriteFile(t, root, conn+"/persistent_port", fmt.Sprint(p.Port)+"\n")
	hosttest.WriteFile(t, root, fmt.Sprintf("/sys/class/scsi_host/host%d/scan", id), "")
	for lun := 0; lun <= 16; lun++ { // in LUN order, so names are predictable
		if wwid, ok := fk.luns[lun]; ok {
			fk.addDisk(id, lun, wwid)
		}
	}
	switch fk.claim {
	case "multipath":
		fk.makeMap()
	case "lvm":
		fk.holdLUN1("dm-7", "LVM-Yc1xWvxyz", "vg0-data")
	}
}

// holdLUN1 makes a device-mapper device hold every disk of LUN 1.
func (fk *fakeKernel) holdLUN1(dm, uuid, name string) {
	t, root := fk.t, fk.root
	hosttest.WriteFile(t, root, "/sys/devices/virtual/block/"+dm+"/dm/uuid", uuid+"\n")
	hosttest.WriteFile(t, root, "/sys/devices/virtual/block/"+dm+"/dm/name", name+"\n")
	if _, err := os.Lstat(fk.path("/sys/block/" + dm)); err != nil {
		hosttest.Symlink(t, root, "/sys/block/"+dm, "../devices/virtual/block/"+dm)
	}
	matches, _ := filepath.Glob(fk.path("/sys/devices/platform/host*/session*/target*/*:1/block/*"))
	for _, m := range matches {
		require.NoError(t, os.Symlink("../../../../../../../../virtual/block/"+dm, m+"/holders/"+dm))
	}
}

func (fk *fakeKernel) addDisk(hostN, lun int, wwid string) string {
	t, root := fk.t, fk.root
	name := "sd" + string(fk.nextDisk)
	fk.nextDisk++
	hctl := fmt.Sprintf("%d:0:0:%d", hostN, lun)
	dev := fmt.Sprintf("/sys/devices/platform/host%d/session%d/target%d:0:0/%s", hostN, hostN, hostN, hctl)
	hosttest.Mkdir(t, root, dev+"/block/"+name+"/holders")
	hosttest.WriteFile(t, root, dev+"/block/"+name+"/dev", fmt.Sprintf("8:%d\n", 16*int(name[2]-'a')))
	hosttest.WriteFile(t, root, dev+"/block/"+name+"/ro", "0\n")
	switch {
	case strings.HasPrefix(wwid, "serial:"): // no page 0x83; a unit serial
		sn := strings.TrimPrefix(wwid, "serial:")
		hosttest.WriteFile(t, root, dev+"/vpd_pg80", string([]byte{0, 0x80, 0, byte(len(sn))})+sn)
	case wwid != "":
		hosttest.WriteFile(t, root, dev+"/wwid", "naa."+wwid[1:]+"\n")
	}
	hosttest.WriteFile(t, root, dev+"/delete", "")
	hosttest.Symlink(t, root, dev+"/block/"+name+"/device", "../../../"+hctl)
	hosttest.Symlink(t, root, "/sys/class/scsi_device/"+hctl+"/device", "../../../.."+dev)
	hosttest.Symlink(t, root, "/sys/block/"+name, "../.."+dev+"/block/"+name)
	hosttest.WriteFile(t, root, "/dev/"+name, "")
	return name
}

// deleter removes devices whose delete file was written, as the kernel does.
func (fk *fakeKernel) deleter(ctx context.Context) {
	for ctx.Err() == nil {
		matches, _ := filepath.Glob(fk.path("/sys/devices/platform/host*/session*/target*/*/delete"))
		for _, m := range matches {
			if b, _ := os.ReadFile(m); string(b) == "1" {
				dir := filepath.Dir(m)
				blocks, _ := filepath.Glob(dir + "/block/*")
				_ = os.RemoveAll(dir)
				for _, b := range blocks {
					_ = os.Remove(fk.path("/sys/block/" + filepath.Base(b)))
					_ = os.Remove(fk.path("/dev/" + filepath.Base(b)))
				}
				_ = os.RemoveAll(fk.path("/sys/class/scsi_device/" + filepath.Base(dir)))
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// makeMap builds dm-0 over every disk showing LUN 1's WWID and, as
// multipathd's "add path" does, joins a disk that came later to it.
func (fk *fakeKernel) makeMap() {
	t, root := fk.t, fk.root
	if fk.maps == 0 {
		fk.maps++
		wwid := fk.luns[1]
		hosttest.WriteFile(t, root, "/sys/devices/virtual/block/dm-0/dm/uuid", "mpath-"+wwid+"\n")
		hosttest.WriteFile(t, root, "/sys/devices/virtual/block/dm-0/dm/name", wwid+"\n")
		hosttest.WriteFile(t, root, "/sys/devices/virtual/block/dm-0/ro", "0\n")
		hosttest.WriteFile(t, root, "/sys/devices/virtual/block/dm-0/dev", "254:0\n")
		hosttest.Symlink(t, root, "/sys/block/dm-0", "../devices/virtual/block/dm-0")
		hosttest.WriteFile(t, root, "/dev/dm-0", "")
	}
	matches, _ := filepath.Glob(fk.path("/sys/devices/platform/host*/session*/target*/*:1/block/*"))
	for _, m := range matches {
		name := filepath.Base(m)
		if _, err := os.Lstat(m + "/holders/dm-0"); err == nil {
			continue
		}
		require.NoError(t, os.Symlink("../../../../../../../../virtual/block/dm-0", m+"/holders/dm-0"))
		hosttest.Symlink(t, root, "/sys/devices/virtual/block/dm-0/slaves/"+name, "../../../../../.."+strings.TrimPrefix(m, root))
	}
}

func (fk *fakeKernel) removeMap() {
	fk.maps = 0
	matches, _ := filepath.Glob(fk.path("/sys/devices/platform/host*/session*/target*/*/block/*/holders/dm-0"))
	for _, m := range matches {
		_ = os.Remove(m)
	}
	for _, p := range []string{"/sys/block/dm-0", "/sys/devices/virtual/block/dm-0", "/dev/dm-0"} {
		_ = os.RemoveAll(fk.path(p))
	}
}

func (fk *fakeKernel) state() (sessions, records int, disks []string) {
	ents, _ := os.ReadDir(fk.path("/sys/class/iscsi_session"))
	recs, _ := filepath.Glob(fk.path("/etc/iscsi/nodes/*/*"))
	devs, _ := filepath.Glob(fk.path("/dev/sd*"))
	for _, d := range devs {
		disks = append(disks, filepath.Base(d))
	}
	return len(ents), len(recs), disks
}

func connInfo(t *testing.T, raw string) connector.ConnectionInfo {
	ci, err := connector.ParseConnectionInfo([]byte(raw))
	require.NoError(t, err)
	return ci
}

func singleInfo(t *testing.T, lun int, chap bool) connector.ConnectionInfo {
	auth := ""
	if chap {
		auth = `,"auth_method":"CHAP","auth_username":"alice","auth_password":"` + secret + `"`
	}
	return connInfo(t, fmt.Sprintf(`{"driver_volume_type":"iscsi","data":{"target_portal":"127.0.0.1:3260","target_iqn":"%s","target_lun":%d%s}}`, tgtIQN, lun, auth))
}

func fastOptions() iscsi.Options {
	return iscsi.Options{
		SCSI:             scsi.Options{DeviceTimeout: 2 * time.Second, GoneTimeout: 2 * time.Second},
		MultipathOptions: multipath.Options{MapTimeout: 2 * time.Second, FlushTimeout: 2 * time.Second},
		LockTimeout:      2 * time.Second,
	}
}

// slowOptions is fastOptions with every bound at 30 s: for a test that
// must tell a short bound (a login timeout) from all the others.
func slowOptions() iscsi.Options {
	const long = 30 * time.Second
	return iscsi.Options{
		SCSI:             scsi.Options{DeviceTimeout: long, GoneTimeout: long},
		MultipathOptions: multipath.Options{MapTimeout: long, FlushTimeout: long},
		LockTimeout:      long,
	}
}

func TestConnectDisconnectSinglePathCHAP(t *testing.T) {
	fk, r, h := newFakeKernel(t)
	fk.password = secret
	c := iscsi.New(h, fastOptions())
	ctx := context.Background()
	ci := singleInfo(t, 1, true)

	dev, err := c.Connect(ctx, ci)
	require.NoError(t, err)
	require.Equal(t, "/dev/sda", dev.Path)
	require.Equal(t, connector.TypeBlock, dev.Type)
	require.Equal(t, "iscsi", dev.Protocol)
	require.Equal(t, fk.luns[1], dev.WWN)
	require.Equal(t, []string{"/dev/sda"}, dev.Paths)
	require.Equal(t, tgtIQN, dev.Extra[iscsi.ExtraTargetIQN])

	// The password reached the record file, never a command line.
	rec, err := os.ReadFile(fk.path(fk.recordFile(tgtIQN, "127.0.0.1:3260")))
	require.NoError(t, err)
	require.Contains(t, string(rec), "node.session.auth.password = "+secret)
	require.Contains(t, string(rec), "node.session.scan = manual")
	for _, call := range r.Calls() {
		require.NotContains(t, call, secret)
	}

	paths, err := c.DevicePaths(ctx, ci)
	require.NoError(t, err)
	require.Equal(t, []string{"/dev/sda"}, paths)

	// A second LUN on the same target reuses the session.
	dev2, err := c.Connect(ctx, singleInfo(t, 2, true))
	require.NoError(t, err)
	require.Equal(t, "/dev/sdb", dev2.Path)

	// Disconnecting LUN 1 leaves the session for LUN 2.
	require.NoError(t, c.Disconnect(ctx, ci, dev, connector.DisconnectOptions{}))
	sessions, records, disks := fk.state()
	require.Equal(t, 1, sessions)
	require.Equal(t, 1, records)
	require.Equal(t, []string{"sdb"}, disks)

	// The last LUN takes session and record with it.
	require.NoError(t, c.Disconnect(ctx, singleInfo(t, 2, true), dev2, connector.DisconnectOptions{}))
	sessions, records, disks = fk.state()
	require.Zero(t, sessions)
	require.Zero(t, records)
	require.Empty(t, disks)
	require.NoDirExists(t, fk.path("/etc/iscsi/nodes/"+tgtIQN), "the emptied target directory goes too")
	for _, call := range r.Calls() {
		require.NotContains(t, call, "-o delete", "brick removes the record it wrote itself")
		require.NotContains(t, call, "blockdev", "the flush is an ioctl")
	}

	// Already gone is success, and runs no command.
	n := len(r.Calls())
	require.NoError(t, c.Disconnect(ctx, ci, dev, connector.DisconnectOptions{}))
	require.Len(t, r.Calls(), n)
}

// A login that leaves two sessions to the target (open-iscsi racing with
// parallel logins) gets the second one logged out at once: its disk would
// be a second device for the volume's LUN, outliving the detach.
func TestConnectDropsDuplicateSession(t *testing.T) {
	fk, r, h := newFakeKernel(t)
	fk.dupLogin = true
	fk.luns = map[int]string{1: fk.luns[1]}
	c := iscsi.New(h, fastOptions())
	ctx := context.Background()
	ci := singleInfo(t, 1, false)
	dev, err := c.Connect(ctx, ci)
	require.NoError(t, err)
	require.Contains(t, r.Calls(), "iscsiadm -m session -r 2 --logout")
	sessions, records, disks := fk.state()
	require.Equal(t, 1, sessions)
	require.Equal(t, 1, records)
	require.Equal(t, "/dev/sda", dev.Path)
	require.Equal(t, []string{"sda"}, disks, "the duplicate session's disk went with it")

	require.NoError(t, c.Disconnect(ctx, ci, dev, connector.DisconnectOptions{}))
	sessions, records, _ = fk.state()
	require.Zero(t, sessions)
	require.Zero(t, records)
}

// A login iscsiadm reports failed may still leave a session: iscsid can
// finish what iscsiadm gave up on. The rollback logs it out.
func TestConnectFailedLoginLeavesNoSession(t *testing.T) {
	fk, _, h := newFakeKernel(t)
	fk.lingers = true
	fk.luns = map[int]string{} // scan is manual: a new session has no disk
	ci := singleInfo(t, 1, false)
	fk.loginErr["127.0.0.1:3260"] = errors.New("iscsiadm: timed out")
	c := iscsi.New(h, fastOptions())
	_, err := c.Connect(context.Background(), ci)
	require.ErrorContains(t, err, "timed out")
	sessions, records, disks := fk.state()
	require.Zero(t, sessions)
	require.Zero(t, records)
	require.Empty(t, disks)
}

func TestConnectWrongCHAPLeavesNothing(t *testing.T) {
	fk, r, h := newFakeKernel(t)
	fk.password = "the-right-one"
	c := iscsi.New(h, fastOptions())
	_, err := c.Connect(context.Background(), singleInfo(t, 1, true))
	require.ErrorContains(t, err, "CHAP authentication failed")
	require.NotContains(t, err.Error(), secret)
	sessions, records, disks := fk.state()
	require.Zero(t, sessions)
	require.Zero(t, records, "the node record brick created is removed again")
	require.Empty(t, disks)
	for _, call := range r.Calls() {
		require.NotContains(t, call, secret)
	}
}

func TestDisconnectRefusesMountedDevice(t *testing.T) {
	fk, _, h := newFakeKernel(t)
	c := iscsi.New(h, fastOptions())
	ctx := context.Background()
	ci := singleInfo(t, 1, false)
	dev, err := c.Connect(ctx, ci)
	require.NoError(t, err)
	hosttest.WriteFile(t, fk.root, "/proc/self/mountinfo", "22 1 0:21 / / rw - ext4 /dev/vda1 rw\n40 22 8:0 / /mnt/vol rw - ext4 /dev/sda rw\n")

	err = c.Disconnect(ctx, ci, dev, connector.DisconnectOptions{})
	require.ErrorIs(t, err, host.ErrDeviceBusy)
	require.ErrorContains(t, err, "/mnt/vol")
	_, _, disks := fk.state()
	require.Equal(t, []string{"sda", "sdb"}, disks, "nothing was removed")

	require.NoError(t, c.Disconnect(ctx, ci, dev, connector.DisconnectOptions{Force: true}))
	_, _, disks = fk.state()
	require.Equal(t, []string{"sdb"}, disks)
}

func TestDisconnectSkipsLUNReusedByAnotherVolume(t *testing.T) {
	fk, _, h := newFakeKernel(t)
	c := iscsi.New(h, fastOptions())
	ctx := context.Background()
	ci := singleInfo(t, 1, false)
	_, err := c.Connect(ctx, ci)
	require.NoError(t, err)
	stale := &connector.Device{Path: "/dev/sda", WWN: "3600aaaaaaaaaaaaaaaa"}
	require.NoError(t, c.Disconnect(ctx, ci, stale, connector.DisconnectOptions{}))
	_, _, disks := fk.state()
	require.Contains(t, disks, "sda", "a LUN showing another WWID is left alone")
}

func TestConnectMultipathNofM(t *testing.T) {
	fk, r, h := newFakeKernel(t)
	hosttest.WriteFile(t, fk.root, "/proc/42/comm", "multipathd\n")
	fk.loginErr["127.0.0.3:3260"] = errors.New("iscsiadm: connection timed out")
	opts := fastOptions()
	opts.Multipath = true
	c := iscsi.New(h, opts)
	ctx := context.Background()
	ci := connInfo(t, `{"driver_volume_type":"iscsi","target_portals":["127.0.0.1:3260","127.0.0.2:3260","127.0.0.3:3260"],"target_iqns":["`+tgtIQN+`","`+tgtIQN+`","`+tgtIQN+`"],"target_luns":[1,1,1]}`)
	fk.luns = map[int]string{1: fk.luns[1]}

	dev, err := c.Connect(ctx, ci)
	require.NoError(t, err)
	require.Equal(t, "/dev/dm-0", dev.Path)
	require.Equal(t, fk.luns[1], dev.MultipathID)
	require.Len(t, dev.Paths, 2)
	require.Equal(t, "/dev/disk/by-id/dm-uuid-mpath-"+fk.luns[1], dev.Extra[iscsi.ExtraMultipathDev])
	wwids, err := os.ReadFile(fk.path("/etc/multipath/wwids"))
	require.NoError(t, err)
	require.Contains(t, string(wwids), "/"+fk.luns[1]+"/\n", "the WWID is in the wwids file")
	sessions, records, _ := fk.state()
	require.Equal(t, 2, sessions)
	require.Equal(t, 2, records, "the dead portal's record is removed")

	paths, err := c.DevicePaths(ctx, ci)
	require.NoError(t, err)
	require.Equal(t, "/dev/dm-0", paths[0])

	require.NoError(t, c.Disconnect(ctx, ci, dev, connector.DisconnectOptions{}))
	sessions, records, disks := fk.state()
	require.Zero(t, sessions)
	require.Zero(t, records)
	require.Empty(t, disks)
	require.NoFileExists(t, fk.path("/dev/dm-0"))
	require.Contains(t, r.Calls(), "multipath -f "+fk.luns[1])
	wwids, err = os.ReadFile(fk.path("/etc/multipath/wwids"))
	require.NoError(t, err)
	require.NotContains(t, string(wwids), "\n/"+fk.luns[1]+"/\n", "the WWID is forgotten")
}

func TestMultipathWithoutDaemon(t *testing.T) {
	_, _, h := newFakeKernel(t)
	opts := fastOptions()
	opts.EnforceMultipath = true
	_, err := iscsi.New(h, opts).Connect(context.Background(), singleInfo(t, 1, false))
	require.ErrorIs(t, err, multipath.ErrNoDaemon)

	// Not enforced: a single path, with a warning.
	opts = fastOptions()
	opts.Multipath = true
	dev, err := iscsi.New(h, opts).Connect(context.Background(), singleInfo(t, 1, false))
	require.NoError(t, err)
	require.Equal(t, "/dev/sda", dev.Path)
}

func TestConnectRejectsBadInfoBeforeRunningAnything(t *testing.T) {
	_, r, h := newFakeKernel(t)
	c := iscsi.New(h, fastOptions())
	ci := connInfo(t, `{"driver_volume_type":"iscsi","data":{"target_portal":"127.0.0.1:3260","target_iqn":"--op=delete","target_lun":1,"auth_password":"`+secret+`"}}`)
	_, err := c.Connect(context.Background(), ci)
	require.ErrorIs(t, err, connector.ErrInvalid)
	require.Empty(t, r.Calls())
	require.Equal(t, host.Mask, h.Redactor.Redact(secret), "secrets are registered even when the info is rejected")
}

func TestConnectDeadPortalCostsTheLoginTimeout(t *testing.T) {
	fk, r, h := newFakeKernel(t)
	hosttest.WriteFile(t, fk.root, "/proc/42/comm", "multipathd\n")
	// Every other bound is far above the login timeout, so the wall-time
	// check below tells them apart on a loaded machine too.
	opts := slowOptions()
	opts.Multipath = true
	opts.LoginTimeout = 300 * time.Millisecond
	var probes atomic.Int32
	opts.PortalCheck = func(ctx context.Context, addr string) error {
		if addr == "127.0.0.3:3260" {
			probes.Add(1)
			return errors.New("connect: connection refused")
		}
		return nil
	}
	c := iscsi.New(h, opts)
	ci := connInfo(t, `{"driver_volume_type":"iscsi","target_portals":["127.0.0.3:3260","127.0.0.1:3260"],"target_iqns":["`+tgtIQN+`","`+tgtIQN+`"],"target_luns":[1,1]}`)
	fk.luns = map[int]string{1: fk.luns[1]}

	start := time.Now()
	dev, err := c.Connect(context.Background(), ci)
	require.NoError(t, err)
	require.Less(t, time.Since(start), 10*time.Second, "the dead portal cost another bound than the login timeout")
	require.Equal(t, "/dev/dm-0", dev.Path)
	require.Len(t, dev.Paths, 1)
	require.Greater(t, probes.Load(), int32(1), "a refused portal is retried until the login timeout")
	for _, call := range r.Calls() {
		require.NotContains(t, call, "127.0.0.3", "nothing runs for a portal that accepts no connection")
	}
	sessions, records, _ := fk.state()
	require.Equal(t, 1, sessions)
	require.Equal(t, 1, records)
	require.NoError(t, c.Disconnect(context.Background(), ci, dev, connector.DisconnectOptions{}))

	// Single path: the dead first portal is skipped after the timeout.
	opts.Multipath = false
	dev, err = iscsi.New(h, opts).Connect(context.Background(), ci)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:3260", dev.Extra[iscsi.ExtraTargetPortal])
	require.NoError(t, iscsi.New(h, opts).Disconnect(context.Background(), ci, dev, connector.DisconnectOptions{}))
}

// A single-path attach whose disk something took at once: multipathd's own
// map becomes the volume's device, and detach takes it away; anything else
// holding the disk leaves it the volume's device (brick warns).
func TestConnectSinglePathClaimed(t *testing.T) {
	tests := []struct {
		name     string
		claim    string
		udev     bool // multipathd runs and udev marks the disk a path
		readOnly bool // access_mode ro
		wantDisk bool // the disk itself is the volume's device
	}{
		{name: "multipathd built a map over the disk", claim: "multipath"},
		{name: "udev marks the disk a multipath path", claim: "multipath", udev: true},
		{name: "read-only: the map is set read-only", claim: "multipath", readOnly: true},
		{name: "LVM holds the disk: handed out as it is", claim: "lvm", wantDisk: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fk, r, h := newFakeKernel(t)
			fk.luns = map[int]string{1: fk.luns[1]}
			fk.claim = tt.claim
			if tt.udev {
				hosttest.WriteFile(t, fk.root, "/proc/42/comm", "multipathd\n")
				hosttest.WriteFile(t, fk.root, "/run/udev/control", "")
				hosttest.WriteFile(t, fk.root, "/run/udev/data/b8:0", "E:DM_MULTIPATH_DEVICE_PATH=1\n")
			}
			c := iscsi.New(h, fastOptions())
			ctx := context.Background()
			ci := singleInfo(t, 1, false)
			if tt.readOnly {
				ci = connInfo(t, `{"driver_volume_type":"iscsi","data":{"target_portal":"127.0.0.1:3260","target_iqn":"`+tgtIQN+`","target_lun":1,"access_mode":"ro"}}`)
			}

			dev, err := c.Connect(ctx, ci)
			require.NoError(t, err)
			if tt.wantDisk {
				require.Equal(t, "/dev/sda", dev.Path)
				require.Empty(t, dev.MultipathID)
				err := c.Disconnect(ctx, ci, dev, connector.DisconnectOptions{})
				require.ErrorContains(t, err, "/dev/sda is held by dm-7", "detach leaves a disk LVM still uses")
				return
			}
			require.Equal(t, "/dev/dm-0", dev.Path)
			require.Equal(t, fk.luns[1], dev.MultipathID)
			require.Equal(t, []string{"/dev/sda"}, dev.Paths)
			require.Equal(t, fk.luns[1], dev.Extra[iscsi.ExtraDMName])
			require.Equal(t, "/dev/disk/by-id/dm-uuid-mpath-"+fk.luns[1], dev.Extra[iscsi.ExtraMultipathDev])
			for _, call := range r.Calls() {
				require.False(t, strings.HasPrefix(call, "multipath"), "brick asked multipathd for nothing: %s", call)
			}
			if tt.readOnly {
				require.Contains(t, r.Calls(), "blockdev --setro /dev/dm-0", "the device the user gets is read-only")
			}

			require.NoError(t, c.Disconnect(ctx, ci, dev, connector.DisconnectOptions{}))
			sessions, records, disks := fk.state()
			require.Zero(t, sessions)
			require.Zero(t, records)
			require.Empty(t, disks)
			require.NoFileExists(t, fk.path("/dev/dm-0"), "the map is flushed")
		})
	}
}
