// Package volume is brick's commands on the Cinder volumes of this host:
// local-attach, local-detach, list, extend, get-volume-paths,
// get-all-volume-paths and cleanup.
package volume

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/internal/cmd/connflags"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/internal/view"
	"github.com/brick-storage/brick/ironicattach"
)

// localAttachOptions are local-attach's.
type localAttachOptions struct {
	f        *factory.Factory
	Attacher connflags.Attacher
	Attach   attach.AttachOptions
}

// NewCmdLocalAttach is `brick local-attach VOLUME`.
func NewCmdLocalAttach(f *factory.Factory, runF func(context.Context, *localAttachOptions) error) *cobra.Command {
	o := &localAttachOptions{f: f}
	cmd := &cobra.Command{
		Use:   "local-attach VOLUME",
		Short: "Attach a Cinder volume (ID or name) to this host",
		Long: `Attach a Cinder volume to this host, without Nova: export it to this host
(Cinder's v3 attachments, else reserve + initialize_connection), connect it,
complete the attachment and keep a record under /var/lib/brick (0600, no
secrets). --mountpoint mounts it (nosuid,nodev); --mkfs TYPE formats it
first, and only when it is blank. Any failure undoes every step already
done, newest first; if brick itself is killed, 'brick cleanup' finishes.`,
		Example: `  brick local-attach my-volume --os-cloud mycloud
  brick local-attach 0b7d... --cinder-endpoint http://cinder:8776/v3 --os-auth-type noauth -f json
  brick local-attach data --multipath --mountpoint /srv/data --mkfs ext4`,
		Args: cobra.ExactArgs(1),
		RunE: factory.RunE(o, o.validate, func(args []string) { o.Attach.Volume = args[0] }, localAttachRun, runF),
	}
	fl := cmd.Flags()
	o.Attacher.Add(f, fl)
	f.AddRecordOutputFlags(fl)
	addLocalAttachFlags(fl, &o.Attach)
	return cmd
}

// validate checks everything local before a client is built: the mount
// and format options, mkfs.TYPE installed, --nic and --ip on this host.
func (o *localAttachOptions) validate() error {
	if err := attach.CheckOptions(o.f.Host(), &o.Attach); err != nil {
		return err
	}
	return o.Attacher.Volume.Validate(o.f.Host())
}

// localAttachRun is local-attach's body: the use case with this command's
// cloud clients, then the record.
func localAttachRun(ctx context.Context, o *localAttachOptions) error {
	f, ao := o.f, o.Attach
	if err := f.NeedRoot("local-attach"); err != nil {
		return err
	}
	ctx, end := f.Track(f.TestHooks(ctx), "local-attach", ao.Volume)
	defer end()
	m, err := o.Attacher.Manager(ctx, f, "local-attach", ao.Volume)
	if err != nil {
		return err
	}
	if ao.IronicNode != "" {
		sc, err := f.Ironic(ctx)
		if err != nil {
			return err
		}
		m.Targets = ironicattach.TargetRegistry{Client: sc}
	}
	ao.Gather = o.Attacher.Volume.Gather()
	rec, err := m.Attach(ctx, ao)
	end()
	if err != nil {
		return err
	}
	return f.Output().PrintRecord(f.Stdout, view.Attach(rec))
}

// addLocalAttachFlags adds what local-attach does beyond connecting.
func addLocalAttachFlags(f *pflag.FlagSet, ao *attach.AttachOptions) {
	f.Var(factory.NewChoice(&ao.Mode, "rw", "rw", "ro"), "mode", "attach mode: read-write or read-only")
	f.StringVar(&ao.Mountpoint, "mountpoint", "", "mount the device on this directory (created if missing)")
	f.StringVar(&ao.Mkfs, "mkfs", "", "format a BLANK device with this filesystem (ext4, xfs, ...) before mounting; needs --mountpoint")
	f.BoolVar(&ao.MkfsForce, "mkfs-force", false, "format even when blkid finds no signature but the first or last MiB is not all zeros (plain dm-crypt, raw data): with --mkfs the filesystem, on an encrypted volume's first attach its LUKS header")
	f.StringVar(&ao.MountFSType, "mount-fstype", "", "mount with this filesystem type (default: what blkid finds, if btrfs, ext2, ext3, ext4, vfat or xfs)")
	f.BoolVar(&ao.MountSuidDev, "mount-suid-dev", false, "mount without nosuid,nodev: set-uid programs and device files on the volume take effect (trusted volumes only)")
	f.StringVar(&ao.IronicNode, "ironic-node", "", "also register the volume as a volume target of this Ironic node (name or UUID)")
	f.IntVar(&ao.BootIndex, "boot-index", 0, "boot index of the Ironic volume target")
	f.BoolVar(&ao.Persist, "persist", false, "restore this attachment at boot (brick restore, brick-restore.service) and take it down at shutdown, keeping the Cinder attachment")
	f.BoolVar(&ao.NoDecrypt, "no-decrypt", false, "hand out an encrypted volume's ciphertext device instead of opening it (for backup tools)")
}

// localDetachOptions are local-detach's.
type localDetachOptions struct {
	f                 *factory.Factory
	Volume            connflags.Volume
	Detach            attach.DetachOptions
	deviceInfoIgnored string
}

func (o *localDetachOptions) validate() error { return o.Volume.Validate(o.f.Host()) }

// NewCmdLocalDetach is `brick local-detach VOLUME`.
func NewCmdLocalDetach(f *factory.Factory, runF func(context.Context, *localDetachOptions) error) *cobra.Command {
	o := &localDetachOptions{f: f}
	cmd := &cobra.Command{
		Use:   "local-detach VOLUME",
		Short: "Detach a Cinder volume (ID or name) from this host",
		Long: `Detach a volume attached with local-attach (or, without a local record, the
volume's attachment to this host in Cinder): unmount it if brick mounted it,
flush and disconnect it (refused while it is mounted or open, unless
--force), then end the Cinder attachment (attachment delete, or
begin_detaching + terminate_connection + os-detach; a failed disconnect rolls
the volume back to in-use). A volume that is not attached to this host is
left alone, and the command succeeds.`,
		Example: `  brick local-detach my-volume
  brick local-detach 0b7d... --attachment-id 9f1c...`,
		Args: cobra.ExactArgs(1),
		RunE: factory.RunE(o, o.validate, func(args []string) { o.Detach.Volume = args[0] }, localDetachRun, runF),
	}
	fl := cmd.Flags()
	f.AddAuthFlags(fl)
	f.AddHiddenOutputFlags(fl)
	o.Volume.Add(fl, connflags.ForDetach)
	fl.StringVar(&o.Detach.AttachmentID, "attachment-id", "", "the attachment to end, when the volume has several to this host")
	// python-brick-cinderclient-ext's spelling.
	fl.StringVar(&o.Detach.AttachmentID, "attachment-uuid", "", "alias of --attachment-id")
	_ = fl.MarkHidden("attachment-uuid")
	// python-brick-cinderclient-ext passes the device it printed at attach;
	// brick keeps its own record, so the value is not needed.
	fl.StringVar(&o.deviceInfoIgnored, "device-info", "", "accepted for python-brick-cinderclient-ext and ignored: brick keeps its own record")
	_ = fl.MarkHidden("device-info")
	fl.BoolVar(&o.Detach.Force, "force", false, "detach even if the device is mounted or open or a flush fails (unwritten data may be lost; a multipath map still held open is removed when its holder closes it), or, without brick's record, its WWID cannot be checked against Cinder's")
	return cmd
}

// localDetachRun detaches; a volume not attached here is success, with a
// note (as disconnect of a device that is gone succeeds).
func localDetachRun(ctx context.Context, o *localDetachOptions) error {
	f, ref := o.f, o.Detach.Volume
	if o.deviceInfoIgnored != "" {
		fmt.Fprintln(f.ErrWriter(), "brick: note: --device-info ignored: brick detaches from its own record of the attachment")
	}
	if err := f.NeedRoot("local-detach"); err != nil {
		return err
	}
	ctx, end := f.Track(f.TestHooks(ctx), "local-detach", ref)
	defer end()
	m, err := connflags.Manager(ctx, f, o.Volume.Opts, true, "local-detach", ref)
	if err != nil {
		return err
	}
	if sc, err := f.IronicTargets(ctx); err == nil && sc != nil {
		m.Targets = sc
	}
	do := o.Detach
	do.Gather = o.Volume.Gather()
	err = m.Detach(ctx, do)
	if errors.Is(err, attach.ErrNotAttached) {
		end()
		fmt.Fprintf(f.ErrWriter(), "brick: note: %s (nothing to do)\n", output.OneLine(f.Redactor.Redact(err.Error())))
		return nil
	}
	return err
}
