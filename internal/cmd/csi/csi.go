// Package csi is `brick csi`: the CSI driver's flags and start-up.
package csi

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/csi"
	"github.com/brick-storage/brick/internal/cmd/connflags"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/output"
)

// shutdownTimeout bounds the wait for calls in flight at SIGTERM.
const shutdownTimeout = 2 * time.Minute

// options are brick csi's.
type options struct {
	f        *factory.Factory
	Endpoint string
	Config   csi.Config
	Attacher connflags.Attacher
}

// NewCmd is `brick csi`.
func NewCmd(f *factory.Factory, runF func(context.Context, *options) error) *cobra.Command {
	o := &options{f: f}
	cmd := &cobra.Command{
		Use:   "csi",
		Short: "Serve the Container Storage Interface: Cinder volumes for Kubernetes, without Nova",
		Long: `Serve CSI v1 (Identity, Controller, Node) on a unix socket for Kubernetes.

The controller (--mode controller) creates, deletes, clones, snapshots and
extends Cinder volumes; ControllerPublish reserves a Cinder v3 attachment
for the node (recorded in the volume's metadata under the node ID) and
hands its ID to the node. The node (--mode node, one per host) completes that attachment
with its own connector at NodeStage and attaches the volume as local-attach
does (every protocol, multipath, LUKS, rollback), formats it only when
blank and mounts it nosuid,nodev at the staging path; NodePublish bind
mounts it into the pod. Both need Cinder credentials (clouds.yaml, OS_*).

StorageClass parameters: type (Cinder volume type) and availability
(availability zone), as cinder-csi-plugin names them. Staging and target
paths must lie under --kubelet-dir. What the node staged is kept in
brick's records (/var/lib/brick), so a restarted node plugin keeps serving
the volumes of running pods. docs/csi.md has the design.`,
		Example: `  brick csi --mode controller --endpoint unix:///csi/csi.sock --os-cloud mycloud
  brick csi --mode node --endpoint unix:///csi/csi.sock --multipath --availability-zone nova`,
		Args: cobra.NoArgs,
		RunE: factory.RunE(o, o.validate, nil, run, runF),
	}
	fl := cmd.Flags()
	o.Attacher.Add(f, fl)
	f.AddHiddenOutputFlags(fl)
	fl.StringVar(&o.Endpoint, "endpoint", "unix:///csi/csi.sock", "unix socket to serve (CSI_ENDPOINT in the sidecars' terms)")
	fl.StringVar(&o.Config.Mode, "mode", csi.ModeAll, "services to serve: controller, node or all")
	fl.StringVar(&o.Config.DriverName, "driver-name", csi.DefaultDriverName, "the CSI driver name (the CSIDriver object's and StorageClasses' provisioner)")
	fl.StringVar(&o.Config.KubeletDir, "kubelet-dir", csi.DefaultKubeletDir, "kubelet's directory: staging and target paths must lie under it")
	fl.StringVar(&o.Config.NodeID, "node-id", "", "this node's ID, a UUID (default: /etc/machine-id as a UUID)")
	fl.StringVar(&o.Config.Zone, "availability-zone", csi.DefaultZone, "this node's Cinder availability zone, reported as topology "+csi.TopologyZoneKey+" (\"\": no topology)")
	fl.Int64Var(&o.Config.MaxVolumes, "max-volumes", 0, "volumes this node takes at most (0: no limit)")
	return cmd
}

func (o *options) validate() error {
	if _, err := csi.SocketPath(o.Endpoint); err != nil {
		return err
	}
	switch o.Config.Mode {
	case csi.ModeController, csi.ModeNode, csi.ModeAll:
	default:
		return fmt.Errorf("--mode %q: use controller, node or all", o.Config.Mode)
	}
	if o.Config.MaxVolumes < 0 {
		return fmt.Errorf("--max-volumes %d: 0 (no limit) or more", o.Config.MaxVolumes)
	}
	return o.Attacher.Volume.Validate(o.f.Host())
}

// run builds the driver for the mode and serves until SIGTERM.
func run(ctx context.Context, o *options) error {
	f, cfg := o.f, o.Config
	if cfg.Mode != csi.ModeController {
		if err := f.NeedRoot("csi --mode " + cfg.Mode); err != nil {
			return err
		}
	}
	socket, err := csi.SocketPath(o.Endpoint)
	if err != nil {
		return factory.UsageError{Err: err}
	}
	m, err := connflags.Manager(ctx, f, o.Attacher.Volume.Opts, true, "csi", "")
	if err != nil {
		return err
	}
	cfg.Version = f.Version()
	cfg.Gather = o.Attacher.Volume.Gather()
	var att csi.Attacher
	if cfg.Mode != csi.ModeController {
		if cfg.NodeID == "" {
			if cfg.NodeID, err = csi.MachineNodeID(f.Host().FS); err != nil {
				return factory.UsageError{Err: err}
			}
		}
		if m.Crypt, err = f.Crypt(ctx, m.Cinder, o.Attacher.FixedKeyFile); err != nil {
			return err
		}
		att = m
	}
	return serve(ctx, f, cfg, m, att, socket)
}

func serve(ctx context.Context, f *factory.Factory, cfg csi.Config, m *attach.Manager, att csi.Attacher, socket string) error {
	c, ok := m.Cinder.(csi.Cinder)
	if !ok {
		return fmt.Errorf("csi: the Cinder client lacks what the controller needs")
	}
	d, err := csi.New(cfg, c, att, f.Host())
	if err != nil {
		return factory.UsageError{Err: fmt.Errorf("csi: %w", err)}
	}
	if att != nil {
		if err := d.Recover(ctx); err != nil {
			f.Logger().Warn("csi: start-up clean-up: " + output.OneLine(err.Error()))
		}
	}
	l, err := f.Host().FS.ListenUnix(socket)
	if err != nil {
		return fmt.Errorf("csi: %w", err)
	}
	return d.Serve(ctx, l, shutdownTimeout)
}
