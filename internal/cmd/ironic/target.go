package ironic

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/ironicapi"
)

func newCmdTargetCreate(f *factory.Factory, r targetCmd) *cobra.Command {
	var p patchFlags
	var typ, volumeID, uuid string
	var bootIndex int
	cmd := &cobra.Command{
		Use:   "create --node NODE --type VOLUME_TYPE --boot-index N --volume-id ID",
		Short: "Create a volume target",
		Long: `Create a volume target for a node. --type is the volume's
driver_volume_type (iscsi, fibre_channel, rbd, nfs, ...), --boot-index
orders the node's volumes (0 boots first; one target per index),
--volume-id is the Cinder volume's UUID. Properties holding credentials
(auth_password, ...) are printed masked.`,
		Example: `  brick ironic target create --node node-1 --type iscsi --boot-index 0 \
      --volume-id 7b6c1a6e-3f1e-4a53-b8f1-2f5e0c0d9a11 \
      --property target_iqn=iqn.2010-10.org.openstack:volume-7b6c --property target_lun=1`,
		Args: cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&p.node, "node", "", "node name or UUID (required)")
	fl.StringVar(&typ, "type", "", "volume type (driver_volume_type): iscsi, fibre_channel, rbd, nfs, ... (required)")
	fl.IntVar(&bootIndex, "boot-index", 0, "boot order of the volume, 0 or more (required)")
	fl.StringVar(&volumeID, "volume-id", "", "Cinder volume UUID (required)")
	fl.StringArrayVar(&p.props, "property", nil, "KEY=VALUE connection property (repeatable)")
	fl.StringArrayVar(&p.extra, "extra", nil, "KEY=VALUE metadata (repeatable)")
	fl.StringVar(&uuid, "uuid", "", "UUID for the target (default: Ironic picks one)")
	for _, n := range []string{"node", "type", "boot-index", "volume-id"} {
		_ = cmd.MarkFlagRequired(n)
	}
	check := func() error {
		if err := p.parse(f); err != nil {
			return err
		}
		if bootIndex < 0 {
			return factory.UsageError{Err: fmt.Errorf("--boot-index %d: must be 0 or more", bootIndex)}
		}
		return nil
	}
	return r.writeCommand(f, cmd, check,
		func(ctx context.Context, sc *gophercloud.ServiceClient, _ []string) (*ironicapi.VolumeTarget, error) {
			nodeUUID, err := ResolveNode(ctx, sc, p.node)
			if err != nil {
				return nil, err
			}
			return ironicapi.CreateTarget(ctx, sc, ironicapi.TargetCreateOpts{
				NodeUUID: nodeUUID, VolumeType: typ, BootIndex: bootIndex, VolumeID: volumeID,
				Properties: p.propMap, Extra: p.extraMap, UUID: uuid,
			}).Extract()
		})
}

func newCmdTargetSet(f *factory.Factory, r targetCmd) *cobra.Command {
	var p patchFlags
	var typ, volumeID string
	var bootIndex int
	cmd := &cobra.Command{
		Use:   "set UUID",
		Short: "Change a volume target (the node must be powered off)",
		Args:  cobra.ExactArgs(1),
	}
	fl := cmd.Flags()
	fl.StringVar(&p.node, "node", "", "move the target to this node (name or UUID)")
	fl.StringVar(&typ, "type", "", "new volume type")
	fl.IntVar(&bootIndex, "boot-index", 0, "new boot index")
	fl.StringVar(&volumeID, "volume-id", "", "new Cinder volume UUID")
	fl.StringArrayVar(&p.props, "property", nil, "KEY=VALUE property to add or change (repeatable)")
	fl.StringArrayVar(&p.extra, "extra", nil, "KEY=VALUE metadata to add or change (repeatable)")
	own := func() ([]ironicapi.PatchOp, error) {
		var ops []ironicapi.PatchOp
		if typ != "" {
			ops = append(ops, ironicapi.Replace("/volume_type", typ))
		}
		if cmd.Flags().Changed("boot-index") {
			ops = append(ops, ironicapi.Replace("/boot_index", bootIndex))
		}
		if volumeID != "" {
			ops = append(ops, ironicapi.Replace("/volume_id", volumeID))
		}
		return ops, nil
	}
	return r.writeCommand(f, cmd, func() error { return p.parse(f) },
		func(ctx context.Context, sc *gophercloud.ServiceClient, args []string) (*ironicapi.VolumeTarget, error) {
			ops, err := p.setOps(ctx, sc, own)
			if err != nil {
				return nil, err
			}
			if len(ops) == 0 {
				return nil, factory.UsageError{Err: fmt.Errorf("nothing to set: give --node, --type, --boot-index, --volume-id, --property or --extra")}
			}
			return ironicapi.UpdateTarget(ctx, sc, args[0], ironicapi.TargetUpdateOpts(ops)).Extract()
		})
}

func newCmdTargetUnset(f *factory.Factory, r targetCmd) *cobra.Command {
	var p patchFlags
	cmd := &cobra.Command{
		Use:   "unset UUID (--property KEY | --extra KEY)...",
		Short: "Remove properties or extra keys from a volume target (the node must be powered off)",
		Args:  cobra.ExactArgs(1),
	}
	cmd.Flags().StringArrayVar(&p.props, "property", nil, "property KEY to remove (repeatable)")
	cmd.Flags().StringArrayVar(&p.extra, "extra", nil, "extra KEY to remove (repeatable)")
	check := func() error {
		if len(p.unsetOps()) == 0 {
			return factory.UsageError{Err: fmt.Errorf("nothing to unset: give --property KEY or --extra KEY")}
		}
		return nil
	}
	return r.writeCommand(f, cmd, check,
		func(ctx context.Context, sc *gophercloud.ServiceClient, args []string) (*ironicapi.VolumeTarget, error) {
			return ironicapi.UpdateTarget(ctx, sc, args[0], ironicapi.TargetUpdateOpts(p.unsetOps())).Extract()
		})
}
