// Package dockerplugin is `brick docker-plugin`: the Docker volume
// plugin's flags, start-up and socket.
package dockerplugin

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
	"github.com/brick-storage/brick/internal/cmd/connflags"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/output"
)

// defaultSocket is where dockerd looks for a legacy plugin named brick.
const defaultSocket = "/run/docker/plugins/brick.sock"

// shutdownTimeout bounds the wait for calls in flight at SIGTERM (Docker
// gives Mount two minutes).
const shutdownTimeout = 2 * time.Minute

// hold is how long a volume call waits while the plugin still waits for
// Cinder: within Docker's two minutes for a Mount.
const hold = time.Minute

// options are docker-plugin's.
type options struct {
	f        *factory.Factory
	Attacher connflags.Attacher
	Config   dockerplugin.Config
	Socket   string
}

// NewCmd is `brick docker-plugin`.
func NewCmd(f *factory.Factory, runF func(context.Context, *options) error) *cobra.Command {
	o := &options{f: f}
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
		RunE: factory.RunE(o, o.validate, nil, run, runF),
	}
	fl := cmd.Flags()
	o.Attacher.Add(f, fl)
	f.AddHiddenOutputFlags(fl)
	fl.StringVar(&o.Socket, "socket", defaultSocket, "unix socket to serve (dockerd finds a plugin named NAME at /run/docker/plugins/NAME.sock)")
	fl.StringVar(&o.Config.StateDir, "state-dir", dockerplugin.DefaultStateDir, "directory of the plugin's state and its mounts")
	fl.IntVar(&o.Config.DefaultSizeGiB, "default-size", 1, "size in GiB of a volume created without -o size")
	fl.IntVar(&o.Config.MaxSizeGiB, "max-size", dockerplugin.DefaultMaxSizeGiB, "refuse -o size above this many GiB")
	return cmd
}

func (o *options) validate() error {
	if o.Config.DefaultSizeGiB < 0 || o.Config.MaxSizeGiB < 0 {
		return fmt.Errorf("--default-size %d, --max-size %d: sizes are 0 (the default) or more GiB", o.Config.DefaultSizeGiB, o.Config.MaxSizeGiB)
	}
	return o.Attacher.Volume.Validate(o.f.Host())
}

// run serves the socket at once and then reaches Cinder, retrying with
// backoff: after a slow boot dockerd finds the plugin, and its calls say
// what the plugin waits for, until Cinder answers.
func run(ctx context.Context, o *options) error {
	f := o.f
	if err := f.NeedRoot("docker-plugin"); err != nil {
		return err
	}
	gate := &dockerplugin.Gate{Hold: hold}
	return serve(ctx, f, gate, o.Socket, func() error {
		m, err := dockerplugin.Retry(ctx, f.Host().FS, f.Logger(), dockerplugin.ConnectBackoff(), gate, factory.IsUsageError,
			func(ctx context.Context) (*attach.Manager, error) {
				return o.Attacher.Manager(ctx, f, "docker-plugin", "")
			})
		if err != nil {
			return err
		}
		cfg := o.Config
		cfg.Gather = o.Attacher.Volume.Gather()
		p, err := dockerplugin.New(f.Host(), m, m.Cinder.(*cinderapi.Client), cfg)
		if err != nil {
			return err
		}
		if err := p.Reconcile(ctx); err != nil {
			f.Logger().Warn("docker plugin: start-up reconcile: " + output.OneLine(err.Error()))
		}
		gate.Ready(p.Handler())
		f.Logger().Info("docker plugin: serving", "socket", o.Socket)
		return nil
	})
}

// serve serves gate on socket, runs start (which readies the gate), then
// serves until ctx ends (SIGTERM); calls in flight get shutdownTimeout to
// finish.
func serve(ctx context.Context, f *factory.Factory, gate http.Handler, socket string, start func() error) error {
	l, err := f.Host().FS.ListenUnix(socket)
	if err != nil {
		return fmt.Errorf("docker-plugin: %w", err)
	}
	srv := &http.Server{Handler: gate, ReadHeaderTimeout: 30 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	f.Logger().Info("docker plugin: socket open, connecting to Cinder", "socket", socket)
	var runErr error
	if runErr = start(); runErr == nil {
		select {
		case err := <-done:
			return fmt.Errorf("docker-plugin: %w", err)
		case <-ctx.Done():
		}
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) && runErr == nil {
		return fmt.Errorf("docker-plugin: shut down: %w", err)
	}
	return runErr
}
