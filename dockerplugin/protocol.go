package dockerplugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/brick-storage/brick/ident"
)

// ContentType is what Docker's plugin protocol answers carry.
const ContentType = "application/vnd.docker.plugins.v1.1+json"

// maxBody bounds a request body: Docker's are a name, an ID and options.
const maxBody = 64 << 10

// maxErrLen bounds the Err line Docker shows.
const maxErrLen = 1000

// request is the union of the volume driver requests' fields.
type request struct {
	Name string
	ID   string
	Opts map[string]string
}

// decodeRequest reads one request body: JSON, at most maxBody bytes, no
// trailing data; an empty body is an empty request (Docker sends `{}` or
// nothing for List and Capabilities).
func decodeRequest(r io.Reader) (request, error) {
	var req request
	data, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err != nil {
		return req, fmt.Errorf("read request: %w", err)
	}
	if len(data) > maxBody {
		return req, fmt.Errorf("request larger than %d bytes", maxBody)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return req, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&req); err != nil {
		return req, fmt.Errorf("decode request: %w", err)
	}
	if dec.More() {
		return req, fmt.Errorf("decode request: data after the JSON object")
	}
	return req, nil
}

// Handler serves the protocol's endpoints. Every answer is 200 with an
// Err field on failure: Docker then shows the plugin's words alone
// ("Error response from daemon: create v1: <Err>").
func (p *Plugin) Handler() http.Handler {
	mux := http.NewServeMux()
	handle := func(path string, f func(ctx context.Context, req request) (any, error)) {
		mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			req, err := decodeRequest(r.Body)
			var out any
			if err == nil {
				out, err = f(r.Context(), req)
			}
			took := time.Since(start).Round(time.Millisecond).String()
			if err != nil {
				p.log.Warn("docker plugin: call failed", "call", path, "volume", req.Name, "took", took, "err", err.Error())
				out = map[string]string{"Err": errLine(err)}
			} else {
				p.log.Info("docker plugin: call done", "call", path, "volume", req.Name, "took", took)
			}
			w.Header().Set("Content-Type", ContentType)
			_ = json.NewEncoder(w).Encode(out)
		})
	}
	handle("/Plugin.Activate", func(context.Context, request) (any, error) {
		return map[string][]string{"Implements": {"VolumeDriver"}}, nil
	})
	handle("/VolumeDriver.Capabilities", func(context.Context, request) (any, error) {
		return map[string]any{"Capabilities": map[string]string{"Scope": "local"}}, nil
	})
	handle("/VolumeDriver.Create", func(ctx context.Context, req request) (any, error) {
		return errOnly{}, p.Create(ctx, req.Name, req.Opts)
	})
	handle("/VolumeDriver.Remove", func(ctx context.Context, req request) (any, error) {
		return errOnly{}, p.Remove(ctx, req.Name)
	})
	handle("/VolumeDriver.Mount", func(ctx context.Context, req request) (any, error) {
		mp, err := p.Mount(ctx, req.Name, req.ID)
		return map[string]string{"Mountpoint": mp}, err
	})
	handle("/VolumeDriver.Unmount", func(ctx context.Context, req request) (any, error) {
		return errOnly{}, p.Unmount(ctx, req.Name, req.ID)
	})
	handle("/VolumeDriver.Path", func(_ context.Context, req request) (any, error) {
		mp, err := p.Path(req.Name)
		return map[string]string{"Mountpoint": mp}, err
	})
	handle("/VolumeDriver.Get", func(ctx context.Context, req request) (any, error) {
		info, err := p.Get(ctx, req.Name)
		return map[string]any{"Volume": info}, err
	})
	handle("/VolumeDriver.List", func(context.Context, request) (any, error) {
		return map[string]any{"Volumes": p.List()}, nil
	})
	return mux
}

type errOnly struct {
	Err string `json:",omitempty"`
}

// errLine makes an error one printable line of bounded length.
func errLine(err error) string {
	return ident.OneLine(err.Error(), maxErrLen)
}
