package cinderapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/cinderapi"
)

const newVol = "5d0c6a7e-1111-4b2e-9d7b-1f2a3b4c5d6e"

// createCinder plays volume create and delete: the status moves from
// "creating" to final after two GETs; a deleted volume is 404 after two.
type createCinder struct {
	mu      sync.Mutex
	final   string
	status  string
	gets    int
	deleted bool
	body    map[string]any
}

func (c *createCinder) serve(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/":
		w.WriteHeader(300)
		_ = json.NewEncoder(w).Encode(map[string]any{"versions": []any{map[string]any{"id": "v3.0", "status": "CURRENT", "version": "3.70", "min_version": "3.0"}}})
	case r.Method == "POST":
		_ = json.NewDecoder(r.Body).Decode(&c.body)
		c.status = "creating"
		w.WriteHeader(202)
		_ = json.NewEncoder(w).Encode(map[string]any{"volume": map[string]any{"id": newVol, "status": "creating", "size": 1}})
	case r.Method == "DELETE":
		if c.status == "" {
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"itemNotFound":{"message":"Volume could not be found.","code":404}}`))
			return
		}
		c.deleted, c.gets = true, 0
		w.WriteHeader(202)
	case r.Method == "GET":
		c.gets++
		if c.deleted && c.gets >= 2 {
			c.status = ""
		}
		if c.status == "" {
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"itemNotFound":{"message":"Volume could not be found.","code":404}}`))
			return
		}
		if c.status == "creating" && c.gets >= 2 {
			c.status = c.final
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"volume": map[string]any{"id": newVol, "status": c.status, "size": 1}})
	}
}

func newCreateClient(t *testing.T, c *createCinder) *cinderapi.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(srv.Close)
	pc := &gophercloud.ProviderClient{HTTPClient: *srv.Client()}
	sc := &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: srv.URL + "/v3/p/", Type: "block-storage"}
	client, err := cinderapi.NewClient(context.Background(), sc, "")
	require.NoError(t, err)
	client.PollGap = 5 * time.Millisecond // the fakes answer at once
	return client
}

func TestCreateVolume(t *testing.T) {
	tests := []struct {
		name    string
		final   string
		size    int
		wantErr string
	}{
		{name: "available", final: "available", size: 1},
		{name: "error status", final: "error", size: 1, wantErr: "could not create"},
		{name: "size zero", size: 0, wantErr: "must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &createCinder{final: tt.final}
			client := newCreateClient(t, c)
			v, err := client.CreateVolume(context.Background(), cinderapi.CreateVolumeOpts{
				Name: "v1", SizeGiB: tt.size, VolumeType: "fast", Metadata: map[string]string{"k": "v"},
			}, 10*time.Second)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, newVol, v.ID)
			require.Equal(t, "available", v.Status)
			vol := c.body["volume"].(map[string]any)
			require.Equal(t, "v1", vol["name"])
			require.Equal(t, "fast", vol["volume_type"])
		})
	}
}

func TestDeleteVolume(t *testing.T) {
	c := &createCinder{final: "available", status: "available"}
	client := newCreateClient(t, c)
	require.NoError(t, client.DeleteVolume(context.Background(), newVol, 10*time.Second))
	// Already gone is success.
	require.NoError(t, client.DeleteVolume(context.Background(), newVol, 10*time.Second))
}

func TestCreateVolumeTimeout(t *testing.T) {
	c := &createCinder{final: "creating"}
	client := newCreateClient(t, c)
	_, err := client.CreateVolume(context.Background(), cinderapi.CreateVolumeOpts{Name: "v1", SizeGiB: 1}, 300*time.Millisecond)
	require.Error(t, err)
	require.True(t, errors.Is(err, apierr.ErrUnreachable), err)
	require.True(t, strings.Contains(err.Error(), "last status: creating"), err)
}
