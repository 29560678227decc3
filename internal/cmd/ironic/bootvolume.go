package ironic

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/internal/cmd/connflags"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/internal/view"
	"github.com/brick-storage/brick/ironicattach"
)

// bootVolumeOptions are boot-from-volume's: set up (--volume, or --image
// first), or --undo.
type bootVolumeOptions struct {
	f      *factory.Factory
	Boot   ironicattach.BootOpts
	Image  ironicattach.ImageOpts
	Volume connflags.Volume
	Undo   bool
}

func newCmdBootVolume(f *factory.Factory, runF func(context.Context, *bootVolumeOptions) error) *cobra.Command {
	o := &bootVolumeOptions{f: f}
	cmd := &cobra.Command{
		Use:   "boot-from-volume NODE (--volume VOLUME | --image FILE --size GIB | --undo)",
		Short: "Set up an Ironic node to boot from a Cinder volume over iSCSI with iPXE",
		Long:  bootVolumeLong,
		Example: `  brick ironic boot-from-volume node-1 --volume boot-vol --initiator iqn.2026-12.org.example:node-1
  brick ironic boot-from-volume node-1 --volume boot-vol --deploy
  brick ironic boot-from-volume node-1 --image disk.raw --size 4 --nic eth0
  brick ironic boot-from-volume node-1 --undo`,
		Args: cobra.ExactArgs(1),
		RunE: factory.RunE(o, o.validate, func(args []string) { o.Boot.Node = args[0] }, bootVolumeRun, runF),
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Image.Path, "image", "", "raw disk image to write onto a new volume (with --size)")
	fl.IntVar(&o.Image.SizeGiB, "size", 0, "size in GiB of the new volume for --image")
	fl.StringVar(&o.Image.Name, "volume-name", "", "name of the new volume for --image (default brick-boot-NODE)")
	o.Volume.Add(fl, connflags.ForAttach)
	factory.HideFlags(fl, connflags.OtherProtocolFlags...) // Ironic boots from iSCSI volumes only
	fl.StringVar(&o.Boot.Volume, "volume", "", "Cinder volume (name or ID) to boot from")
	fl.StringVar(&o.Boot.Initiator, "initiator", "", "the node's iSCSI name, registered as its iqn connector if it has none")
	fl.BoolVar(&o.Boot.Deploy, "deploy", false, "deploy the node and wait until it is active")
	fl.BoolVar(&o.Undo, "undo", false, "reverse what brick set up for the node (and the deploy if brick made it)")
	fl.DurationVar(&o.Boot.Wait, "wait", 10*time.Minute, "how long to wait for a deploy or undeploy")
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

// validate checks the flags' combination.
func (o *bootVolumeOptions) validate() error {
	if n := countSet(o.Undo, o.Boot.Volume != "", o.Image.Path != ""); n != 1 {
		return errors.New("give --volume VOLUME or --image FILE --size GIB to set up, or --undo to reverse")
	}
	if o.Undo && (o.Boot.Initiator != "" || o.Boot.Deploy) {
		return errors.New("--undo takes no --initiator or --deploy")
	}
	if (o.Image.Path == "") != (o.Image.SizeGiB == 0 && o.Image.Name == "") {
		return errors.New("--size and --volume-name go with --image, and --image needs --size")
	}
	return o.Volume.Validate(o.f.Host())
}

// bootVolumeRun runs the set-up chosen: --undo, --image, or --volume.
func bootVolumeRun(ctx context.Context, o *bootVolumeOptions) error {
	f := o.f
	switch {
	case o.Undo:
		return bootVolumeUndo(ctx, o)
	case o.Image.Path != "":
		return bootImage(ctx, o)
	}
	m, err := Manager(ctx, f)
	if err != nil {
		return err
	}
	res, err := m.BootFromVolume(ctx, o.Boot)
	if err != nil {
		return err
	}
	return f.Output().PrintRecord(f.Stdout, view.Boot(res))
}

// bootVolumeUndo runs --undo; it needs Ironic only.
func bootVolumeUndo(ctx context.Context, o *bootVolumeOptions) error {
	f := o.f
	sc, err := f.Ironic(ctx)
	if err != nil {
		return err
	}
	m := &ironicattach.Manager{Ironic: sc, Log: f.Logger()}
	res, err := m.UndoBootFromVolume(ctx, o.Boot)
	if err != nil {
		return err
	}
	return f.Output().PrintRecord(f.Stdout, output.Record{
		{Name: "node_uuid", Value: res.Node.UUID},
		{Name: "volume_id", Value: res.Record.VolumeID},
		{Name: "changes", Value: res.Changes},
	})
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

// bootImage runs --image: it needs root (it attaches the new volume
// here), Cinder, Ironic and local-attach's connectors.
func bootImage(ctx context.Context, o *bootVolumeOptions) error {
	f := o.f
	if err := f.NeedRoot("boot-from-volume --image"); err != nil {
		return err
	}
	m, err := Manager(ctx, f)
	if err != nil {
		return err
	}
	c, err := f.Cinder(ctx)
	if err != nil {
		return err
	}
	am := &attach.Manager{Host: f.Host(), Connectors: o.Volume.Opts.Registry(f.Host()), Cinder: c}
	h := ironicattach.CinderImageHost{Cinder: c, Local: attach.BlockAttacher{Manager: am, Gather: o.Volume.Gather()}}
	ctx, end := f.Track(f.TestHooks(ctx), "boot-from-volume", o.Boot.Node)
	start := time.Now()
	img := o.Image
	img.Progress = func(done, total int64) {
		f.Status().Detail(ironicattach.WriteProgress(done, total, time.Since(start)))
	}
	res, ir, err := m.BootFromImage(ctx, o.Boot, img, h)
	end()
	if err != nil {
		return err
	}
	rate := float64(ir.Bytes) / (1 << 20) / max(ir.Write.Seconds(), 1e-3)
	return f.Output().PrintRecord(f.Stdout, append(view.Boot(res), []output.Field{
		{Name: "image_bytes", Value: ir.Bytes},
		{Name: "image_write_seconds", Value: fmt.Sprintf("%.1f", ir.Write.Seconds())},
		{Name: "image_write_mib_per_s", Value: fmt.Sprintf("%.1f", rate)},
	}...))
}
