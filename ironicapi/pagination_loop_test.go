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

// An Ironic whose "next" links alternate between two markers must not keep
// a list paging forever: the walk stops at the first link back to a page
// it read. The bounds on endless distinct links and on records are the
// same guard's, tested without a server in osauth's TestPageGuard.
func TestListStopsOnPaginationLoop(t *testing.T) {
	const m1, m2 = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next := []string{m1, m2}[n.Add(1)%2]
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"connectors": [{"uuid": "%s"}], "next": "http://x/v1/volume/connectors?marker=%s"}`, m1, next)
	}))
	t.Cleanup(srv.Close)
	sc := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{}, Endpoint: srv.URL + "/"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := AllConnectors(ctx, ListConnectors(sc, nil), 0)
	require.ErrorContains(t, err, "pagination loop: next link goes back to marker")
	require.NoError(t, ctx.Err(), "the walk must stop by itself, not by the test's deadline")
	require.Equal(t, int64(3), n.Load(), "requests: the first page, then m2's and m1's; m2 again is the loop")
}
