package main

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/ironicapi"
)

func (a *app) ironicTargetCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "target",
		Short: "Manage Ironic volume targets (the volumes a node uses or boots from)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	r := targetResource()
	cmd.AddCommand(a.targetCreateCommand(r), r.listCommand(a), r.showCommand(a),
		a.targetSetCommand(r), a.targetUnsetCommand(r), r.deleteCommand(a))
	return cmd
}

func targetResource() volumeResource[ironicapi.Target] {
	return volumeResource[ironicapi.Target]{
		name:        "target",
		columns:     targetColumns,
		listColumns: 5,
		fields:      ironicapi.TargetFields,
		listExample: `  brick ironic target list --node node-1
  brick ironic target list --long -f json`,
		showSecrets: true,
		value:       targetValue,
		list: func(ctx context.Context, sc *gophercloud.ServiceClient, q listQuery) ([]ironicapi.Target, error) {
			opts := ironicapi.TargetListOpts{Node: q.node, Limit: q.limit, Marker: q.marker,
				SortKey: q.sortKey, SortDir: q.sortDir, Fields: q.fields, Detail: q.detail}
			return ironicapi.AllTargets(ctx, ironicapi.ListTargets(sc, opts), q.limit)
		},
		get: func(ctx context.Context, sc *gophercloud.ServiceClient, id string, opts *ironicapi.GetOpts) (*ironicapi.Target, error) {
			return ironicapi.GetTarget(ctx, sc, id, opts).Extract()
		},
		deleteByUUID: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error {
			return ironicapi.DeleteTarget(ctx, sc, id).ExtractErr()
		},
	}
}

func (a *app) targetCreateCommand(r volumeResource[ironicapi.Target]) *cobra.Command {
	var node, typ, volumeID, uuid string
	var bootIndex int
	var props, extra []string
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := parseKV("property", props)
			if err != nil {
				return err
			}
			a.registerSecrets(p)
			ex, err := parseKV("extra", extra)
			if err != nil {
				return err
			}
			if bootIndex < 0 {
				return usageError{fmt.Errorf("--boot-index %d: must be 0 or more", bootIndex)}
			}
			ctx := cmd.Context()
			sc, err := a.ironicClient(ctx)
			if err != nil {
				return err
			}
			nodeUUID, err := resolveNode(ctx, sc, node)
			if err != nil {
				return err
			}
			t, err := ironicapi.CreateTarget(ctx, sc, ironicapi.TargetCreateOpts{
				NodeUUID: nodeUUID, VolumeType: typ, BootIndex: bootIndex, VolumeID: volumeID,
				Properties: p, Extra: ex, UUID: uuid,
			}).Extract()
			if err != nil {
				return err
			}
			return r.print(a, cmd, t, nil)
		},
	}
	f := cmd.Flags()
	f.StringVar(&node, "node", "", "node name or UUID (required)")
	f.StringVar(&typ, "type", "", "volume type (driver_volume_type): iscsi, fibre_channel, rbd, nfs, ... (required)")
	f.IntVar(&bootIndex, "boot-index", 0, "boot order of the volume, 0 or more (required)")
	f.StringVar(&volumeID, "volume-id", "", "Cinder volume UUID (required)")
	f.StringArrayVar(&props, "property", nil, "KEY=VALUE connection property (repeatable)")
	f.StringArrayVar(&extra, "extra", nil, "KEY=VALUE metadata (repeatable)")
	f.StringVar(&uuid, "uuid", "", "UUID for the target (default: Ironic picks one)")
	for _, n := range []string{"node", "type", "boot-index", "volume-id"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}

func (a *app) targetSetCommand(r volumeResource[ironicapi.Target]) *cobra.Command {
	var node, typ, volumeID string
	var bootIndex int
	var props, extra []string
	cmd := &cobra.Command{
		Use:   "set UUID",
		Short: "Change a volume target (the node must be powered off)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := parseKV("property", props)
			if err != nil {
				return err
			}
			a.registerSecrets(p)
			ex, err := parseKV("extra", extra)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			sc, err := a.ironicClient(ctx)
			if err != nil {
				return err
			}
			var ops ironicapi.TargetUpdateOpts
			if node != "" {
				nodeUUID, err := resolveNode(ctx, sc, node)
				if err != nil {
					return err
				}
				ops = append(ops, ironicapi.Replace("/node_uuid", nodeUUID))
			}
			if typ != "" {
				ops = append(ops, ironicapi.Replace("/volume_type", typ))
			}
			if cmd.Flags().Changed("boot-index") {
				ops = append(ops, ironicapi.Replace("/boot_index", bootIndex))
			}
			if volumeID != "" {
				ops = append(ops, ironicapi.Replace("/volume_id", volumeID))
			}
			for k, v := range p {
				ops = append(ops, ironicapi.Add(ironicapi.PropertyPath(k), v))
			}
			for k, v := range ex {
				ops = append(ops, ironicapi.Add(ironicapi.ExtraPath(k), v))
			}
			if len(ops) == 0 {
				return usageError{fmt.Errorf("nothing to set: give --node, --type, --boot-index, --volume-id, --property or --extra")}
			}
			t, err := ironicapi.UpdateTarget(ctx, sc, args[0], ops).Extract()
			if err != nil {
				return err
			}
			return r.print(a, cmd, t, nil)
		},
	}
	f := cmd.Flags()
	f.StringVar(&node, "node", "", "move the target to this node (name or UUID)")
	f.StringVar(&typ, "type", "", "new volume type")
	f.IntVar(&bootIndex, "boot-index", 0, "new boot index")
	f.StringVar(&volumeID, "volume-id", "", "new Cinder volume UUID")
	f.StringArrayVar(&props, "property", nil, "KEY=VALUE property to add or change (repeatable)")
	f.StringArrayVar(&extra, "extra", nil, "KEY=VALUE metadata to add or change (repeatable)")
	return cmd
}

func (a *app) targetUnsetCommand(r volumeResource[ironicapi.Target]) *cobra.Command {
	var props, extra []string
	cmd := &cobra.Command{
		Use:   "unset UUID (--property KEY | --extra KEY)...",
		Short: "Remove properties or extra keys from a volume target (the node must be powered off)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ops ironicapi.TargetUpdateOpts
			for _, k := range props {
				ops = append(ops, ironicapi.Remove(ironicapi.PropertyPath(k)))
			}
			for _, k := range extra {
				ops = append(ops, ironicapi.Remove(ironicapi.ExtraPath(k)))
			}
			if len(ops) == 0 {
				return usageError{fmt.Errorf("nothing to unset: give --property KEY or --extra KEY")}
			}
			ctx := cmd.Context()
			sc, err := a.ironicClient(ctx)
			if err != nil {
				return err
			}
			t, err := ironicapi.UpdateTarget(ctx, sc, args[0], ops).Extract()
			if err != nil {
				return err
			}
			return r.print(a, cmd, t, nil)
		},
	}
	cmd.Flags().StringArrayVar(&props, "property", nil, "property KEY to remove (repeatable)")
	cmd.Flags().StringArrayVar(&extra, "extra", nil, "extra KEY to remove (repeatable)")
	return cmd
}
