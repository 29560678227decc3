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

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/cinderapi/cindertest"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ironicapi/ironictest"
)

const (
	nodeUUID = "c30b0d71-fb33-4e21-a129-f02b2b817285"
	volID    = "7b6c1a6e-3f1e-4a53-b8f1-2f5e0c0d9a11"
)

// fakeIronic serves one node with the JSON shapes of Ironic 21.4: its
// connectors, its targets, and the power-state rule for deletes.
type fakeIronic struct {
	mu         sync.Mutex
	power      string
	connectors []map[string]any
	targets    []map[string]any
	failCreate int // HTTP status for POST /volume/targets, 0: succeed
	seq        int
}

func (f *fakeIronic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	p := r.URL.Path
	switch {
	case r.Method == "GET" && (p == "/v1/nodes/node-1" || p == "/v1/nodes/"+nodeUUID):
		_ = json.NewEncoder(w).Encode(map[string]any{"uuid": nodeUUID, "name": "node-1", "power_state": f.power, "properties": map[string]any{}})
	case r.Method == "GET" && p == "/v1/nodes/"+nodeUUID+"/volume/connectors":
		_ = json.NewEncoder(w).Encode(map[string]any{"connectors": f.connectors})
	case r.Method == "GET" && p == "/v1/nodes/"+nodeUUID+"/volume/targets":
		_ = json.NewEncoder(w).Encode(map[string]any{"targets": f.targets})
	case r.Method == "POST" && p == "/v1/volume/targets":
		if f.failCreate != 0 {
			ironictest.Fault(w, f.failCreate, "A volume target with boot index '0' for the same node already exists.")
			return
		}
		var t map[string]any
		_ = json.NewDecoder(r.Body).Decode(&t)
		f.seq++
		t["uuid"] = fmt.Sprintf("00000000-0000-4000-8000-%012d", f.seq)
		if props, ok := t["properties"].(map[string]any); ok {
			for k := range props {
				if strings.Contains(k, "password") {
					props[k] = "******"
				}
			}
		}
		f.targets = append(f.targets, t)
		w.WriteHeader(201)
		_ = json.NewEncoder(w).Encode(t)
	case r.Method == "DELETE" && strings.HasPrefix(p, "/v1/volume/targets/"):
		if f.power != "power off" {
			ironictest.Fault(w, 400, fmt.Sprintf(`The requested action "volume target deletion" can not be performed on node "%s" while it is in state "%s".`, nodeUUID, f.power))
			return
		}
		id := strings.TrimPrefix(p, "/v1/volume/targets/")
		for i, t := range f.targets {
			if t["uuid"] == id {
				f.targets = append(f.targets[:i], f.targets[i+1:]...)
				w.WriteHeader(204)
				return
			}
		}
		ironictest.Fault(w, 404, "Volume target "+id+" could not be found.")
	case r.Method == "GET" && strings.Count(p, "/") == 3 && strings.HasPrefix(p, "/v1/nodes/"):
		ironictest.Fault(w, 404, "Node "+strings.TrimPrefix(p, "/v1/nodes/")+" could not be found.")
	default:
		w.WriteHeader(404)
		_, _ = w.Write([]byte(`{"error_message": "{\"code\": 404, \"title\": \"Not Found\", \"description\": \"\"}"}`))
	}
}

type fixture struct {
	ironic  *fakeIronic
	cinder  *cindertest.Server
	m       *Manager
	secrets *host.Redactor
}

func newFixture(t *testing.T, mv string) *fixture {
	fi := &fakeIronic{power: "power off", connectors: []map[string]any{
		{"uuid": "00000000-0000-4000-8000-0000000000c1", "node_uuid": nodeUUID, "type": "iqn", "connector_id": "iqn.2004-10.com.example:node-1"},
		{"uuid": "00000000-0000-4000-8000-0000000000c2", "node_uuid": nodeUUID, "type": "mac", "connector_id": "52:54:00:ab:cd:ef"},
	}}
	srv := httptest.NewServer(fi)
	t.Cleanup(srv.Close)
	cs := cindertest.New(t)
	cs.AddVolume(volID, "boot-vol")
	c, err := cinderapi.NewClient(context.Background(), cs.ServiceClient(), mv)
	require.NoError(t, err)
	red := host.NewRedactor()
	sc := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{}, Endpoint: srv.URL + "/"}
	return &fixture{ironic: fi, cinder: cs, secrets: red, m: &Manager{Cinder: c, Ironic: sc, Secrets: red}}
}

func TestAttachDetach(t *testing.T) {
	for _, mv := range []string{"", "3.0"} { // v3 attachments, legacy flow
		t.Run("microversion "+mv, func(t *testing.T) {
			f := newFixture(t, mv)
			ctx := context.Background()
			res, err := f.m.AttachVolume(ctx, AttachOpts{Node: "node-1", Volume: "boot-vol", BootIndex: 0})
			require.NoError(t, err)
			require.Equal(t, nodeUUID, res.Node.UUID)
			require.Equal(t, "iscsi", res.Target.VolumeType)
			require.Equal(t, "iqn.2010-10.org.openstack:volume-"+volID, res.Target.Properties["target_iqn"])
			require.Equal(t, "iqn.2004-10.com.example:node-1", res.Connector["initiator"])
			require.Equal(t, nodeUUID, res.Connector["host"])
			require.Equal(t, "p=***", f.secrets.Redact("p=chap-SECRET-pw"), "the CHAP secret is registered for masking")
			status, n := f.cinder.Status(volID)
			require.Equal(t, "in-use", status)
			require.Equal(t, 1, n)
			require.Len(t, f.ironic.targets, 1)

			f.ironic.power = "power on"
			_, err = f.m.DetachVolume(ctx, DetachOpts{Node: "node-1", Volume: volID})
			require.ErrorIs(t, err, apierr.ErrInvalidState)
			require.ErrorContains(t, err, "Cinder was not touched")
			status, _ = f.cinder.Status(volID)
			require.Equal(t, "in-use", status)

			f.ironic.power = "power off"
			dres, err := f.m.DetachVolume(ctx, DetachOpts{Node: "node-1", Volume: "boot-vol"})
			require.NoError(t, err)
			require.Len(t, dres.DeletedTargets, 1)
			require.Len(t, dres.Detached, 1)
			status, n = f.cinder.Status(volID)
			require.Equal(t, "available", status)
			require.Zero(t, n)
			require.Zero(t, f.cinder.Exports())
			require.Empty(t, f.ironic.targets)

			dres, err = f.m.DetachVolume(ctx, DetachOpts{Node: "node-1", Volume: "boot-vol"})
			require.NoError(t, err, "nothing left is success")
			require.Empty(t, dres.DeletedTargets)
			require.Empty(t, dres.Detached)
		})
	}
}

func TestAttachRollsBack(t *testing.T) {
	for _, mv := range []string{"", "3.0"} {
		t.Run("microversion "+mv, func(t *testing.T) {
			f := newFixture(t, mv)
			f.ironic.failCreate = 409
			_, err := f.m.AttachVolume(context.Background(), AttachOpts{Node: nodeUUID, Volume: volID})
			require.ErrorIs(t, err, apierr.ErrConflict)
			status, n := f.cinder.Status(volID)
			require.Equal(t, "available", status, "Cinder put back")
			require.Zero(t, n)
			require.Zero(t, f.cinder.Exports(), "no export leaked")
		})
	}
}

func TestAttachRefusals(t *testing.T) {
	ctx := context.Background()
	t.Run("no initiator", func(t *testing.T) {
		f := newFixture(t, "")
		f.ironic.connectors = f.ironic.connectors[1:]
		_, err := f.m.AttachVolume(ctx, AttachOpts{Node: "node-1", Volume: volID})
		require.ErrorIs(t, err, ErrNoInitiator)
		require.Empty(t, f.cinder.Ops()[1:], "Cinder not asked to export")
	})
	t.Run("boot index taken", func(t *testing.T) {
		f := newFixture(t, "")
		f.ironic.targets = []map[string]any{{"uuid": "00000000-0000-4000-8000-0000000000t1", "node_uuid": nodeUUID, "boot_index": 0, "volume_id": "11111111-2222-4333-8444-555555555555"}}
		_, err := f.m.AttachVolume(ctx, AttachOpts{Node: "node-1", Volume: volID})
		require.ErrorContains(t, err, "uses boot index 0 already")
		status, _ := f.cinder.Status(volID)
		require.Equal(t, "available", status)
	})
	t.Run("volume in use", func(t *testing.T) {
		f := newFixture(t, "")
		f.cinder.SetStatus(volID, "in-use")
		_, err := f.m.AttachVolume(ctx, AttachOpts{Node: "node-1", Volume: volID})
		require.ErrorContains(t, err, "is in-use, not available")
	})
	t.Run("unknown node", func(t *testing.T) {
		f := newFixture(t, "")
		_, err := f.m.AttachVolume(ctx, AttachOpts{Node: "node-2", Volume: volID})
		require.ErrorIs(t, err, apierr.ErrNotFound)
	})
}
