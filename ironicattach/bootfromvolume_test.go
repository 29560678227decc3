package ironicattach

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/ironicapi/ironictest"
)

// bfvIronic is a fake Ironic 21.4 for boot-from-volume: one node with
// its interfaces, capabilities, extra and states, the driver's enabled
// interfaces, connectors and targets, and the rules measured on the real
// one (target deletes need power off, interfaces change only in enroll,
// manageable or available).
type bfvIronic struct {
	mu         sync.Mutex
	maxVersion string
	node       map[string]any
	storage    []string // enabled storage interfaces
	conns      []map[string]any
	targets    []map[string]any
	ports      []map[string]any // the node's ports (a deploy needs one)
	fail       map[string]int   // "METHOD /path-prefix" -> HTTP status
	deployTo   string           // provision state a deploy ends in
	requests   []string
	seq        int
}

func newBFVIronic() *bfvIronic {
	return &bfvIronic{
		maxVersion: "1.82",
		node: map[string]any{"uuid": nodeUUID, "name": "node-1", "driver": "manual-management", "power_state": "power off",
			"provision_state": "available", "storage_interface": "noop", "boot_interface": "pxe",
			"properties": map[string]any{"capabilities": "boot_mode:bios"}, "extra": map[string]any{}},
		storage:  []string{"noop", "cinder"},
		conns:    []map[string]any{},
		targets:  []map[string]any{},
		ports:    []map[string]any{{"uuid": "00000000-0000-4000-8000-0000000000e1", "node_uuid": nodeUUID, "address": "52:54:00:12:34:56"}},
		fail:     map[string]int{},
		deployTo: "active",
	}
}

// changes are the requests that change something.
func (f *bfvIronic) changes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.requests {
		if !strings.HasPrefix(r, "GET ") {
			out = append(out, r)
		}
	}
	return out
}

func (f *bfvIronic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := r.URL.Path
	f.requests = append(f.requests, r.Method+" "+p)
	w.Header().Set("Content-Type", "application/json")
	for k, code := range f.fail {
		if strings.HasPrefix(r.Method+" "+p, k) {
			ironictest.Fault(w, code, "injected failure")
			return
		}
	}
	var body any
	if r.Body != nil {
		_ = json.NewDecoder(r.Body).Decode(&body)
	}
	switch {
	case p == "/v1/" || p == "/v1":
		w.Header().Set("X-OpenStack-Ironic-API-Maximum-Version", f.maxVersion)
		writeJSONBody(w, 200, map[string]any{"version": map[string]any{"version": f.maxVersion}})
	case p == "/v1/ports":
		writeJSONBody(w, 200, map[string]any{"ports": f.ports})
	case strings.HasPrefix(p, "/v1/drivers/"):
		writeJSONBody(w, 200, map[string]any{"name": "manual-management", "enabled_storage_interfaces": f.storage, "enabled_boot_interfaces": []string{"pxe", "ipxe"}})
	case p == "/v1/nodes/node-1" || p == "/v1/nodes/"+nodeUUID:
		f.nodeCall(w, r.Method, body)
	case p == "/v1/nodes/"+nodeUUID+"/states/provision":
		f.provision(w, body)
	case strings.HasPrefix(p, "/v1/nodes/"+nodeUUID+"/volume/"):
		kind := strings.TrimPrefix(p, "/v1/nodes/"+nodeUUID+"/volume/")
		writeJSONBody(w, 200, map[string]any{kind: *f.list(kind)})
	case strings.HasPrefix(p, "/v1/volume/"):
		f.volumeCall(w, r.Method, strings.Split(strings.TrimPrefix(p, "/v1/volume/"), "/"), body)
	default:
		ironictest.Fault(w, 404, "Node "+p+" could not be found.")
	}
}

func writeJSONBody(w http.ResponseWriter, code int, v any) {
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *bfvIronic) list(kind string) *[]map[string]any {
	if kind == "connectors" {
		return &f.conns
	}
	return &f.targets
}

func (f *bfvIronic) nodeCall(w http.ResponseWriter, method string, body any) {
	if method == "PATCH" {
		state := f.node["provision_state"]
		for _, op := range body.([]any) {
			o := op.(map[string]any)
			path := strings.Split(strings.TrimPrefix(o["path"].(string), "/"), "/")
			if strings.HasSuffix(path[0], "_interface") && state != "available" && state != "manageable" && state != "enroll" {
				ironictest.Fault(w, 400, fmt.Sprintf("Node %s can not have boot_interface updated unless it is in one of allowed (manage, enroll, inspect wait, available) states.", nodeUUID))
				return
			}
			parent := f.node
			for _, k := range path[:len(path)-1] {
				parent = parent[k].(map[string]any)
			}
			if o["op"] == "remove" {
				delete(parent, path[len(path)-1])
			} else {
				parent[path[len(path)-1]] = o["value"]
			}
		}
	}
	writeJSONBody(w, 200, f.node)
}

func (f *bfvIronic) provision(w http.ResponseWriter, body any) {
	switch body.(map[string]any)["target"] {
	case "active":
		f.node["provision_state"] = f.deployTo
		f.node["power_state"] = "power on"
		if f.deployTo == "deploy failed" {
			f.node["last_error"] = "iPXE boot failed"
		}
	case "deleted":
		f.node["provision_state"], f.node["power_state"] = "available", "power off"
		// Ironic 21.4's undeploy deletes the node's volume targets
		// (deploy_utils.tear_down_storage_configuration).
		*f.list("targets") = []map[string]any{}
		delete(f.node, "last_error")
	}
	w.WriteHeader(202)
}

func (f *bfvIronic) volumeCall(w http.ResponseWriter, method string, parts []string, body any) {
	list := f.list(parts[0])
	switch method {
	case "POST":
		item := body.(map[string]any)
		f.seq++
		item["uuid"] = fmt.Sprintf("00000000-0000-4000-8000-%012d", f.seq)
		*list = append(*list, item)
		writeJSONBody(w, 201, item)
	case "DELETE":
		if len(parts) != 2 {
			ironictest.Fault(w, 400, fmt.Sprintf("fake Ironic: DELETE of /v1/volume/%s names no one item", strings.Join(parts, "/")))
			return
		}
		if f.node["power_state"] != "power off" {
			ironictest.Fault(w, 400, fmt.Sprintf(`The requested action "volume target deletion" can not be performed on node "%s" while it is in state "%s".`, nodeUUID, f.node["power_state"]))
			return
		}
		for i, it := range *list {
			if it["uuid"] == parts[1] {
				*list = append((*list)[:i], (*list)[i+1:]...)
				w.WriteHeader(204)
				return
			}
		}
		ironictest.Fault(w, 404, "Volume "+parts[1]+" could not be found.")
	}
}

// stubCinder finds volumes by ID or name.
type stubCinder struct{ vols []*cinderapi.Volume }

func (s *stubCinder) FindVolume(_ context.Context, ref string) (*cinderapi.Volume, error) {
	for _, v := range s.vols {
		if v.ID == ref || v.Name == ref {
			return v, nil
		}
	}
	return nil, fmt.Errorf("no volume %s", ref)
}

func (s *stubCinder) Flow() cinderapi.Flow { return nil }

type bfvFixture struct {
	ironic *bfvIronic
	cinder *stubCinder
	m      *Manager
}

func newBFVFixture(t *testing.T) *bfvFixture {
	fi := newBFVIronic()
	srv := httptest.NewServer(fi)
	t.Cleanup(srv.Close)
	sc := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{}, Endpoint: srv.URL + "/"}
	cs := &stubCinder{vols: []*cinderapi.Volume{{ID: volID, Name: "boot-vol", Size: 1, Status: "available"}}}
	return &bfvFixture{ironic: fi, cinder: cs, m: &Manager{Cinder: cs, Ironic: sc, UndoTimeout: 5 * time.Second}}
}

const initiator = "iqn.2004-10.com.example:node-1"

func (f *bfvFixture) opts(mod func(*BootOpts)) BootOpts {
	o := BootOpts{Node: "node-1", Volume: "boot-vol", Initiator: initiator, Wait: 2 * time.Second, Poll: time.Millisecond}
	if mod != nil {
		mod(&o)
	}
	return o
}

// snapshot is the node's state that boot-from-volume changes, as JSON.
func (f *bfvFixture) snapshot(t *testing.T) string {
	f.ironic.mu.Lock()
	defer f.ironic.mu.Unlock()
	b, err := json.Marshal([]any{f.ironic.node, f.ironic.conns, f.ironic.targets})
	require.NoError(t, err)
	return string(b)
}

func TestBootFromVolumeAndUndo(t *testing.T) {
	ctx := context.Background()
	f := newBFVFixture(t)
	before := f.snapshot(t)

	res, err := f.m.BootFromVolume(ctx, f.opts(nil))
	require.NoError(t, err)
	require.Equal(t, volID, res.VolumeID)
	require.Equal(t, initiator, res.Initiator)
	require.Len(t, res.Changes, 5, "connector, target, 2 interfaces, capability: %v", res.Changes)
	require.Equal(t, []string{"baremetal node deploy " + nodeUUID}, res.Next)
	n := f.ironic.node
	require.Equal(t, "cinder", n["storage_interface"])
	require.Equal(t, "ipxe", n["boot_interface"])
	require.Equal(t, "boot_mode:bios,iscsi_boot:True", n["properties"].(map[string]any)["capabilities"])
	require.Len(t, f.ironic.conns, 1)
	require.Len(t, f.ironic.targets, 1)
	require.EqualValues(t, 0, f.ironic.targets[0]["boot_index"])
	require.Equal(t, volID, f.ironic.targets[0]["volume_id"])
	rec := n["extra"].(map[string]any)[RecordKey].(map[string]any)
	require.Equal(t, "noop", rec["storage_interface_was"])
	require.Equal(t, "", rec["iscsi_boot_was"])

	changes := len(f.ironic.changes())
	res, err = f.m.BootFromVolume(ctx, f.opts(nil))
	require.NoError(t, err, "a second run")
	require.Empty(t, res.Changes)
	require.Len(t, f.ironic.changes(), changes, "the second run changed nothing")

	ures, err := f.m.UndoBootFromVolume(ctx, f.opts(nil))
	require.NoError(t, err)
	require.Len(t, ures.Changes, 3, "%v", ures.Changes)
	require.JSONEq(t, before, f.snapshot(t), "undo leaves the node as it was")

	ures, err = f.m.UndoBootFromVolume(ctx, f.opts(nil))
	require.NoError(t, err, "undo again: nothing recorded is success")
	require.Empty(t, ures.Changes)
}

func TestBootFromVolumeKeepsWhatBrickDidNotMake(t *testing.T) {
	ctx := context.Background()
	f := newBFVFixture(t)
	f.ironic.conns = []map[string]any{{"uuid": "00000000-0000-4000-8000-0000000000c1", "node_uuid": nodeUUID, "type": "iqn", "connector_id": initiator}}
	f.ironic.targets = []map[string]any{{"uuid": "00000000-0000-4000-8000-0000000000d1", "node_uuid": nodeUUID, "volume_type": "iscsi", "boot_index": 0, "volume_id": volID}}
	f.ironic.node["storage_interface"] = "cinder"
	f.ironic.node["properties"] = map[string]any{"capabilities": map[string]any{"iscsi_boot": "True"}}
	before := f.snapshot(t)

	res, err := f.m.BootFromVolume(ctx, f.opts(func(o *BootOpts) { o.Initiator = "" }))
	require.NoError(t, err)
	require.Equal(t, []string{"set boot_interface to ipxe"}, res.Changes)
	_, err = f.m.UndoBootFromVolume(ctx, f.opts(nil))
	require.NoError(t, err)
	require.JSONEq(t, before, f.snapshot(t), "the user's connector, target, interface and capability stay")
}

func TestBootFromVolumeDeploy(t *testing.T) {
	ctx := context.Background()
	f := newBFVFixture(t)
	before := f.snapshot(t)
	res, err := f.m.BootFromVolume(ctx, f.opts(func(o *BootOpts) { o.Deploy = true }))
	require.NoError(t, err)
	require.Equal(t, "active", res.Node.ProvisionState)
	require.Empty(t, res.Next)
	require.True(t, res.Record.Deployed)

	// Ironic's deploy attached the volume to the node (legacy os-attach:
	// server_id is the node): that is the expected state now.
	f.cinder.vols[0].Status = "in-use"
	f.cinder.vols[0].Attachments = []volumes.Attachment{{ServerID: nodeUUID}}
	res, err = f.m.BootFromVolume(ctx, f.opts(func(o *BootOpts) { o.Deploy = true }))
	require.NoError(t, err, "active and set up: nothing to do")
	require.Empty(t, res.Changes)

	ures, err := f.m.UndoBootFromVolume(ctx, f.opts(nil))
	require.NoError(t, err)
	require.Equal(t, "undeployed the node", ures.Changes[0])
	require.JSONEq(t, before, f.snapshot(t))
}

func TestBootFromVolumeRollsBack(t *testing.T) {
	for _, tc := range []struct {
		name, fail string
		code       int
		deploy     bool
		want       string
	}{
		{"target create", "POST /v1/volume/targets", 409, false, "create volume target"},
		{"node patch", "PATCH /v1/nodes/", 400, false, "injected failure"},
		{"deploy refused", "PUT /v1/nodes/", 400, true, "injected failure"},
		{"deploy failed", "", 0, true, "iPXE boot failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newBFVFixture(t)
			before := f.snapshot(t)
			if tc.fail != "" {
				f.ironic.fail[tc.fail] = tc.code
			} else {
				f.ironic.deployTo = "deploy failed"
			}
			_, err := f.m.BootFromVolume(context.Background(), f.opts(func(o *BootOpts) { o.Deploy = tc.deploy }))
			require.ErrorContains(t, err, tc.want)
			require.JSONEq(t, before, f.snapshot(t), "everything undone")
		})
	}
}

func TestBootFromVolumeRefusesBeforeChanging(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(f *bfvFixture, o *BootOpts)
		want string
	}{
		{"unknown node", func(_ *bfvFixture, o *BootOpts) { o.Node = "node-2" }, "could not be found"},
		{"old API", func(f *bfvFixture, _ *BootOpts) { f.ironic.maxVersion = "1.31" }, "serves API 1.31 at most"},
		{"no cinder interface", func(f *bfvFixture, _ *BootOpts) { f.ironic.storage = []string{"noop"} }, "no cinder storage interface enabled"},
		{"powered on", func(f *bfvFixture, _ *BootOpts) { f.ironic.node["power_state"] = "power on" }, "is powered on"},
		{"deploying", func(f *bfvFixture, _ *BootOpts) { f.ironic.node["provision_state"] = "deploying" }, `is "deploying"`},
		{"active", func(f *bfvFixture, _ *BootOpts) { f.ironic.node["provision_state"] = "active" }, "undeploy it first"},
		{"deploy without a port", func(f *bfvFixture, o *BootOpts) { f.ironic.ports = nil; o.Deploy = true }, "has no port"},
		{"deploy with the fake deploy interface", func(f *bfvFixture, o *BootOpts) { f.ironic.node["deploy_interface"] = "fake"; o.Deploy = true }, "has the fake deploy interface"},
		{"deploy from manageable", func(f *bfvFixture, o *BootOpts) { f.ironic.node["provision_state"] = "manageable"; o.Deploy = true }, "needs it available"},
		{"volume in use", func(f *bfvFixture, _ *BootOpts) {
			f.cinder.vols[0].Status = "in-use"
			f.cinder.vols[0].Attachments = []volumes.Attachment{{ServerID: "other"}}
		}, "is in-use, not available"},
		{"volume attached to the undeployed node", func(f *bfvFixture, o *BootOpts) {
			f.cinder.vols[0].Status = "in-use"
			f.cinder.vols[0].Attachments = []volumes.Attachment{{ServerID: nodeUUID}}
			o.Deploy = true
		}, "detach it in Cinder first"},
		{"volume exported by attach-volume", func(f *bfvFixture, _ *BootOpts) {
			f.cinder.vols[0].Status = "in-use"
			f.cinder.vols[0].Attachments = []volumes.Attachment{{HostName: nodeUUID}}
		}, "brick ironic detach-volume"},
		{"volume size 0", func(f *bfvFixture, _ *BootOpts) { f.cinder.vols[0].Size = 0 }, "too small"},
		{"no initiator", func(_ *bfvFixture, o *BootOpts) { o.Initiator = "" }, "no iqn, wwpn or wwnn"},
		{"bad initiator", func(_ *bfvFixture, o *BootOpts) { o.Initiator = "iqn.x;rm" }, "--initiator"},
		{"another iqn", func(f *bfvFixture, _ *BootOpts) {
			f.ironic.conns = []map[string]any{{"uuid": "00000000-0000-4000-8000-0000000000c1", "node_uuid": nodeUUID, "type": "iqn", "connector_id": "iqn.2004-10.com.example:other"}}
		}, "has iqn connector"},
		{"boot index 0 taken", func(f *bfvFixture, _ *BootOpts) {
			f.ironic.targets = []map[string]any{{"uuid": "00000000-0000-4000-8000-0000000000d1", "node_uuid": nodeUUID, "boot_index": 0, "volume_id": "11111111-2222-4333-8444-555555555555"}}
		}, "boots from volume 11111111"},
		{"volume at index 1", func(f *bfvFixture, _ *BootOpts) {
			f.ironic.targets = []map[string]any{{"uuid": "00000000-0000-4000-8000-0000000000d1", "node_uuid": nodeUUID, "boot_index": 1, "volume_id": volID}}
		}, "must be 0"},
		{"record of another volume", func(f *bfvFixture, _ *BootOpts) {
			f.ironic.node["extra"] = map[string]any{RecordKey: map[string]any{"volume_id": "11111111-2222-4333-8444-555555555555"}}
		}, "undo that first"},
		{"hostile record", func(f *bfvFixture, _ *BootOpts) {
			f.ironic.node["extra"] = map[string]any{RecordKey: map[string]any{"volume_id": volID, "target_uuid": "../../nodes"}}
		}, "is not brick's record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newBFVFixture(t)
			o := f.opts(nil)
			tc.set(f, &o)
			_, err := f.m.BootFromVolume(context.Background(), o)
			require.ErrorContains(t, err, tc.want)
			require.Empty(t, f.ironic.changes(), "nothing changed")
		})
	}
}

func TestUndoRefusals(t *testing.T) {
	ctx := context.Background()
	f := newBFVFixture(t)
	_, err := f.m.BootFromVolume(ctx, f.opts(nil))
	require.NoError(t, err)
	f.ironic.node["power_state"] = "power on"
	_, err = f.m.UndoBootFromVolume(ctx, f.opts(nil))
	require.ErrorIs(t, err, ErrNotReady)
	require.ErrorContains(t, err, "power it off first")

	f.ironic.node["provision_state"] = "active"
	_, err = f.m.UndoBootFromVolume(ctx, f.opts(nil))
	require.ErrorContains(t, err, "brick did not deploy it")

	f.ironic.node["provision_state"], f.ironic.node["power_state"] = "available", "power off"
	f.ironic.targets = nil // deleted by hand meanwhile: gone counts as done
	_, err = f.m.UndoBootFromVolume(ctx, f.opts(nil))
	require.NoError(t, err)
	require.Empty(t, f.ironic.conns)
	require.NotContains(t, f.ironic.node["extra"], RecordKey)
}

func TestCapabilityHelpers(t *testing.T) {
	for _, tc := range []struct {
		cur   any
		value string
		want  any
	}{
		{"a:1,iscsi_boot:True,b:2", "", "a:1,b:2"},
		{"a:1", "False", "a:1,iscsi_boot:False"},
		{map[string]any{"iscsi_boot": "True", "a": "1"}, "", map[string]any{"a": "1"}},
		{nil, "", ""},
	} {
		got, err := setCapability(tc.cur, BootCapability, tc.value)
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
	v, ok, err := capabilityValue(map[string]any{"iscsi_boot": true}, BootCapability)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "true", v)
	_, _, err = ReadBootRecord(&nodes.Node{UUID: nodeUUID, Extra: map[string]any{RecordKey: "junk"}})
	require.ErrorIs(t, err, ErrNotReady)
}
