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

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/cinderapi"
)

const extVol = "0b9a3c6e-6e8a-4b2e-9d7b-1f2a3b4c5d6e"

// extendCinder plays Cinder's os-extend on one in-use volume: the size
// changes after polls GETs, or the status turns to failStatus.
type extendCinder struct {
	mu         sync.Mutex
	max        string
	size       int
	status     string
	pending    int  // GETs until the extend completes
	polls      int  // GETs of the volume seen
	stuck      bool // the extend never completes
	target     int
	failStatus string
	extends    []string // microversion of each os-extend
}

func (c *extendCinder) serve(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	mv := strings.TrimPrefix(r.Header.Get("OpenStack-API-Version"), "volume ")
	switch {
	case r.URL.Path == "/":
		w.WriteHeader(300)
		_ = json.NewEncoder(w).Encode(map[string]any{"versions": []any{map[string]any{"id": "v3.0", "status": "CURRENT", "version": c.max, "min_version": "3.0"}}})
	case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/action"):
		var body struct {
			Extend struct {
				NewSize int `json:"new_size"`
			} `json:"os-extend"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		c.extends = append(c.extends, mv)
		c.target, c.status, c.pending = body.Extend.NewSize, "extending", 2
		w.WriteHeader(202)
	case r.Method == "GET":
		c.polls++
		if c.status == "extending" && !c.stuck {
			if c.pending--; c.pending <= 0 {
				c.status = "in-use"
				if c.failStatus != "" {
					c.status = c.failStatus
				} else {
					c.size = c.target
				}
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"volume": map[string]any{"id": extVol, "status": c.status, "size": c.size}})
	default:
		w.WriteHeader(404)
	}
}

func newExtendClient(t *testing.T, c *extendCinder, forced string) *cinderapi.Client {
	srv := httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(srv.Close)
	pc := &gophercloud.ProviderClient{HTTPClient: http.Client{Timeout: 5 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()}}
	pc.SetToken("brick:p")
	sc := &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: srv.URL + "/v3/p/", Type: "block-storage"}
	cl, err := cinderapi.NewClient(context.Background(), sc, forced)
	require.NoError(t, err)
	cl.PollGap = 5 * time.Millisecond // the fakes answer at once
	return cl
}

func TestExtendVolume(t *testing.T) {
	tests := []struct {
		name, max, forced, fail string
		size, want              int
		wantErr                 string
		wantMV                  []string
	}{
		{name: "grows and waits", max: "3.70", size: 1, want: 2, wantMV: []string{"3.54"}},
		{name: "negotiated below 3.42: sent at 3.42", max: "3.70", forced: "3.27", size: 1, want: 2, wantMV: []string{"3.42"}},
		{name: "already that size: nothing sent", max: "3.70", size: 2, want: 2},
		{name: "shrink refused", max: "3.70", size: 3, want: 2, wantErr: "volumes only grow"},
		{name: "old cloud: one line", max: "3.40", size: 1, want: 2, wantErr: "needs Block Storage API microversion 3.42 or later (Cinder Pike); this cloud offers up to 3.40"},
		{name: "Cinder fails the extend", max: "3.70", size: 1, want: 2, fail: "error_extending", wantErr: "status error_extending", wantMV: []string{"3.54"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := &extendCinder{max: tc.max, size: tc.size, status: "in-use", failStatus: tc.fail}
			cl := newExtendClient(t, fake, tc.forced)
			v, err := cl.ExtendVolume(context.Background(), extVol, tc.want, 10*time.Second)
			require.Equal(t, tc.wantMV, fake.extends)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.NotContains(t, err.Error(), "\n")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, v.Size)
			require.Equal(t, "in-use", v.Status)
		})
	}
}

func TestExtendVolumeTimesOut(t *testing.T) {
	fake := &extendCinder{max: "3.70", size: 1, status: "in-use"}
	cl := newExtendClient(t, fake, "")
	fake.mu.Lock()
	fake.failStatus, fake.stuck = "", true
	fake.mu.Unlock()
	_, err := cl.ExtendVolume(context.Background(), extVol, 2, 500*time.Millisecond)
	require.ErrorIs(t, err, apierr.ErrUnreachable)
	require.ErrorContains(t, err, "did not finish within 500ms (last seen: extending, 1 GiB)")
	fake.mu.Lock()
	require.Positive(t, fake.polls, "polled until the limit")
	fake.mu.Unlock()

	_, err = cl.ExtendVolume(context.Background(), extVol, 0, time.Second)
	require.ErrorIs(t, err, apierr.ErrInvalid)
}
