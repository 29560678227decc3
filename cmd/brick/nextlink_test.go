package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/cinderapi/cindertest"
	"github.com/brick-storage/brick/host/hosttest"
)

// TestNextLinksStayHome: a Cinder whose list pages link to another origin
// (a TLS proxy's internal address, or a hostile server) never makes brick
// send its token there. Every Cinder name look-up and cleanup's
// attachment list still reach their later pages, on Cinder's own origin.
func TestNextLinksStayHome(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	var sunk atomic.Int32
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sunk.Add(1)
		t.Errorf("the sink got %s %s with token %q", r.Method, r.URL, r.Header.Get("X-Auth-Token"))
	}))
	defer sink.Close()
	const vol = "99999999-9999-4999-8999-999999999999"
	for _, tc := range []struct {
		args   []string
		record string // phase and step of a local record of vol, if any
		op     string // the list that must have reached page two ("": none is made)
	}{
		{[]string{"local-attach", "data"}, "", "list"},
		{[]string{"local-detach", "data"}, "", "list"},
		{[]string{"cleanup", "data"}, "", "list"},
		{[]string{"cleanup", vol}, `"phase":"attaching","step":"reserve"`, "attachment-list"},
		{[]string{"get-volume-paths", "data"}, "", "list"},
		// extend finds the volume by its record and asks Cinder by id.
		{[]string{"extend", "data", "--size", "2"}, `"phase":"attached","step":"done"`, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			root := fixtureHost(t)
			fake := cindertest.New(t)
			fake.PageSize, fake.LinkBase, fake.SubstringNames = 1, sink.URL, true
			fake.AddVolume("11111111-1111-4111-8111-111111111111", "data-old")
			fake.AddVolume("22222222-2222-4222-8222-222222222222", "data-new")
			fake.AddVolume(vol, "data")
			if tc.record != "" {
				fake.SetStatus(vol, "reserved")
				fake.AddAttachment(vol, "aaaaaaaa-0000-4000-8000-000000000001", "elsewhere", "attached")
				fake.AddAttachment(vol, "aaaaaaaa-0000-4000-8000-000000000002", "fixture-node", "reserved")
				hosttest.WriteFile(t, root, "/var/lib/brick/volumes/"+vol+".json", `{"version":1,"volume_id":"`+vol+`","volume_name":"data",`+tc.record+`,"flow":"v3",
"host_name":"fixture-node","mode":"rw","connector":{},"created_at":"2026-12-02T10:00:00Z","updated_at":"2026-12-02T10:00:00Z"}`)
			}
			code, out := runCaptured(t, &fakeTools{t: t, root: root}, append([]string{"--host-root", root, "--config", "/dev/null",
				"--os-auth-type", "noauth", "--cinder-endpoint", fake.Endpoint()}, tc.args...)...)
			t.Logf("exit %d\n%s", code, out)
			if tc.op != "" {
				paged := false
				for _, r := range fake.Requests() {
					paged = paged || (r.Op == tc.op && strings.Contains(r.Query, "marker="))
				}
				require.True(t, paged, "%s reached its second page on Cinder's origin: %v", tc.op, fake.Ops())
			}
			require.NotContains(t, out, "find volume data: no volume", "the look-up found the volume on a later page")
		})
	}
	require.Zero(t, sunk.Load(), "the sink saw no request")
}
