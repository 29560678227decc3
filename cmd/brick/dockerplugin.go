package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/dockerplugin"
)

// defaultPluginSocket is where dockerd looks for a legacy plugin named brick.
const defaultPluginSocket = "/run/docker/plugins/brick.sock"

// pluginShutdownTimeout bounds the wait for calls in flight at SIGTERM
// (Docker gives Mount two minutes).
const pluginShutdownTimeout = 2 * time.Minute

func (a *app) dockerPluginCommand() *cobra.Command {
	var vf volumeFlags
	var cfg dockerplugin.Config
	var socket, fixedKeyFile string
	cmd := &cobra.Command{
		Use:   "docker-plugin",
		Short: "Serve Docker's volume plugin protocol: Cinder volumes for containers",
		Long: `Serve Docker's volume plugin protocol on a unix socket (0600, root only), so
that 'docker volume create -d brick' and 'docker run -v NAME:/dir
--volume-driver brick' use Cinder volumes.

Create makes a Cinder volume (-o size=GiB, -o type=, -o availability_zone=,
-o fs=ext4|xfs) or adopts an available one (-o volume=NAME|ID). A container's
Mount attaches the volume as local-attach does (rollback included), formats
it only when blank, and mounts it under --state-dir; containers sharing a
volume share one attach, and the last Unmount detaches it. Remove deletes
only the Cinder volumes the plugin created, never one in use. The state is
kept under --state-dir (0600), so a restarted plugin keeps serving the
mounts of running containers; at start-up it detaches what a crash or a
reboot left attached with no container.`,
		Example: `  brick docker-plugin --os-cloud mycloud
  docker volume create -d brick -o size=10 data
  docker run --rm -v data:/data busybox touch /data/f`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.needRoot("docker-plugin"); err != nil {
				return err
			}
			m, err := a.manager(cmd.Context(), vf.opts, true, "docker-plugin", "")
			if err != nil {
				return err
			}
			if m.Crypt, err = a.cryptAccess(cmd.Context(), m.Cinder, fixedKeyFile); err != nil {
				return err
			}
			cfg.Gather = vf.gather()
			p, err := dockerplugin.New(a.host, m, m.Cinder.(*cinderapi.Client), cfg)
			if err != nil {
				return err
			}
			return a.servePlugin(cmd.Context(), p, socket)
		},
	}
	f := cmd.Flags()
	a.addAuthFlags(f)
	a.addHiddenOutputFlags(f)
	addVolumeFlags(f, &vf, forAttach)
	f.StringVar(&socket, "socket", defaultPluginSocket, "unix socket to serve (dockerd finds a plugin named NAME at /run/docker/plugins/NAME.sock)")
	f.StringVar(&cfg.StateDir, "state-dir", dockerplugin.DefaultStateDir, "directory of the plugin's state and its mounts")
	f.IntVar(&cfg.DefaultSizeGiB, "default-size", 1, "size in GiB of a volume created without -o size")
	f.IntVar(&cfg.MaxSizeGiB, "max-size", dockerplugin.DefaultMaxSizeGiB, "refuse -o size above this many GiB")
	f.StringVar(&fixedKeyFile, "fixed-key-file", "", "file (mode 0600) with a standalone Cinder's [key_manager] fixed_key, as hex, for its encrypted volumes")
	return cmd
}

// servePlugin reconciles, then serves until ctx ends (SIGTERM); calls in
// flight get pluginShutdownTimeout to finish.
func (a *app) servePlugin(ctx context.Context, p *dockerplugin.Plugin, socket string) error {
	if err := p.Reconcile(ctx); err != nil {
		a.logger.Warn("docker plugin: start-up reconcile: " + oneLine(err.Error()))
	}
	l, err := a.host.FS.ListenUnix(socket)
	if err != nil {
		return fmt.Errorf("docker-plugin: %w", err)
	}
	srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 30 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	a.logger.Info("docker plugin: serving", "socket", socket)
	select {
	case err := <-done:
		return fmt.Errorf("docker-plugin: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pluginShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("docker-plugin: shut down: %w", err)
	}
	return nil
}
