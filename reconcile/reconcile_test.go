package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
)

const (
	volA    = "aaaaaaaa-0000-4000-8000-000000000001" // multipath, two portals
	volB    = "bbbbbbbb-0000-4000-8000-000000000002" // single path
	volC    = "cccccccc-0000-4000-8000-000000000003" // detached: a stray session
	volD    = "dddddddd-0000-4000-8000-000000000004" // half-attached (kill -9)
	volE    = "eeeeeeee-0000-4000-8000-000000000005" // persistent, gone after reboot
	volF    = "ffffffff-0000-4000-8000-000000000006" // attachment deleted in Cinder
	me      = "node1"
	iqnPfx  = "iqn.2010-10.org.openstack:volume-"
	foreign = "iqn.2026-12.example:not-cinder"
)

// sysfs builds a fixture /sys of iSCSI sessions, disks and dm maps.
type sysfs struct {
	t    testing.TB
	root string
}

func (s sysfs) session(id int, iqn, addr string) {
	base := fmt.Sprintf("/sys/class/iscsi_session/session%d", id)
	hosttest.WriteFile(s.t, s.root, base+"/targetname", iqn+"\n")
	hosttest.WriteFile(s.t, s.root, base+"/state", "LOGGED_IN\n")
	hosttest.Mkdir(s.t, s.root, fmt.Sprintf("/sys/devices/platform/host%d/session%d", id, id))
	hosttest.Symlink(s.t, s.root, base+"/device", fmt.Sprintf("/sys/devices/platform/host%d/session%d", id, id))
	conn := fmt.Sprintf("/sys/class/iscsi_connection/connection%d:0", id)
	hosttest.WriteFile(s.t, s.root, conn+"/persistent_address", addr+"\n")
	hosttest.WriteFile(s.t, s.root, conn+"/persistent_port", "3260\n")
}

func (s sysfs) disk(name string, session, lun int, wwid string) {
	dev := fmt.Sprintf("/sys/devices/platform/host%d/session%d/target%d:0:0/%d:0:0:%d", session, session, session, session, lun)
	hosttest.WriteFile(s.t, s.root, dev+"/wwid", "naa."+wwid+"\n")
	hosttest.Symlink(s.t, s.root, "/sys/block/"+name+"/device", dev)
}

func (s sysfs) dm(name, dmName, uuid string, slaves ...string) {
	hosttest.WriteFile(s.t, s.root, "/sys/block/"+name+"/dm/uuid", uuid+"\n")
	hosttest.WriteFile(s.t, s.root, "/sys/block/"+name+"/dm/name", dmName+"\n")
	hosttest.Mkdir(s.t, s.root, "/sys/block/"+name+"/slaves")
	for _, sl := range slaves {
		hosttest.Mkdir(s.t, s.root, "/sys/block/"+name+"/slaves/"+sl)
	}
}

func (s sysfs) nvme(ctrl, nqn string) {
	hosttest.WriteFile(s.t, s.root, "/sys/class/nvme/"+ctrl+"/subsysnqn", nqn+"\n")
}

func (s sysfs) mounts(lines ...string) {
	hosttest.WriteFile(s.t, s.root, "/proc/self/mountinfo", "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"+strings.Join(lines, ""))
}

// fakeCinder answers Volume from a table: host names attached, or absent.
type fakeCinder struct {
	attached map[string][]string
	err      error
	calls    int
}

func (c *fakeCinder) Volume(_ context.Context, id string) (*cinderapi.Volume, error) {
	c.calls++
	if c.err != nil {
		return nil, c.err
	}
	hosts, ok := c.attached[id]
	if !ok {
		return nil, &apierr.Error{Service: cinderapi.Service, Op: "show", Volume: id, Kind: apierr.ErrNotFound}
	}
	v := &cinderapi.Volume{ID: id, Status: "available"}
	for i, h := range hosts {
		v.Status = "in-use"
		v.Attachments = append(v.Attachments, volumes.Attachment{AttachmentID: fmt.Sprintf("att-%d", i), HostName: h})
	}
	return v, nil
}

// fakeAttach records what reconcile asked of the attach use case.
type fakeAttach struct {
	mu    sync.Mutex
	recs  []*attach.Record
	calls []string
	fail  map[string]error
}

func (a *fakeAttach) Records() ([]*attach.Record, []error) { return a.recs, nil }

func (a *fakeAttach) note(call, id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, call+" "+id)
	return a.fail[call+" "+id]
}

func (a *fakeAttach) Reconnect(_ context.Context, id string) (*attach.Record, error) {
	return nil, a.note("reconnect", id)
}

func (a *fakeAttach) Suspend(_ context.Context, id string, o attach.SuspendOptions) error {
	return a.note(fmt.Sprintf("suspend(unmount=%v,forget=%v)", o.Unmount, o.Forget), id)
}

func (a *fakeAttach) Cleanup(_ context.Context, id string, _ bool) ([]attach.CleanupResult, error) {
	return []attach.CleanupResult{{VolumeID: id, Action: "undone"}}, a.note("cleanup", id)
}

// fakeConn is the iSCSI and NVMe connector: it records disconnects of
// strays and finds paths (the same for every volume).
type fakeConn struct {
	disconnects []connector.ConnectionInfo
	paths       []string
}

func (c *fakeConn) Connect(context.Context, connector.ConnectionInfo) (*connector.Device, error) {
	return nil, errors.New("not used")
}

func (c *fakeConn) Disconnect(_ context.Context, info connector.ConnectionInfo, _ *connector.Device, _ connector.DisconnectOptions) error {
	c.disconnects = append(c.disconnects, info)
	return nil
}

func (c *fakeConn) DevicePaths(context.Context, connector.ConnectionInfo) ([]string, error) {
	return c.paths, nil
}

func iscsiRecord(id string, portals []string, mpath string, persist bool) *attach.Record {
	var ps, iqns, luns []any
	for _, p := range portals {
		ps, iqns, luns = append(ps, p), append(iqns, iqnPfx+id), append(luns, 1)
	}
	info := connector.ConnectionInfo{DriverVolumeType: "iscsi", Data: map[string]any{
		"target_portal": portals[0], "target_iqn": iqnPfx + id, "target_lun": 1,
		"auth_method": "CHAP", "auth_username": "u", "auth_password": "***",
	}}
	if len(portals) > 1 {
		info.Data["target_portals"], info.Data["target_iqns"], info.Data["target_luns"] = ps, iqns, luns
	}
	dev := &connector.Device{Path: "/dev/sdz", Protocol: "iscsi", MultipathID: mpath}
	if mpath != "" {
		dev.Path = "/dev/dm-0"
	}
	return &attach.Record{VolumeID: id, Phase: attach.PhaseAttached, Step: attach.StepDone, HostName: me,
		ConnectionInfo: &info, Device: dev, Persist: persist}
}

// nvmeRecord is an attached nvmeof volume at dev: old-format info when data
// has nqn, the new format or replicas (volume_replicas) otherwise.
func nvmeRecord(id, dev string, data map[string]any) *attach.Record {
	info := connector.ConnectionInfo{DriverVolumeType: "nvmeof", Data: data}
	return &attach.Record{VolumeID: id, Phase: attach.PhaseAttached, Step: attach.StepDone, HostName: me,
		ConnectionInfo: &info, Device: &connector.Device{Path: dev, Protocol: "nvmeof"}}
}

// nvmeLeg is a replica or new-format target, as KIOXIA KumoScale sends it.
func nvmeLeg(nqn, uuid string) map[string]any {
	return map[string]any{"target_nqn": nqn, "vol_uuid": uuid, "portals": []any{[]any{"10.0.2.3", "4420", "TCP"}}}
}

type world struct {
	sys    sysfs
	h      *host.Host
	cinder *fakeCinder
	att    *fakeAttach
	conn   *fakeConn
}

func (w *world) reconciler() *Reconciler {
	reg := connector.NewRegistry()
	reg.Register(w.conn, "iscsi")
	reg.Register(w.conn, "nvmeof")
	return &Reconciler{Host: w.h, Cinder: w.cinder, Attach: w.att, Connectors: reg, HostName: me}
}

// newWorld is a healthy host: A over two paths in map dm-0, B on one path,
// both attached here in Cinder, plus a session to a target that is no
// Cinder volume's.
func newWorld(t *testing.T) *world {
	h, root := hosttest.New(t, nil)
	w := &world{sys: sysfs{t, root}, h: h, conn: &fakeConn{},
		cinder: &fakeCinder{attached: map[string][]string{volA: {me}, volB: {me}, volC: {"other-host"}, volE: {me}, volF: {}}},
		att:    &fakeAttach{fail: map[string]error{}}}
	w.sys.mounts()
	w.sys.session(1, iqnPfx+volA, "10.0.2.2")
	w.sys.session(2, iqnPfx+volA, "10.0.3.2")
	w.sys.disk("sda", 1, 1, "6000a")
	w.sys.disk("sdb", 2, 1, "6000a")
	w.sys.dm("dm-0", "mpatha", "mpath-36000a", "sda", "sdb")
	w.sys.session(3, iqnPfx+volB, "10.0.2.2")
	w.sys.disk("sdc", 3, 1, "6000b")
	w.sys.session(9, foreign, "10.0.2.2")
	w.sys.disk("sdq", 9, 0, "6000f")
	w.att.recs = []*attach.Record{
		iscsiRecord(volA, []string{"10.0.2.2:3260", "10.0.3.2:3260"}, "36000a", true),
		iscsiRecord(volB, []string{"10.0.2.2:3260"}, "", false),
	}
	return w
}

// row is a finding as the tests compare it.
func rows(rep *Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, strings.TrimSpace(fmt.Sprintf("%s %s %s %s | %s", f.Status, f.Kind, short(f.VolumeID), f.Object, f.Detail)))
	}
	return out
}

func short(id string) string {
	if len(id) < 8 {
		return id
	}
	return id[:1]
}
