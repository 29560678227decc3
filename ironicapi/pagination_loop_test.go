package ironicapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"
)

// An Ironic whose "next" links alternate between two markers (or never
// end) must not keep a list paging forever.
func TestListStopsOnPaginationLoop(t *testing.T) {
	const m1, m2 = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	for _, tc := range []struct {
		name string
		next func(n int64) string // marker of the next link of the nth page
		want string
	}{
		{"alternating markers", func(n int64) string { return []string{m1, m2}[n%2] }, "pagination loop"},
		{"endless distinct markers", func(n int64) string { return fmt.Sprintf("%08x-0000-4000-8000-000000000000", n) }, "more than 10000 pages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				i := n.Add(1)
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"connectors": [{"uuid": "%s"}], "next": "http://x/v1/volume/connectors?marker=%s"}`, m1, tc.next(i))
			}))
			t.Cleanup(srv.Close)
			sc := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{}, Endpoint: srv.URL + "/"}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := AllConnectors(ctx, ListConnectors(sc, nil), 0)
			require.ErrorContains(t, err, tc.want)
			require.NoError(t, ctx.Err(), "the walk must stop by itself, not by the test's deadline")
		})
	}
}
