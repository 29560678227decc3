package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/csi"
	"github.com/brick-storage/brick/internal/output"
)

// csiShutdownTimeout bounds the wait for calls in flight at SIGTERM.
const csiShutdownTimeout = 2 * time.Minute

// csiOptions are brick csi's.
type csiOptions struct {
	f            *app
	Volume       volumeFlags
	Config       csi.Config
	Endpoint     string
	FixedKeyFile string
}

func newCmdCSI(f *app, runF func(context.Context, *csiOptions) error) *cobra.Command {
	o := &csiOptions{f: f}
	cmd := &cobra.Command{
		Use:   "csi",
		Short: "Serve the Container Storage Interface: Cinder volumes for Kubernetes, without Nova",
		Long: `Serve CSI v1 (Identity, Controller, Node) on a unix socket for Kubernetes.

The controller (--mode controller) creates, deletes, clones, snapshots and
extends Cinder volumes; ControllerPublish reserves a Cinder v3 attachment
named after the node (its instance_uuid is the node ID) and hands its ID to
the node. The node (--mode node, one per host) completes that attachment
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
		RunE: runE(o, nil, csiRun, runF),
	}
	fl := cmd.Flags()
	f.addAuthFlags(fl)
	f.addHiddenOutputFlags(fl)
	addVolumeFlags(fl, &o.Volume, forAttach)
	fl.StringVar(&o.Endpoint, "endpoint", "unix:///csi/csi.sock", "unix socket to serve (CSI_ENDPOINT in the sidecars' terms)")
	fl.StringVar(&o.Config.Mode, "mode", csi.ModeAll, "services to serve: controller, node or all")
	fl.StringVar(&o.Config.DriverName, "driver-name", csi.DefaultDriverName, "the CSI driver name (the CSIDriver object's and StorageClasses' provisioner)")
	fl.StringVar(&o.Config.KubeletDir, "kubelet-dir", csi.DefaultKubeletDir, "kubelet's directory: staging and target paths must lie under it")
	fl.StringVar(&o.Config.NodeID, "node-id", "", "this node's ID, a UUID (default: /etc/machine-id as a UUID)")
	fl.StringVar(&o.Config.Zone, "availability-zone", csi.DefaultZone, "this node's Cinder availability zone, reported as topology "+csi.TopologyZoneKey+" (\"\": no topology)")
	fl.Int64Var(&o.Config.MaxVolumes, "max-volumes", 0, "volumes this node takes at most (0: no limit)")
	addFixedKeyFlag(fl, &o.FixedKeyFile)
	return cmd
}

func (o *csiOptions) validate() error {
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
	return o.Volume.validate(o.f)
}

// csiRun builds the driver for the mode and serves until SIGTERM.
func csiRun(ctx context.Context, o *csiOptions) error {
	a := o.f
	cfg := o.Config
	if cfg.Mode != csi.ModeController {
		if err := a.needRoot("csi --mode " + cfg.Mode); err != nil {
			return err
		}
	}
	socket, err := csi.SocketPath(o.Endpoint)
	if err != nil {
		return usageError{Err: err}
	}
	m, err := a.manager(ctx, o.Volume.opts, true, "csi", "")
	if err != nil {
		return err
	}
	cfg.Version = readBuildInfo().Version
	cfg.Gather = o.Volume.gather()
	var att csi.Attacher
	if cfg.Mode != csi.ModeController {
		if cfg.NodeID == "" {
			if cfg.NodeID, err = csi.MachineNodeID(a.host.FS); err != nil {
				return usageError{Err: err}
			}
		}
		if m.Crypt, err = a.cryptAccess(ctx, m.Cinder, o.FixedKeyFile); err != nil {
			return err
		}
		att = m
	}
	return a.serveCSI(ctx, cfg, m, att, socket)
}

func (a *app) serveCSI(ctx context.Context, cfg csi.Config, m *attach.Manager, att csi.Attacher, socket string) error {
	c, ok := m.Cinder.(csi.Cinder)
	if !ok {
		return fmt.Errorf("csi: the Cinder client lacks what the controller needs")
	}
	d, err := csi.New(cfg, c, att, a.host)
	if err != nil {
		return usageError{Err: fmt.Errorf("csi: %w", err)}
	}
	if att != nil {
		if err := d.Recover(ctx); err != nil {
			a.logger.Warn("csi: start-up clean-up: " + output.OneLine(err.Error()))
		}
	}
	l, err := a.host.FS.ListenUnix(socket)
	if err != nil {
		return fmt.Errorf("csi: %w", err)
	}
	return d.Serve(ctx, l, csiShutdownTimeout)
}
