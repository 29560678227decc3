package dockerplugin

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/brick-storage/brick/host"
)

// Gate is the socket's handler from the first moment: while Cinder cannot
// be reached yet (a slow boot), dockerd still finds and activates the
// plugin, and a volume call waits up to Hold for the plugin (a container
// started at boot gets its volume), then fails saying why; Ready hands the
// socket to the plugin.
type Gate struct {
	Hold time.Duration

	mu     sync.Mutex
	ready  http.Handler
	why    error
	opened chan struct{}
}

// open is closed when the gate is ready.
func (g *Gate) open() chan struct{} {
	if g.opened == nil {
		g.opened = make(chan struct{})
	}
	return g.opened
}

// Waiting records why the plugin is not serving yet.
func (g *Gate) Waiting(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.why = err
}

// Ready sends every call from now on to h.
func (g *Gate) Ready(h http.Handler) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ready = h
	close(g.open())
}

// current is the plugin's handler once ready, else nil and why not, after
// holding a volume call up to Hold for it.
func (g *Gate) current(r *http.Request) (http.Handler, error) {
	g.mu.Lock()
	ready, why, opened := g.ready, g.why, g.open()
	g.mu.Unlock()
	if ready != nil || g.Hold <= 0 || r.URL.Path == "/Plugin.Activate" || r.URL.Path == "/VolumeDriver.Capabilities" {
		return ready, why
	}
	hold := time.NewTimer(g.Hold)
	defer hold.Stop()
	select {
	case <-opened:
	case <-hold.C:
	case <-r.Context().Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ready, g.why
}

func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ready, why := g.current(r)
	if ready != nil {
		ready.ServeHTTP(w, r)
		return
	}
	var out any
	switch r.URL.Path {
	case "/Plugin.Activate":
		out = map[string][]string{"Implements": {"VolumeDriver"}}
	case "/VolumeDriver.Capabilities":
		out = map[string]any{"Capabilities": map[string]string{"Scope": "local"}}
	default:
		msg := "brick docker-plugin is starting: Cinder not reached yet; try again shortly"
		if why != nil {
			msg = fmt.Sprintf("brick docker-plugin is waiting for Cinder (it retries): %s", errLine(why))
		}
		out = map[string]string{"Err": msg}
	}
	w.Header().Set("Content-Type", ContentType)
	_ = json.NewEncoder(w).Encode(out)
}

// ConnectBackoff is how often the plugin retries Cinder while it waits:
// from 1 s, doubling to 30 s, so a cloud that comes up late is seen soon
// without hammering one that is down.
func ConnectBackoff() host.Backoff { return host.Backoff{Min: time.Second, Max: 30 * time.Second} }

// Retry calls connect until it succeeds, ctx ends, or it fails with an
// error permanent says retrying cannot fix (a configuration mistake).
// Each failure goes to the gate and the log.
func Retry[T any](ctx context.Context, fs host.FS, log *slog.Logger, b host.Backoff, g *Gate, permanent func(error) bool, connect func(context.Context) (T, error)) (T, error) {
	var got T
	attempts := 0
	err := fs.WaitFor(ctx, nil, b, func() (bool, error) {
		v, err := connect(ctx)
		if err == nil {
			got = v
			return true, nil
		}
		if permanent(err) {
			return false, err
		}
		attempts++
		g.Waiting(err)
		log.Warn("docker plugin: Cinder not reachable yet; retrying", "attempt", attempts, "err", errLine(err))
		return false, nil
	})
	if err != nil {
		return got, fmt.Errorf("docker-plugin: connect to Cinder: %w", err)
	}
	return got, nil
}
