package reconcile

import (
	"context"
	"fmt"

	"github.com/brick-storage/brick/internal/cmd/connflags"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/spf13/cobra"
)

// restoreOptions are restore's: the boot and shutdown half of persistent
// attachments (packaging/systemd/brick-restore.service runs it).
type restoreOptions struct {
	f        *factory.Factory
	Attacher connflags.Attacher
	Shutdown bool
}

// NewCmdRestore is `brick restore`.
func NewCmdRestore(f *factory.Factory, runF func(context.Context, *restoreOptions) error) *cobra.Command {
	o := &restoreOptions{f: f}
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "Reconnect persistent attachments at boot (--shutdown: take them down, keeping Cinder's attachment)",
		Long: `Bring back every volume attached with 'brick local-attach --persist' after a
reboot: the connection info comes from Cinder's attachment for this host
(never from a file), then the device is connected, dm-crypt re-opened when
the volume is encrypted, and the mount brick made is made again. A volume
whose attachment was deleted in Cinder meanwhile is not re-attached: its
record is dropped and the line says so.

With --shutdown every persistent attachment is unmounted, closed, flushed
and disconnected, and its Cinder attachment and record are kept for the
next boot. The systemd unit brick-restore.service runs both; order a mount
or a service that needs a volume after it.`,
		Example: `  brick restore
  brick restore --shutdown`,
		Args: cobra.NoArgs,
		RunE: factory.RunE(o, o.validate, nil, restoreRun, runF),
	}
	addFlags(f, cmd, &o.Attacher)
	cmd.Flags().BoolVar(&o.Shutdown, "shutdown", false, "take persistent attachments down, keeping their Cinder attachments")
	return cmd
}

func (o *restoreOptions) validate() error { return o.Attacher.Volume.Validate(o.f.Host()) }

func restoreRun(ctx context.Context, o *restoreOptions) error {
	f, op := o.f, "restore"
	if o.Shutdown {
		op = "restore --shutdown"
	}
	r, err := reconciler(ctx, f, &o.Attacher, op)
	if err != nil {
		return err
	}
	run := r.Restore
	if o.Shutdown {
		run = r.Shutdown
	}
	ctx, end := f.Track(ctx, op, "")
	rep, err := run(ctx)
	end()
	if rep != nil {
		if perr := printReport(f, rep, true); perr != nil && err == nil {
			err = perr
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}
