package csi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// SocketPath turns a CSI endpoint (unix:///csi/csi.sock, unix:/csi/csi.sock
// or a plain absolute path) into the socket's path.
func SocketPath(endpoint string) (string, error) {
	p := endpoint
	switch {
	case strings.HasPrefix(p, "unix://"):
		p = strings.TrimPrefix(p, "unix://")
	case strings.HasPrefix(p, "unix:"):
		p = strings.TrimPrefix(p, "unix:")
	case strings.Contains(p, "://"):
		return "", fmt.Errorf("endpoint %q: brick csi serves a unix socket only (unix:///csi/csi.sock)", endpoint)
	}
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("endpoint %q: give an absolute socket path (unix:///csi/csi.sock)", endpoint)
	}
	return p, nil
}

// Server builds the gRPC server with the services of the driver's mode.
func (d *Driver) Server() *grpc.Server {
	srv := grpc.NewServer(grpc.UnaryInterceptor(d.logCall))
	csipb.RegisterIdentityServer(srv, identity{d: d})
	if d.controller() {
		csipb.RegisterControllerServer(srv, controller{d: d})
	}
	if d.node() {
		csipb.RegisterNodeServer(srv, node{d: d})
	}
	return srv
}

// Serve serves l until ctx ends, then lets calls in flight finish for up
// to grace.
func (d *Driver) Serve(ctx context.Context, l net.Listener, grace time.Duration) error {
	srv := d.Server()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	d.log.Info("csi: serving", "mode", d.cfg.Mode, "driver", d.cfg.DriverName, "socket", l.Addr().String())
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	stopped := make(chan struct{})
	go func() { srv.GracefulStop(); close(stopped) }()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-stopped:
	case <-t.C:
		srv.Stop()
	}
	if err := <-done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return err
	}
	return nil
}

// logCall logs each call's method, duration and outcome (never its
// request: secrets travel in some).
func (d *Driver) logCall(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := h(ctx, req)
	method := info.FullMethod[strings.LastIndex(info.FullMethod, "/")+1:]
	attrs := []any{"method", method, "took", time.Since(start).Round(time.Millisecond).String()}
	if v, ok := req.(interface{ GetVolumeId() string }); ok && v.GetVolumeId() != "" {
		attrs = append(attrs, "volume", oneLine(v.GetVolumeId()))
	}
	if err != nil {
		st := status.Convert(err)
		d.log.Warn("csi: call failed", append(attrs, "code", st.Code().String(), "err", st.Message())...)
	} else if !strings.HasPrefix(method, "Probe") && !strings.HasSuffix(method, "Capabilities") && !strings.HasPrefix(method, "GetPlugin") {
		d.log.Info("csi: call", attrs...)
	}
	return resp, err
}
