package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/ironicattach"
)

func (a *app) ironicBootVolumeCommand() *cobra.Command {
	var o ironicattach.BootOpts
	var img ironicattach.ImageOpts
	var vf volumeFlags
	var undo bool
	cmd := &cobra.Command{
		Use:   "boot-from-volume NODE (--volume VOLUME | --image FILE --size GIB | --undo)",
		Short: "Set up an Ironic node to boot from a Cinder volume over iSCSI with iPXE",
		Long:  bootVolumeLong,
		Example: `  brick ironic boot-from-volume node-1 --volume boot-vol --initiator iqn.2026-12.org.example:node-1
  brick ironic boot-from-volume node-1 --volume boot-vol --deploy
  brick ironic boot-from-volume node-1 --image disk.raw --size 4 --nic eth0
  brick ironic boot-from-volume node-1 --undo`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Node = args[0]
			return a.runBootVolume(cmd, o, img, vf, undo)
		},
	}
	f := cmd.Flags()
	f.StringVar(&img.Path, "image", "", "raw disk image to write onto a new volume (with --size)")
	f.IntVar(&img.SizeGiB, "size", 0, "size in GiB of the new volume for --image")
	f.StringVar(&img.Name, "volume-name", "", "name of the new volume for --image (default brick-boot-NODE)")
	addVolumeFlags(f, &vf, forAttach)
	hideFlags(f, otherProtocolFlags...) // Ironic boots from iSCSI volumes only
	f.StringVar(&o.Volume, "volume", "", "Cinder volume (name or ID) to boot from")
	f.StringVar(&o.Initiator, "initiator", "", "the node's iSCSI name, registered as its iqn connector if it has none")
	f.BoolVar(&o.Deploy, "deploy", false, "deploy the node and wait until it is active")
	f.BoolVar(&undo, "undo", false, "reverse what brick set up for the node (and the deploy if brick made it)")
	f.DurationVar(&o.Wait, "wait", 10*time.Minute, "how long to wait for a deploy or undeploy")
	return cmd
}

// bootVolumeLong is boot-from-volume's help text.
const bootVolumeLong = `Do what Ironic's boot-from-volume guide leaves to a standalone operator, in
one step: make sure the node has an iqn volume connector (registered from
--initiator when it has none), a volume target for the volume with boot
index 0, the iscsi_boot:True capability, and the cinder storage and ipxe
boot interfaces. Then print what is left (the deploy), or with --deploy
ask Ironic to deploy the node and wait until it is active. Ironic's cinder
storage interface exports the volume to the node's initiator when it
deploys (brick never does: the volume must be available, or on a deployed
node attached by Ironic), its iPXE configuration sanboots the volume, and
its undeploy detaches the volume and deletes the node's volume targets.

Everything is checked before the first change: the node exists and is
enroll, manageable or available and not powered on, this Ironic serves API
1.32 or later, the node's hardware type has the cinder storage and ipxe
boot interfaces enabled, the volume is available and at least 1 GiB (with
--deploy: the node has a port, whose MAC Ironic's ipxe boot needs), the
node's iqn is unambiguous, and boot index 0 is free. A failure later
undoes what this run did, newest first. A second run changes nothing.

With --image FILE --size GIB instead of --volume, brick first makes the
volume: it creates a new Cinder volume (--volume-name, default
brick-boot-NODE), attaches it to this host as local-attach does (the
connector flags are local-attach's), writes the raw disk image onto it with
the progress on the status line, flushes it, and detaches it; then it goes
on as with --volume. The image and the node are checked before the volume
is created; any failure later detaches and deletes the new volume again.
Only raw images are written: convert others first (qemu-img convert -O raw).

What brick made is recorded in the node's extra (brick_boot_from_volume);
--undo reverses exactly that (the deploy if brick deployed, the target and
connector it created, the interfaces and capability it changed) and leaves
everything else.`

// runBootVolume checks the flags' combination and runs the set-up chosen:
// --undo, --image, or --volume.
func (a *app) runBootVolume(cmd *cobra.Command, o ironicattach.BootOpts, img ironicattach.ImageOpts, vf volumeFlags, undo bool) error {
	if n := countSet(undo, o.Volume != "", img.Path != ""); n != 1 {
		return usageError{fmt.Errorf("give --volume VOLUME or --image FILE --size GIB to set up, or --undo to reverse")}
	}
	if undo && (o.Initiator != "" || o.Deploy) {
		return usageError{fmt.Errorf("--undo takes no --initiator or --deploy")}
	}
	if (img.Path == "") != (img.SizeGiB == 0 && img.Name == "") {
		return usageError{fmt.Errorf("--size and --volume-name go with --image, and --image needs --size")}
	}
	if undo {
		return a.ironicBootVolumeUndo(cmd, o)
	}
	if img.Path != "" {
		return a.ironicBootImage(cmd, o, img, vf)
	}
	m, err := a.ironicManager(cmd.Context())
	if err != nil {
		return err
	}
	res, err := m.BootFromVolume(cmd.Context(), o)
	if err != nil {
		return err
	}
	return a.out.PrintRecord(cmd.OutOrStdout(), bootRecord(res))
}

// ironicBootVolumeUndo runs --undo; it needs Ironic only.
func (a *app) ironicBootVolumeUndo(cmd *cobra.Command, o ironicattach.BootOpts) error {
	sc, err := a.ironicClient(cmd.Context())
	if err != nil {
		return err
	}
	m := &ironicattach.Manager{Ironic: sc, Log: a.logger}
	res, err := m.UndoBootFromVolume(cmd.Context(), o)
	if err != nil {
		return err
	}
	return a.out.PrintRecord(cmd.OutOrStdout(), output.Record{
		{Name: "node_uuid", Value: res.Node.UUID},
		{Name: "volume_id", Value: res.Record.VolumeID},
		{Name: "changes", Value: res.Changes},
	})
}

func bootRecord(res *ironicattach.BootResult) output.Record {
	return output.Record{
		{Name: "node_uuid", Value: res.Node.UUID},
		{Name: "node_name", Value: res.Node.Name},
		{Name: "provision_state", Value: res.Node.ProvisionState},
		{Name: "volume_id", Value: res.VolumeID},
		{Name: "initiator", Value: res.Initiator},
		{Name: "target_uuid", Value: res.TargetUUID},
		{Name: "changes", Value: res.Changes},
		{Name: "next", Value: res.Next},
	}
}

func countSet(flags ...bool) int {
	n := 0
	for _, f := range flags {
		if f {
			n++
		}
	}
	return n
}

// ironicBootImage runs --image: it needs root (it attaches the new volume
// here), Cinder, Ironic and local-attach's connectors.
func (a *app) ironicBootImage(cmd *cobra.Command, o ironicattach.BootOpts, img ironicattach.ImageOpts, vf volumeFlags) error {
	if err := a.needRoot("boot-from-volume --image"); err != nil {
		return err
	}
	m, err := a.ironicManager(cmd.Context())
	if err != nil {
		return err
	}
	c, err := a.cinderClient(cmd.Context())
	if err != nil {
		return err
	}
	am := &attach.Manager{Host: a.host, Connectors: a.newRegistry(vf.opts), Cinder: c}
	h := &imageHost{attach: am, cinder: c, gather: vf.gather()}
	ctx, end := a.track(a.testHooks(cmd.Context()), "boot-from-volume", o.Node)
	start := time.Now()
	img.Progress = func(done, total int64) {
		a.status.Detail(writeProgress(done, total, time.Since(start)))
	}
	res, ir, err := m.BootFromImage(ctx, o, img, h)
	end()
	if err != nil {
		return err
	}
	rate := float64(ir.Bytes) / (1 << 20) / max(ir.Write.Seconds(), 1e-3)
	return a.out.PrintRecord(cmd.OutOrStdout(), append(bootRecord(res), []output.Field{
		{Name: "image_bytes", Value: ir.Bytes},
		{Name: "image_write_seconds", Value: fmt.Sprintf("%.1f", ir.Write.Seconds())},
		{Name: "image_write_mib_per_s", Value: fmt.Sprintf("%.1f", rate)},
	}...))
}

// writeProgress is the status line's detail while the image is written.
func writeProgress(done, total int64, took time.Duration) string {
	pct := 100 * float64(done) / float64(max(total, 1))
	rate := float64(done) / (1 << 20) / max(took.Seconds(), 1e-3)
	return fmt.Sprintf("wrote %d of %d MiB (%.0f%%, %.1f MiB/s)", done>>20, (total+1<<20-1)>>20, pct, rate)
}

// imageHost is ironicattach.ImageHost on Cinder and local-attach.
type imageHost struct {
	attach *attach.Manager
	cinder *cinderapi.Client
	gather connector.GatherOptions
}

func (h *imageHost) CreateVolume(ctx context.Context, name string, size int) (*cinderapi.Volume, error) {
	return h.cinder.CreateVolume(ctx, cinderapi.CreateVolumeOpts{Name: name, SizeGiB: size,
		Metadata: map[string]string{"brick-boot-image": "true"}}, 0)
}

func (h *imageHost) DeleteVolume(ctx context.Context, id string) error {
	return h.cinder.DeleteVolume(ctx, id, 0)
}

func (h *imageHost) Attach(ctx context.Context, id string) (string, error) {
	rec, err := h.attach.Attach(ctx, attach.AttachOptions{Volume: id, Mode: "rw", Gather: h.gather})
	if err != nil {
		return "", err
	}
	if rec.Device == nil || rec.Device.Type != "block" {
		err := fmt.Errorf("volume %s attached without a block device to write the image on", id)
		if derr := h.Detach(ctx, id); derr != nil {
			err = fmt.Errorf("%w (detach also failed: %v; run brick local-detach %s)", err, derr, id)
		}
		return "", err
	}
	return rec.Device.Path, nil
}

func (h *imageHost) Detach(ctx context.Context, id string) error {
	return h.attach.Detach(ctx, attach.DetachOptions{Volume: id, Gather: h.gather})
}
