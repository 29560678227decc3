package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// restoreCommand is the boot and shutdown half of persistent attachments
// (packaging/systemd/brick-restore.service runs it).
func (a *app) restoreCommand() *cobra.Command {
	var rf reconcileFlags
	var shutdown bool
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			op := "restore"
			if shutdown {
				op = "restore --shutdown"
			}
			r, err := a.reconciler(cmd.Context(), &rf, op)
			if err != nil {
				return err
			}
			run := r.Restore
			if shutdown {
				run = r.Shutdown
			}
			ctx, end := a.track(cmd.Context(), op, "")
			rep, err := run(ctx)
			end()
			if rep != nil {
				if perr := a.printReport(cmd, rep, true); perr != nil && err == nil {
					err = perr
				}
			}
			if err != nil {
				return fmt.Errorf("%s: %w", op, err)
			}
			return nil
		},
	}
	a.addReconcileFlags(cmd, &rf)
	cmd.Flags().BoolVar(&shutdown, "shutdown", false, "take persistent attachments down, keeping their Cinder attachments")
	return cmd
}
