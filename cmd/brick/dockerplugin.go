package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/dockerplugin"
	"github.com/brick-storage/brick/internal/output"
)

// defaultPluginSocket is where dockerd looks for a legacy plugin named brick.
const defaultPluginSocket = "/run/docker/plugins/brick.sock"

// pluginShutdownTimeout bounds the wait for calls in flight at SIGTERM
// (Docker gives Mount two minutes).
const pluginShutdownTimeout = 2 * time.Minute

// pluginHold is how long a volume call waits while the plugin still waits
// for Cinder: within Docker's two minutes for a Mount.
const pluginHold = time.Minute

// dockerPluginOptions are docker-plugin's.
type dockerPluginOptions struct {
	f            *app
	Volume       volumeFlags
	Config       dockerplugin.Config
	Socket       string
	FixedKeyFile string
}

func newCmdDockerPlugin(f *app, runF func(context.Context, *dockerPluginOptions) error) *cobra.Command {
	o := &dockerPluginOptions{f: f}
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
		RunE: runE(o, nil, dockerPluginRun, runF),
	}
	fl := cmd.Flags()
	f.addAuthFlags(fl)
	f.addHiddenOutputFlags(fl)
	addVolumeFlags(fl, &o.Volume, forAttach)
	fl.StringVar(&o.Socket, "socket", defaultPluginSocket, "unix socket to serve (dockerd finds a plugin named NAME at /run/docker/plugins/NAME.sock)")
	fl.StringVar(&o.Config.StateDir, "state-dir", dockerplugin.DefaultStateDir, "directory of the plugin's state and its mounts")
	fl.IntVar(&o.Config.DefaultSizeGiB, "default-size", 1, "size in GiB of a volume created without -o size")
	fl.IntVar(&o.Config.MaxSizeGiB, "max-size", dockerplugin.DefaultMaxSizeGiB, "refuse -o size above this many GiB")
	addFixedKeyFlag(fl, &o.FixedKeyFile)
	return cmd
}

func (o *dockerPluginOptions) validate() error {
	if o.Config.DefaultSizeGiB < 0 || o.Config.MaxSizeGiB < 0 {
		return fmt.Errorf("--default-size %d, --max-size %d: sizes are 0 (the default) or more GiB", o.Config.DefaultSizeGiB, o.Config.MaxSizeGiB)
	}
	return o.Volume.validate(o.f)
}

// dockerPluginRun serves the socket at once and then reaches Cinder,
// retrying with backoff: after a slow boot dockerd finds the plugin, and
// its calls say what the plugin waits for, until Cinder answers.
func dockerPluginRun(ctx context.Context, o *dockerPluginOptions) error {
	f := o.f
	if err := f.needRoot("docker-plugin"); err != nil {
		return err
	}
	gate := &dockerplugin.Gate{Hold: pluginHold}
	return servePlugin(ctx, f, gate, o.Socket, func() error {
		m, err := dockerplugin.Retry(ctx, f.host.FS, f.logger, dockerplugin.ConnectBackoff(), gate, isUsageError,
			func(ctx context.Context) (*attach.Manager, error) {
				m, err := f.manager(ctx, o.Volume.opts, true, "docker-plugin", "")
				if err != nil {
					return nil, err
				}
				m.Crypt, err = f.cryptAccess(ctx, m.Cinder, o.FixedKeyFile)
				return m, err
			})
		if err != nil {
			return err
		}
		cfg := o.Config
		cfg.Gather = o.Volume.gather()
		p, err := dockerplugin.New(f.host, m, m.Cinder.(*cinderapi.Client), cfg)
		if err != nil {
			return err
		}
		if err := p.Reconcile(ctx); err != nil {
			f.logger.Warn("docker plugin: start-up reconcile: " + output.OneLine(err.Error()))
		}
		gate.Ready(p.Handler())
		f.logger.Info("docker plugin: serving", "socket", o.Socket)
		return nil
	})
}

// isUsageError: a configuration mistake, which no retry fixes.
func isUsageError(err error) bool {
	var ue usageError
	return errors.As(err, &ue)
}

// servePlugin serves gate on socket, runs start (which readies the gate),
// then serves until ctx ends (SIGTERM); calls in flight get
// pluginShutdownTimeout to finish.
func servePlugin(ctx context.Context, a *app, gate http.Handler, socket string, start func() error) error {
	l, err := a.host.FS.ListenUnix(socket)
	if err != nil {
		return fmt.Errorf("docker-plugin: %w", err)
	}
	srv := &http.Server{Handler: gate, ReadHeaderTimeout: 30 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	a.logger.Info("docker plugin: socket open, connecting to Cinder", "socket", socket)
	var runErr error
	if runErr = start(); runErr == nil {
		select {
		case err := <-done:
			return fmt.Errorf("docker-plugin: %w", err)
		case <-ctx.Done():
		}
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pluginShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) && runErr == nil {
		return fmt.Errorf("docker-plugin: shut down: %w", err)
	}
	return runErr
}
