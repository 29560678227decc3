package ironic

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/ironicapi"
)

func newCmdConnectorCreate(f *factory.Factory, r connectorCmd) *cobra.Command {
	var p patchFlags
	var typ, id, uuid string
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
	}
	fl := cmd.Flags()
	fl.StringVar(&p.node, "node", "", "node name or UUID (required)")
	fl.StringVar(&typ, "type", "", "connector type: iqn, ip, mac, wwnn, wwpn, port, portgroup (required)")
	fl.StringVar(&id, "connector-id", "", "the initiator's ID in its type's format (required)")
	fl.StringArrayVar(&p.extra, "extra", nil, "KEY=VALUE metadata (repeatable)")
	fl.StringVar(&uuid, "uuid", "", "UUID for the connector (default: Ironic picks one)")
	for _, n := range []string{"node", "type", "connector-id"} {
		_ = cmd.MarkFlagRequired(n)
	}
	check := func() error {
		if !slices.Contains(ironicapi.ConnectorTypes, typ) {
			return factory.Usagef("--type %s: want one of %s", connector.Quote(typ), strings.Join(ironicapi.ConnectorTypes, ", "))
		}
		if _, err := ironicapi.NormalizeConnectorID(typ, id); err != nil {
			return factory.Usagef("--connector-id: %w", err)
		}
		return p.parse(f)
	}
	return r.writeCommand(f, cmd, check,
		func(ctx context.Context, sc *gophercloud.ServiceClient, _ []string) (*ironicapi.VolumeConnector, error) {
			nodeUUID, err := ResolveNode(ctx, sc, p.node)
			if err != nil {
				return nil, err
			}
			return ironicapi.CreateConnector(ctx, sc, ironicapi.ConnectorCreateOpts{
				NodeUUID: nodeUUID, Type: typ, ConnectorID: id, Extra: p.extraMap, UUID: uuid,
			}).Extract()
		})
}

func newCmdConnectorSet(f *factory.Factory, r connectorCmd) *cobra.Command {
	var p patchFlags
	var typ, id string
	cmd := &cobra.Command{
		Use:   "set UUID",
		Short: "Change a volume connector (the node must be powered off)",
		Example: `  brick ironic connector set 5ef348bc-ce31-44ce-a324-7cab14b372e8 --connector-id iqn.2004-10.com.example:new
  brick ironic connector set 5ef348bc-ce31-44ce-a324-7cab14b372e8 --extra rack=r2`,
		Args: cobra.ExactArgs(1),
	}
	fl := cmd.Flags()
	fl.StringVar(&p.node, "node", "", "move the connector to this node (name or UUID)")
	fl.StringVar(&typ, "type", "", "new connector type")
	fl.StringVar(&id, "connector-id", "", "new connector ID")
	fl.StringArrayVar(&p.extra, "extra", nil, "KEY=VALUE metadata to add or change (repeatable)")
	return r.writeCommand(f, cmd, func() error { return p.parse(f) },
		func(ctx context.Context, sc *gophercloud.ServiceClient, args []string) (*ironicapi.VolumeConnector, error) {
			ops, err := p.setOps(ctx, sc, func() ([]ironicapi.PatchOp, error) {
				return typeAndIDOps(ctx, sc, args[0], typ, id)
			})
			if err != nil {
				return nil, err
			}
			if len(ops) == 0 {
				return nil, factory.UsageError{Err: fmt.Errorf("nothing to set: give --node, --type, --connector-id or --extra")}
			}
			return ironicapi.UpdateConnector(ctx, sc, args[0], ironicapi.ConnectorUpdateOpts(ops)).Extract()
		})
}

// typeAndIDOps replaces a connector's type and ID. The server checks
// neither: check the pair, fetching the half the user did not give.
func typeAndIDOps(ctx context.Context, sc *gophercloud.ServiceClient, uuid, typ, id string) ([]ironicapi.PatchOp, error) {
	if typ == "" && id == "" {
		return nil, nil
	}
	if typ == "" || id == "" {
		cur, err := ironicapi.GetConnector(ctx, sc, uuid, nil).Extract()
		if err != nil {
			return nil, err
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
		return nil, factory.UsageError{Err: err}
	}
	return []ironicapi.PatchOp{ironicapi.Replace("/type", typ), ironicapi.Replace("/connector_id", norm)}, nil
}

func newCmdConnectorUnset(f *factory.Factory, r connectorCmd) *cobra.Command {
	var p patchFlags
	cmd := &cobra.Command{
		Use:   "unset UUID --extra KEY",
		Short: "Remove extra keys from a volume connector (the node must be powered off)",
		Args:  cobra.ExactArgs(1),
	}
	cmd.Flags().StringArrayVar(&p.extra, "extra", nil, "extra KEY to remove (repeatable)")
	_ = cmd.MarkFlagRequired("extra")
	return r.writeCommand(f, cmd, nil,
		func(ctx context.Context, sc *gophercloud.ServiceClient, args []string) (*ironicapi.VolumeConnector, error) {
			return ironicapi.UpdateConnector(ctx, sc, args[0], ironicapi.ConnectorUpdateOpts(p.unsetOps())).Extract()
		})
}
