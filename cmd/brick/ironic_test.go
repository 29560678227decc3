package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/ironicattach"
)

const testNode = "c30b0d71-fb33-4e21-a129-f02b2b817285"

// fakeIronic answers the calls the ironic commands make, in Ironic 21.4's
// shapes, for one node "node-1"; it does not mask secrets, so the tests
// see brick's own masking.
type fakeIronic struct {
	mu         sync.Mutex
	connectors []map[string]any
	targets    []map[string]any
	versions   []string
}

func (f *fakeIronic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.versions = append(f.versions, r.Header.Get("X-OpenStack-Ironic-API-Version"))
	w.Header().Set("Content-Type", "application/json")
	switch p := r.URL.Path; {
	case r.Method == "GET" && (p == "/v1/nodes/node-1" || p == "/v1/nodes/"+testNode):
		_ = json.NewEncoder(w).Encode(map[string]any{"uuid": testNode, "name": "node-1", "power_state": "power off"})
	case r.Method == "GET" && (p == "/v1/nodes/"+testNode+"/volume/connectors" || p == "/v1/volume/connectors"):
		_ = json.NewEncoder(w).Encode(map[string]any{"connectors": f.connectors})
	case r.Method == "GET" && p == "/v1/volume/targets":
		_ = json.NewEncoder(w).Encode(map[string]any{"targets": f.targets})
	case r.Method == "GET" && strings.HasPrefix(p, "/v1/volume/targets/"):
		_ = json.NewEncoder(w).Encode(f.targets[0])
	case r.Method == "POST" && p == "/v1/volume/connectors":
		var c map[string]any
		_ = json.NewDecoder(r.Body).Decode(&c)
		c["uuid"] = fmt.Sprintf("00000000-0000-4000-8000-%012d", len(f.connectors)+1)
		f.connectors = append(f.connectors, c)
		w.WriteHeader(201)
		_ = json.NewEncoder(w).Encode(c)
	default:
		w.WriteHeader(404)
		_, _ = w.Write([]byte(`{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Node nosuch could not be found.\", \"debuginfo\": null}"}`))
	}
}

func newFakeIronicServer(t *testing.T) (*fakeIronic, string) {
	f := &fakeIronic{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func TestIronicRegisterInProcess(t *testing.T) {
	root := fixtureHost(t)
	hosttest.WriteFile(t, root, "/sys/class/net/eth0/address", "52:54:00:12:34:56\n")
	f, url := newFakeIronicServer(t)
	env := []string{"BRICK_CONFIG=", "OS_AUTH_TYPE=noauth", "BRICK_IRONIC_ENDPOINT=" + url, "BRICK_HOST_ROOT=" + root}

	out, errOut, code := runBrick(t, env, "ironic", "register", "--node", "node-1", "-f", "json")
	require.Equal(t, 0, code, errOut)
	var rows []map[string]string
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	got := map[string]string{}
	for _, r := range rows {
		require.Equal(t, "created", r["Action"])
		got[r["Type"]] = r["Connector ID"]
	}
	require.Equal(t, map[string]string{
		"iqn": "iqn.1993-08.org.debian:01:fixture", "wwpn": "10000090fa1b2c3d", "wwnn": "20000090fa1b2c3d",
		"ip": "10.0.2.15", "mac": "52:54:00:12:34:56",
	}, got)
	for _, c := range f.connectors {
		require.Equal(t, testNode, c["node_uuid"], "bodies carry the UUID, not the name")
	}
	for _, v := range f.versions {
		require.Equal(t, "1.32", v)
	}

	out, errOut, code = runBrick(t, env, "ironic", "register", "--node", "node-1", "-f", "value", "-c", "Action")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, strings.Repeat("kept\n", 5), out)
	require.Len(t, f.connectors, 5)

	_, errOut, code = runBrick(t, env, "ironic", "register", "--node", "nosuch")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "Node nosuch could not be found")
	_, errOut, code = runBrick(t, env, "ironic", "register", "--node", "../x")
	require.Equal(t, 2, code, errOut)
}

func TestIronicTargetMasksAndColumns(t *testing.T) {
	f, url := newFakeIronicServer(t)
	f.targets = []map[string]any{{
		"uuid": "60102a56-7eb9-4ffe-8367-02e20d7e6773", "node_uuid": testNode, "volume_type": "iscsi", "boot_index": 0,
		"volume_id": "7b6c1a6e-3f1e-4a53-b8f1-2f5e0c0d9a11", "created_at": "2026-12-02T12:58:35.493390+00:00", "updated_at": nil,
		"properties": map[string]any{"target_iqn": "iqn.x:y", "auth_password": "clear-S3CRET", "discovery_auth_password": "d1sc"},
	}}
	env := []string{"BRICK_CONFIG=", "OS_AUTH_TYPE=noauth", "BRICK_IRONIC_ENDPOINT=" + url}

	out, errOut, code := runBrick(t, env, "ironic", "target", "show", "60102a56-7eb9-4ffe-8367-02e20d7e6773", "-f", "json")
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, out, "clear-S3CRET")
	require.NotContains(t, out, "d1sc")
	require.Contains(t, out, `"auth_password": "******"`)
	require.Contains(t, out, `"created_at": "2026-12-02T12:58:35Z"`)
	require.Contains(t, out, `"updated_at": null`)

	out, errOut, code = runBrick(t, env, "ironic", "target", "list", "--long", "-f", "value", "-c", "Properties")
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, out, "clear-S3CRET")

	out, errOut, code = runBrick(t, env, "ironic", "target", "list")
	require.Equal(t, 0, code, errOut)
	for _, col := range []string{"UUID", "Node UUID", "Driver Volume Type", "Boot Index", "Volume ID"} {
		require.Contains(t, out, col)
	}
	require.NotContains(t, out, "Properties")

	for _, args := range [][]string{
		{"ironic", "target", "list", "--fields", "bogus"},
		{"ironic", "target", "list", "--long", "--fields", "uuid"},
		{"ironic", "target", "list", "--sort", "boot_index:up"},
		{"ironic", "target", "create", "--node", "node-1", "--type", "iscsi", "--boot-index", "-1", "--volume-id", "7b6c1a6e-3f1e-4a53-b8f1-2f5e0c0d9a11"},
		{"ironic", "target", "create", "--node", "node-1", "--type", "iscsi", "--boot-index", "0", "--volume-id", "7b6c1a6e-3f1e-4a53-b8f1-2f5e0c0d9a11", "--property", "novalue"},
		{"ironic", "connector", "create", "--node", "node-1", "--type", "iqn"},
		{"ironic", "target", "unset", "60102a56-7eb9-4ffe-8367-02e20d7e6773"},
	} {
		_, errOut, code := runBrick(t, env, args...)
		require.Equal(t, 2, code, "%v: %s", args, errOut)
	}
}

func TestParseKV(t *testing.T) {
	m, err := ironicattach.ParseKV("extra", []string{"a=1", "b=x=y", "c=true", "d={\"k\":[1]}", "e="})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"a": float64(1), "b": "x=y", "c": true, "d": map[string]any{"k": []any{float64(1)}}, "e": ""}, m)
	_, err = ironicattach.ParseKV("extra", []string{"=v"})
	require.Error(t, err)
}

func FuzzParseKV(f *testing.F) {
	for _, s := range []string{"a=1", "b=x=y", "=v", "k", `d={"k":[1]}`, "e=\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ironicattach.ParseKV("extra", []string{s})
		if err != nil {
			return
		}
		k, _, _ := strings.Cut(s, "=")
		if _, ok := m[k]; !ok || len(m) != 1 || k == "" {
			t.Fatalf("%q parsed to %v", s, m)
		}
	})
}
