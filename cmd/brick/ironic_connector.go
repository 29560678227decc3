package main

import (
	"fmt"

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
	cmd.AddCommand(a.connectorCreateCommand(), a.connectorListCommand(), a.connectorShowCommand(),
		a.connectorSetCommand(), a.connectorUnsetCommand(), a.connectorDeleteCommand())
	return cmd
}

func (a *app) printConnector(cmd *cobra.Command, c *ironicapi.Connector, fields []string) error {
	r, err := showRecord(connectorColumns, fields, func(f string) any { return connectorValue(*c, f) })
	if err != nil {
		return err
	}
	return a.out.printRecord(cmd.OutOrStdout(), r)
}

func (a *app) connectorCreateCommand() *cobra.Command {
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
			return a.printConnector(cmd, c, nil)
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

func (a *app) connectorListCommand() *cobra.Command {
	var l listFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List volume connectors",
		Long: `List volume connectors, following every page: unlike ironicclient, each page
keeps the --node filter (Ironic's next-page link drops it).`,
		Example: `  brick ironic connector list --node node-1
  brick ironic connector list --long -f json
  brick ironic connector list --fields uuid,connector_id --sort connector_id:desc`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cols, err := pickColumns(connectorColumns, 4, l.long, l.fields)
			if err != nil {
				return err
			}
			key, dir, err := sortOpts(l.sort)
			if err != nil {
				return err
			}
			if l.limit < 0 {
				return usageError{fmt.Errorf("--limit %d: must be 0 or more", l.limit)}
			}
			ctx := cmd.Context()
			sc, err := a.ironicClient(ctx)
			if err != nil {
				return err
			}
			nodeUUID, err := resolveNode(ctx, sc, l.node)
			if err != nil {
				return err
			}
			opts := ironicapi.ConnectorListOpts{Node: nodeUUID, Limit: l.limit, Marker: l.marker, SortKey: key, SortDir: dir}
			if len(l.fields) > 0 {
				opts.Fields = fieldNames(cols)
			} else if l.long {
				opts.Detail = true
			}
			list, err := ironicapi.AllConnectors(ctx, ironicapi.ListConnectors(sc, opts), l.limit)
			if err != nil {
				return err
			}
			t := table{Columns: make([]string, len(cols))}
			for i, c := range cols {
				t.Columns[i] = c.label
			}
			for _, c := range list {
				row := make([]any, len(cols))
				for i, col := range cols {
					row[i] = connectorValue(c, col.field)
				}
				t.Rows = append(t.Rows, row)
			}
			return a.out.printTable(cmd.OutOrStdout(), t)
		},
	}
	l.add(cmd, "connectors", ironicapi.ConnectorFields)
	return cmd
}

func (a *app) connectorShowCommand() *cobra.Command {
	var fields []string
	cmd := &cobra.Command{
		Use:   "show UUID",
		Short: "Show a volume connector",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			sc, err := a.ironicClient(ctx)
			if err != nil {
				return err
			}
			var opts *ironicapi.GetOpts
			if len(fields) > 0 {
				opts = &ironicapi.GetOpts{Fields: fields}
			}
			c, err := ironicapi.GetConnector(ctx, sc, args[0], opts).Extract()
			if err != nil {
				return err
			}
			return a.printConnector(cmd, c, fields)
		},
	}
	cmd.Flags().StringSliceVar(&fields, "fields", nil, "show only these fields; repeatable or comma-separated")
	return cmd
}

func (a *app) connectorSetCommand() *cobra.Command {
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
			return a.printConnector(cmd, c, nil)
		},
	}
	f := cmd.Flags()
	f.StringVar(&node, "node", "", "move the connector to this node (name or UUID)")
	f.StringVar(&typ, "type", "", "new connector type")
	f.StringVar(&id, "connector-id", "", "new connector ID")
	f.StringArrayVar(&extra, "extra", nil, "KEY=VALUE metadata to add or change (repeatable)")
	return cmd
}

func (a *app) connectorUnsetCommand() *cobra.Command {
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
			return a.printConnector(cmd, c, nil)
		},
	}
	cmd.Flags().StringArrayVar(&extra, "extra", nil, "extra KEY to remove (repeatable)")
	_ = cmd.MarkFlagRequired("extra")
	return cmd
}

func (a *app) connectorDeleteCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "delete UUID...",
		Short: "Delete volume connectors (their nodes must be powered off)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			sc, err := a.ironicClient(ctx)
			if err != nil {
				return err
			}
			return a.deleteAll(cmd, "volume connector", args, func(id string) error {
				return ironicapi.DeleteConnector(ctx, sc, id).ExtractErr()
			})
		},
	}
}
