package dockerplugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
)

// lateCinder is a fake Cinder that answers 503 to its first down requests.
func lateCinder(t *testing.T, down int32) *httptest.Server {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= down {
			http.Error(w, "service unavailable", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"versions": [{"id": "v3.0", "status": "CURRENT"}]}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// reach is the connect step against the fake: an error until it answers.
func reach(url string) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return "", err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return "cinder", nil
	}
}

func TestRetryUntilCinderComesUp(t *testing.T) {
	fs := host.New(t.TempDir(), nil, nil).FS
	srv := lateCinder(t, 3)
	g := &Gate{}
	b := host.Backoff{Min: 5 * time.Millisecond, Max: 10 * time.Millisecond}
	tries := 0
	got, err := Retry(context.Background(), fs, slog.New(slog.DiscardHandler), b, g, func(error) bool { return false },
		func(ctx context.Context) (string, error) {
			tries++
			if tries == 2 {
				// While Cinder is down dockerd can activate the plugin,
				// and a volume call says what the plugin waits for.
				require.Equal(t, []any{"VolumeDriver"}, call(t, g, "/Plugin.Activate", "{}")["Implements"])
				require.Contains(t, call(t, g, "/VolumeDriver.Create", `{"Name": "v1"}`)["Err"], "waiting for Cinder (it retries): GET "+srv.URL+": 503")
			}
			return reach(srv.URL)(ctx)
		})
	require.NoError(t, err)
	require.Equal(t, "cinder", got)
	require.Equal(t, 4, tries, "three refusals, then Cinder answers")

	// A call that arrives before Ready waits for the plugin (Hold).
	g.Hold = time.Minute
	answer := make(chan map[string]any)
	go func() { answer <- call(t, g, "/VolumeDriver.Mount", `{"Name": "v1", "ID": "c1"}`) }()
	g.Ready(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ContentType)
		_, _ = w.Write([]byte(`{"Mountpoint": "/m", "Err": ""}`))
	}))
	require.Equal(t, "/m", (<-answer)["Mountpoint"], "the held call is the plugin's once ready")
	require.Equal(t, "", call(t, g, "/VolumeDriver.Create", `{"Name": "v1"}`)["Err"], "once ready, the plugin answers")
}

func TestRetryStops(t *testing.T) {
	fs := host.New(t.TempDir(), nil, nil).FS
	b := host.Backoff{Min: 5 * time.Millisecond, Max: 10 * time.Millisecond}
	log := slog.New(slog.DiscardHandler)
	badConfig := errors.New("clouds.yaml: no cloud named nope")
	tests := []struct {
		name      string
		permanent bool
		timeout   time.Duration
		want      error
	}{
		{"a configuration mistake is not retried", true, time.Minute, badConfig},
		{"the command's end stops the retries", false, 30 * time.Millisecond, host.ErrWaitTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
			defer cancel()
			_, err := Retry(ctx, fs, log, b, &Gate{}, func(error) bool { return tt.permanent },
				func(context.Context) (int, error) { return 0, badConfig })
			require.ErrorIs(t, err, tt.want)
		})
	}
}
