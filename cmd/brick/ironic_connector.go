package main

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/ironicapi"
)

func (a *app) ironicConnectorCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "connector",
		Short: "Manage Ironic volume connectors (a node's storage initiators)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	r := connectorResource()
	cmd.AddCommand(a.connectorCreateCommand(r), r.listCommand(a), r.showCommand(a),
		a.connectorSetCommand(r), a.connectorUnsetCommand(r), r.deleteCommand(a))
	return cmd
}

func connectorResource() volumeResource[ironicapi.Connector] {
	return volumeResource[ironicapi.Connector]{
		name:        "connector",
		columns:     connectorColumns,
		listColumns: 4,
		fields:      ironicapi.ConnectorFields,
		listExample: `  brick ironic connector list --node node-1
  brick ironic connector list --long -f json
  brick ironic connector list --fields uuid,connector_id --sort connector_id:desc`,
		value: connectorValue,
		list: func(ctx context.Context, sc *gophercloud.ServiceClient, q listQuery) ([]ironicapi.Connector, error) {
			opts := ironicapi.ConnectorListOpts{Node: q.node, Limit: q.limit, Marker: q.marker,
				SortKey: q.sortKey, SortDir: q.sortDir, Fields: q.fields, Detail: q.detail}
			return ironicapi.AllConnectors(ctx, ironicapi.ListConnectors(sc, opts), q.limit)
		},
		get: func(ctx context.Context, sc *gophercloud.ServiceClient, id string, opts *ironicapi.GetOpts) (*ironicapi.Connector, error) {
			return ironicapi.GetConnector(ctx, sc, id, opts).Extract()
		},
		deleteByUUID: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error {
			return ironicapi.DeleteConnector(ctx, sc, id).ExtractErr()
		},
	}
}

func (a *app) connectorCreateCommand(r volumeResource[ironicapi.Connector]) *cobra.Command {
	var node, typ, id, uuid string
	var extra []string
	cmd := &cobra.Command{
		Use:   "create --node NODE --type TYPE --connector-id ID",
		Short: "Create a volume connector",
		Long: `Create a volume connector for a node. The ID is checked against its type
(iqn: iSCSI name; ip: IPv4/IPv6 address; mac: MAC address; wwnn/wwpn: 16 hex
digits, colons allowed; port/portgroup: a UUID) and stored normalized. A
type and ID can belong to one node only.`,
		Example: `  brick ironic connector create --node node-1 --type iqn --connector-id iqn.2004-10.com.example:node-1
  brick ironic connector create --node node-1 --type wwpn --connector-id 21:00:00:24:ff:5a:7b:3c --extra rack=r1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ex, err := parseKV("extra", extra)
			if err != nil {
				return err
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
			c, err := ironicapi.CreateConnector(ctx, sc, ironicapi.ConnectorCreateOpts{
				NodeUUID: nodeUUID, Type: typ, ConnectorID: id, Extra: ex, UUID: uuid,
			}).Extract()
			if err != nil {
				return err
			}
			return r.print(a, cmd, c, nil)
		},
	}
	f := cmd.Flags()
	f.StringVar(&node, "node", "", "node name or UUID (required)")
	f.StringVar(&typ, "type", "", "connector type: iqn, ip, mac, wwnn, wwpn, port, portgroup (required)")
	f.StringVar(&id, "connector-id", "", "the initiator's ID in its type's format (required)")
	f.StringArrayVar(&extra, "extra", nil, "KEY=VALUE metadata (repeatable)")
	f.StringVar(&uuid, "uuid", "", "UUID for the connector (default: Ironic picks one)")
	for _, n := range []string{"node", "type", "connector-id"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}

func (a *app) connectorSetCommand(r volumeResource[ironicapi.Connector]) *cobra.Command {
	var node, typ, id string
	var extra []string
	cmd := &cobra.Command{
		Use:   "set UUID",
		Short: "Change a volume connector (the node must be powered off)",
		Example: `  brick ironic connector set 5ef348bc-ce31-44ce-a324-7cab14b372e8 --connector-id iqn.2004-10.com.example:new
  brick ironic connector set 5ef348bc-ce31-44ce-a324-7cab14b372e8 --extra rack=r2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ex, err := parseKV("extra", extra)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			sc, err := a.ironicClient(ctx)
			if err != nil {
				return err
			}
			var ops ironicapi.ConnectorUpdateOpts
			if node != "" {
				nodeUUID, err := resolveNode(ctx, sc, node)
				if err != nil {
					return err
				}
				ops = append(ops, ironicapi.Replace("/node_uuid", nodeUUID))
			}
			if typ != "" || id != "" {
				// The server checks neither: check the pair, fetching the
				// half the user did not give.
				if typ == "" || id == "" {
					cur, err := ironicapi.GetConnector(ctx, sc, args[0], nil).Extract()
					if err != nil {
						return err
					}
					if typ == "" {
						typ = cur.Type
					}
					if id == "" {
						id = cur.ConnectorID
					}
				}
				norm, err := ironicapi.NormalizeConnectorID(typ, id)
				if err != nil {
					return usageError{err}
				}
				ops = append(ops, ironicapi.Replace("/type", typ), ironicapi.Replace("/connector_id", norm))
			}
			for k, v := range ex {
				ops = append(ops, ironicapi.Add(ironicapi.ExtraPath(k), v))
			}
			if len(ops) == 0 {
				return usageError{fmt.Errorf("nothing to set: give --node, --type, --connector-id or --extra")}
			}
			c, err := ironicapi.UpdateConnector(ctx, sc, args[0], ops).Extract()
			if err != nil {
				return err
			}
			return r.print(a, cmd, c, nil)
		},
	}
	f := cmd.Flags()
	f.StringVar(&node, "node", "", "move the connector to this node (name or UUID)")
	f.StringVar(&typ, "type", "", "new connector type")
	f.StringVar(&id, "connector-id", "", "new connector ID")
	f.StringArrayVar(&extra, "extra", nil, "KEY=VALUE metadata to add or change (repeatable)")
	return cmd
}

func (a *app) connectorUnsetCommand(r volumeResource[ironicapi.Connector]) *cobra.Command {
	var extra []string
	cmd := &cobra.Command{
		Use:   "unset UUID --extra KEY",
		Short: "Remove extra keys from a volume connector (the node must be powered off)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			sc, err := a.ironicClient(ctx)
			if err != nil {
				return err
			}
			var ops ironicapi.ConnectorUpdateOpts
			for _, k := range extra {
				ops = append(ops, ironicapi.Remove(ironicapi.ExtraPath(k)))
			}
			c, err := ironicapi.UpdateConnector(ctx, sc, args[0], ops).Extract()
			if err != nil {
				return err
			}
			return r.print(a, cmd, c, nil)
		},
	}
	cmd.Flags().StringArrayVar(&extra, "extra", nil, "extra KEY to remove (repeatable)")
	_ = cmd.MarkFlagRequired("extra")
	return cmd
}
