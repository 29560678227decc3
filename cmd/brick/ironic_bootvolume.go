package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/ironicattach"
)

func (a *app) ironicBootVolumeCommand() *cobra.Command {
	var o ironicattach.BootOpts
	var undo bool
	cmd := &cobra.Command{
		Use:   "boot-from-volume NODE (--volume VOLUME | --undo)",
		Short: "Set up an Ironic node to boot from a Cinder volume over iSCSI with iPXE",
		Long: `Do what Ironic's boot-from-volume guide leaves to a standalone operator, in
one step: make sure the node has an iqn volume connector (registered from
--initiator when it has none), a volume target for the volume with boot
index 0, the iscsi_boot:True capability, and the cinder storage and ipxe
boot interfaces. Then print what is left (the deploy), or with --deploy
ask Ironic to deploy the node and wait until it is active. Ironic's cinder
storage interface exports the volume to the node's initiator when it
deploys, and its iPXE configuration sanboots the volume.

Everything is checked before the first change: the node exists and is
enroll, manageable or available and not powered on, this Ironic serves API
1.32 or later, the node's hardware type has the cinder storage and ipxe
boot interfaces enabled, the volume is available and at least 1 GiB, the
node's iqn is unambiguous, and boot index 0 is free. A failure later
undoes what this run did, newest first. A second run changes nothing.

What brick made is recorded in the node's extra (brick_boot_from_volume);
--undo reverses exactly that (the deploy if brick deployed, the target and
connector it created, the interfaces and capability it changed) and leaves
everything else.`,
		Example: `  brick ironic boot-from-volume node-1 --volume boot-vol --initiator iqn.2026-12.org.example:node-1
  brick ironic boot-from-volume node-1 --volume boot-vol --deploy
  brick ironic boot-from-volume node-1 --undo`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Node = args[0]
			if undo == (o.Volume != "") {
				return usageError{fmt.Errorf("give --volume VOLUME to set up, or --undo to reverse")}
			}
			if undo && (o.Initiator != "" || o.Deploy) {
				return usageError{fmt.Errorf("--undo takes no --initiator or --deploy")}
			}
			if undo {
				return a.ironicBootVolumeUndo(cmd, o)
			}
			m, err := a.ironicManager(cmd.Context())
			if err != nil {
				return err
			}
			res, err := m.BootFromVolume(cmd.Context(), o)
			if err != nil {
				return err
			}
			return a.out.printRecord(cmd.OutOrStdout(), record{
				{"node_uuid", res.Node.UUID},
				{"node_name", res.Node.Name},
				{"provision_state", res.Node.ProvisionState},
				{"volume_id", res.VolumeID},
				{"initiator", res.Initiator},
				{"target_uuid", res.TargetUUID},
				{"changes", res.Changes},
				{"next", res.Next},
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Volume, "volume", "", "Cinder volume (name or ID) to boot from")
	f.StringVar(&o.Initiator, "initiator", "", "the node's iSCSI name, registered as its iqn connector if it has none")
	f.BoolVar(&o.Deploy, "deploy", false, "deploy the node and wait until it is active")
	f.BoolVar(&undo, "undo", false, "reverse what brick set up for the node (and the deploy if brick made it)")
	f.DurationVar(&o.Wait, "wait", 10*time.Minute, "how long to wait for a deploy or undeploy")
	return cmd
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
	return a.out.printRecord(cmd.OutOrStdout(), record{
		{"node_uuid", res.Node.UUID},
		{"volume_id", res.Record.VolumeID},
		{"changes", res.Changes},
	})
}
