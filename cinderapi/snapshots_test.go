package cinderapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/cinderapi"
)

const newSnap = "6e1d7b8f-2222-4c3f-8e8c-2a3b4c5d6e7f"

// snapCinder plays snapshot create, list and delete, and attachment
// create: a snapshot moves from "creating" to final after two GETs.
type snapCinder struct {
	mu      sync.Mutex
	final   string
	status  string
	gets    int
	bodies  map[string]map[string]any // by path
	queries []string
}

func (c *snapCinder) snapshot() map[string]any {
	return map[string]any{"id": newSnap, "name": "s1", "volume_id": newVol, "status": c.status, "size": 2, "created_at": "2026-12-05T09:00:00.000000"}
}

func (c *snapCinder) serve(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	p := strings.TrimPrefix(r.URL.Path, "/v3/p")
	switch {
	case r.URL.Path == "/":
		w.WriteHeader(300)
		_ = json.NewEncoder(w).Encode(map[string]any{"versions": []any{map[string]any{"id": "v3.0", "status": "CURRENT", "version": "3.70", "min_version": "3.0"}}})
	case r.Method == "POST":
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		c.bodies[p] = b
		if p == "/attachments" {
			_ = json.NewEncoder(w).Encode(map[string]any{"attachment": map[string]any{"id": newSnap, "status": "reserved", "instance": "i"}})
			return
		}
		c.status = "creating"
		w.WriteHeader(202)
		_ = json.NewEncoder(w).Encode(map[string]any{"snapshot": c.snapshot()})
	case r.Method == "DELETE":
		c.status = ""
		w.WriteHeader(202)
	case p == "/snapshots/detail":
		c.queries = append(c.queries, r.URL.RawQuery)
		_ = json.NewEncoder(w).Encode(map[string]any{"snapshots": []any{c.snapshot(), map[string]any{"id": "x", "name": "s1-other"}}})
	case r.Method == "GET":
		if c.gets++; c.status == "" {
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"itemNotFound":{"message":"Snapshot could not be found.","code":404}}`))
			return
		}
		if c.status == "creating" && c.gets >= 2 {
			c.status = c.final
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"snapshot": c.snapshot()})
	}
}

func newSnapClient(t *testing.T, c *snapCinder) *cinderapi.Client {
	t.Helper()
	c.bodies = map[string]map[string]any{}
	srv := httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(srv.Close)
	pc := &gophercloud.ProviderClient{HTTPClient: *srv.Client()}
	sc := &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: srv.URL + "/v3/p/", Type: "block-storage"}
	client, err := cinderapi.NewClient(context.Background(), sc, "")
	require.NoError(t, err)
	client.PollGap = 5 * time.Millisecond // the fakes answer at once
	return client
}

func TestCreateSnapshot(t *testing.T) {
	for _, tc := range []struct{ name, final, wantErr string }{
		{"available", "available", ""},
		{"error", "error", "could not create snapshot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &snapCinder{final: tc.final}
			client := newSnapClient(t, c)
			s, err := client.CreateSnapshot(context.Background(), newVol, "s1", map[string]string{"k": "v"}, 10*time.Second)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "available", s.Status)
			require.Equal(t, 2026, s.CreatedAt.Year())
			body := c.bodies["/snapshots"]["snapshot"].(map[string]any)
			require.Equal(t, true, body["force"], "in-use volumes too")
			require.Equal(t, newVol, body["volume_id"])
		})
	}
}

func TestSnapshotsListAndDelete(t *testing.T) {
	c := &snapCinder{final: "available", status: "available"}
	client := newSnapClient(t, c)
	list, err := client.Snapshots(context.Background(), "s1", newVol)
	require.NoError(t, err)
	require.Len(t, list, 1, "only the exact name")
	require.Contains(t, c.queries[0], "name=s1")
	require.Contains(t, c.queries[0], "volume_id="+newVol)
	require.NoError(t, client.DeleteSnapshot(context.Background(), newSnap, 10*time.Second))
	require.NoError(t, client.DeleteSnapshot(context.Background(), newSnap, 10*time.Second), "gone is success")
}

func TestReserveAttachment(t *testing.T) {
	c := &snapCinder{}
	client := newSnapClient(t, c)
	a, err := client.ReserveAttachment(context.Background(), newVol, "ro")
	require.NoError(t, err)
	require.Equal(t, newSnap, a.ID)
	body := c.bodies["/attachments"]["attachment"].(map[string]any)
	require.Equal(t, map[string]any{"volume_uuid": newVol, "mode": "ro"}, body, "no instance_uuid: Zed asks Nova before deleting such an attachment")
}
