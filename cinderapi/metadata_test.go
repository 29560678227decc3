package cinderapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/cinderapi"
)

func TestVolumeMetadata(t *testing.T) {
	var got []string
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/" {
			w.WriteHeader(300)
			_ = json.NewEncoder(w).Encode(map[string]any{"versions": []any{map[string]any{"id": "v3.0", "status": "CURRENT", "version": "3.70", "min_version": "3.0"}}})
			return
		}
		got = append(got, r.Method+" "+r.URL.Path)
		switch {
		case r.Method == "POST":
			_ = json.NewDecoder(r.Body).Decode(&body)
			_ = json.NewEncoder(w).Encode(body)
		case r.URL.Path == "/v3/p/volumes/"+newVol+"/metadata/gone":
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"itemNotFound":{"message":"Metadata item was not found","code":404}}`))
		default:
			w.WriteHeader(200)
		}
	}))
	t.Cleanup(srv.Close)
	pc := &gophercloud.ProviderClient{HTTPClient: *srv.Client()}
	sc := &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: srv.URL + "/v3/p/", Type: "block-storage"}
	client, err := cinderapi.NewClient(context.Background(), sc, "")
	require.NoError(t, err)

	require.NoError(t, client.SetVolumeMetadata(context.Background(), newVol, map[string]string{"k": "v"}))
	require.Equal(t, map[string]any{"metadata": map[string]any{"k": "v"}}, body)
	require.NoError(t, client.DeleteVolumeMetadata(context.Background(), newVol, "k"))
	require.NoError(t, client.DeleteVolumeMetadata(context.Background(), newVol, "gone"), "gone already is success")
	require.Equal(t, []string{"POST /v3/p/volumes/" + newVol + "/metadata", "DELETE /v3/p/volumes/" + newVol + "/metadata/k",
		"DELETE /v3/p/volumes/" + newVol + "/metadata/gone"}, got)
}
