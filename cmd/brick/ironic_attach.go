package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/ironicattach"
)

// ironicAttachCommands are attach-volume and detach-volume.
func (a *app) ironicAttachCommands() []*cobra.Command {
	return []*cobra.Command{a.ironicAttachVolumeCommand(), a.ironicDetachVolumeCommand()}
}

// ironicManager builds the attach-volume use case from the auth flags.
func (a *app) ironicManager(ctx context.Context) (*ironicattach.Manager, error) {
	c, err := a.cinderClient(ctx)
	if err != nil {
		return nil, err
	}
	sc, err := a.ironicClient(ctx)
	if err != nil {
		return nil, err
	}
	return &ironicattach.Manager{Cinder: c, Ironic: sc, Secrets: a.redactor, Log: a.logger}, nil
}

func (a *app) ironicAttachVolumeCommand() *cobra.Command {
	var o ironicattach.AttachOpts
	cmd := &cobra.Command{
		Use:   "attach-volume --node NODE VOLUME",
		Short: "Export a Cinder volume to an Ironic node and record it as the node's volume target",
		Long: `The standalone boot-from-volume tool: build a Cinder connector from the
node's registered volume connectors (not this host's: iqn -> initiator,
wwpn/wwnn -> wwpns/wwnns, ip -> ip, host = the node's UUID), have Cinder
export the volume to it (v3 attachment, or reserve + initialize_connection
+ attach on older Cinder, with host_name = the node's UUID), and create the
node's volume target with the connection info Cinder returned
(volume_type from driver_volume_type; credentials are stored by Ironic and
shown masked). Nothing is connected on this host.

Any failure undoes what was done, newest first. Register the node's
initiators first (brick ironic register on the node, or brick ironic
connector create).`,
		Example: `  brick ironic attach-volume --node node-1 boot-vol
  brick ironic attach-volume --node node-1 data-vol --boot-index 1 -f json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Volume = args[0]
			if o.BootIndex < 0 {
				return usageError{fmt.Errorf("--boot-index %d: must be 0 or more", o.BootIndex)}
			}
			m, err := a.ironicManager(cmd.Context())
			if err != nil {
				return err
			}
			res, err := m.AttachVolume(cmd.Context(), o)
			if err != nil {
				return err
			}
			return a.out.PrintRecord(cmd.OutOrStdout(), output.Record{
				{Name: "node_uuid", Value: res.Node.UUID},
				{Name: "node_name", Value: res.Node.Name},
				{Name: "volume_id", Value: res.VolumeID},
				{Name: "attachment_id", Value: res.AttachmentID},
				{Name: "flow", Value: res.Flow},
				{Name: "target_uuid", Value: res.Target.UUID},
				{Name: "volume_type", Value: res.Target.VolumeType},
				{Name: "boot_index", Value: res.Target.BootIndex},
				{Name: "properties", Value: maskProperties(res.Target.Properties)},
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Node, "node", "", "Ironic node name or UUID (required)")
	f.IntVar(&o.BootIndex, "boot-index", 0, "boot index of the volume target (0 boots first)")
	f.BoolVar(&o.Multipath, "multipath", false, "ask Cinder for a multipath export (every portal)")
	_ = cmd.MarkFlagRequired("node")
	return cmd
}

func (a *app) ironicDetachVolumeCommand() *cobra.Command {
	var o ironicattach.DetachOpts
	cmd := &cobra.Command{
		Use:   "detach-volume --node NODE VOLUME",
		Short: "Delete the node's volume target for a volume and end its Cinder attachment",
		Long: `The reverse of attach-volume: delete the node's volume targets for the
volume, then end the volume's Cinder attachments to the node (terminate the
connection and detach). Ironic deletes targets only while the node is
powered off; when it is not, nothing is changed (the node may be running
from the volume). Running it again after a partial failure finishes the
job; a volume with nothing left to undo is success.`,
		Example: `  brick ironic detach-volume --node node-1 boot-vol`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Volume = args[0]
			m, err := a.ironicManager(cmd.Context())
			if err != nil {
				return err
			}
			res, err := m.DetachVolume(cmd.Context(), o)
			if err != nil {
				return err
			}
			return a.out.PrintRecord(cmd.OutOrStdout(), output.Record{
				{Name: "node_uuid", Value: res.Node.UUID},
				{Name: "volume_id", Value: res.VolumeID},
				{Name: "deleted_targets", Value: res.DeletedTargets},
				{Name: "detached_attachments", Value: res.Detached},
			})
		},
	}
	cmd.Flags().StringVar(&o.Node, "node", "", "Ironic node name or UUID (required)")
	_ = cmd.MarkFlagRequired("node")
	return cmd
}
