package main

import (
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/ironicapi"
	"github.com/brick-storage/brick/ironicattach"
)

func (a *app) ironicRegisterCommand() *cobra.Command {
	var node string
	var gopts connector.GatherOptions
	var prune, setCaps bool
	cmd := &cobra.Command{
		Use:   "register --node NODE",
		Short: "Register this host's initiators as the node's volume connectors",
		Long: `Turn this host's get-connector facts into the node's volume connectors:
the iSCSI initiator name becomes an iqn connector, each Online FC port's
WWPN and WWNN a wwpn and wwnn connector, the connector ip an ip connector
and the MAC address of the interface holding it (or of --nic) a mac
connector.

Idempotent: connectors the node has already are kept, so running it twice
creates nothing the second time. A connector registered to another node is
an error naming that node, and nothing is created. --prune deletes the
node's iqn/wwpn/wwnn/ip/mac connectors this host no longer has; Ironic
allows that only while the node is powered off. --set-capabilities sets the
node's iscsi_boot / fibre_channel_boot capabilities to True for the kinds of
initiator the host has.`,
		Example: `  brick ironic register --node node-1
  brick ironic register --node node-1 --nic eth1 --set-capabilities
  brick ironic register --node node-1 --prune -f json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.ironicRegister(cmd, node, gopts, prune, setCaps)
		},
	}
	f := cmd.Flags()
	f.StringVar(&node, "node", "", "node name or UUID (required)")
	f.StringVar(&gopts.IP, "ip", "", "register this IP address (default: the address get-connector reports)")
	f.StringVar(&gopts.NIC, "nic", "", "register this interface's IP and MAC address")
	f.BoolVar(&gopts.Multipath, "multipath", false, "gather the connector as get-connector --multipath does (warns when multipathd does not run)")
	f.BoolVar(&prune, "prune", false, "delete the node's iqn/wwpn/wwnn/ip/mac connectors this host no longer has (node must be powered off)")
	f.BoolVar(&setCaps, "set-capabilities", false, "set the node's iscsi_boot / fibre_channel_boot capabilities")
	_ = cmd.MarkFlagRequired("node")
	cmd.MarkFlagsMutuallyExclusive("ip", "nic")
	return cmd
}

// ironicRegister gathers this host's connector, registers it as the
// node's volume connectors, prints what was done and, when asked, sets the
// node's boot capabilities.
func (a *app) ironicRegister(cmd *cobra.Command, node string, gopts connector.GatherOptions, prune, setCaps bool) error {
	props, warns, err := connector.Gather(a.host.FS, gopts)
	for _, w := range warns {
		a.logger.Warn("get-connector: left out", "file", w.File, "reason", w.Err.Error())
	}
	if err != nil {
		return err
	}
	specs := ironicattach.HostConnectors(ironicattach.HostView(a.host), props, gopts.NIC, a.logger)
	if len(specs) == 0 {
		return fmt.Errorf("this host has no initiator to register (no /etc/iscsi/initiatorname.iscsi, no Online FC port, no usable IP)")
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
	res, err := ironicattach.Register(ctx, sc, nodeUUID, specs, ironicattach.RegisterOpts{Prune: prune})
	if res != nil {
		// Print what was done even when pruning failed half-way.
		if perr := a.printRegister(cmd, res); perr != nil && err == nil {
			err = perr
		}
	}
	if err != nil || !setCaps {
		return err
	}
	return a.setBootCapabilities(cmd, sc, node, nodeUUID, props)
}

// setBootCapabilities sets iscsi_boot / fibre_channel_boot for the kinds
// of initiator the host has.
func (a *app) setBootCapabilities(cmd *cobra.Command, sc *gophercloud.ServiceClient, node, nodeUUID string, props connector.Properties) error {
	caps := ironicattach.RegisterCapabilities(props)
	if len(caps) == 0 {
		a.logger.Warn("--set-capabilities: the host has no iSCSI initiator and no FC port; no capability set")
		return nil
	}
	changed, err := ironicattach.SetCapabilities(cmd.Context(), sc, nodeUUID, caps)
	if err != nil {
		return err
	}
	if changed {
		fmt.Fprintf(cmd.ErrOrStderr(), "Set capabilities %s on node %s\n", ironicattach.FormatCapabilities(caps), node)
	}
	return nil
}

func (a *app) printRegister(cmd *cobra.Command, res *ironicattach.RegisterResult) error {
	t := output.Table{Columns: []string{"UUID", "Type", "Connector ID", "Action"}}
	add := func(cs []ironicapi.VolumeConnector, action string) {
		for _, c := range cs {
			t.Rows = append(t.Rows, []any{c.UUID, c.Type, c.ConnectorID, action})
		}
	}
	add(res.Kept, "kept")
	add(res.Created, "created")
	add(res.Pruned, "deleted")
	return a.out.PrintTable(cmd.OutOrStdout(), t)
}
