package ironic

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/internal/cmd/connflags"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/ironicapi"
	"github.com/brick-storage/brick/ironicattach"
	"github.com/brick-storage/brick/protocols"
)

// registerOptions are ironic register's.
type registerOptions struct {
	f       *factory.Factory
	Node    string
	Gather  connector.GatherOptions
	Prune   bool
	SetCaps bool
}

func newCmdIronicRegister(f *factory.Factory, runF func(context.Context, *registerOptions) error) *cobra.Command {
	o := &registerOptions{f: f}
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
		RunE: factory.RunE(o, o.validate, nil, registerRun, runF),
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Node, "node", "", "node name or UUID (required)")
	fl.StringVar(&o.Gather.IP, "ip", "", "register this IP address (default: the address get-connector reports)")
	fl.StringVar(&o.Gather.NIC, "nic", "", "register this interface's IP and MAC address")
	fl.BoolVar(&o.Gather.Multipath, "multipath", false, "gather the connector as get-connector --multipath does (warns when multipathd does not run)")
	fl.BoolVar(&o.Prune, "prune", false, "delete the node's iqn/wwpn/wwnn/ip/mac connectors this host no longer has (node must be powered off)")
	fl.BoolVar(&o.SetCaps, "set-capabilities", false, "set the node's iscsi_boot / fibre_channel_boot capabilities")
	_ = cmd.MarkFlagRequired("node")
	cmd.MarkFlagsMutuallyExclusive("ip", "nic")
	return cmd
}

func (o *registerOptions) validate() error {
	if !ironicapi.ValidNodeIdent(o.Node) {
		return fmt.Errorf("--node %s is not a node name or UUID", connector.Quote(o.Node))
	}
	return connflags.Volume{NIC: o.Gather.NIC, IP: o.Gather.IP}.Validate(o.f.Host())
}

// registerRun gathers this host's connector, registers it as the node's
// volume connectors, prints what was done and, when asked, sets the
// node's boot capabilities.
func registerRun(ctx context.Context, o *registerOptions) error {
	f := o.f
	props, warns, err := protocols.New(f.Host(), protocols.Options{}).Gather(f.Host().FS, o.Gather)
	for _, w := range warns {
		f.Logger().Warn("get-connector: left out", "file", w.File, "reason", w.Err.Error())
	}
	if err != nil {
		return err
	}
	specs := ironicattach.HostConnectors(ironicattach.HostView(f.Host()), props, o.Gather.NIC, f.Logger())
	if len(specs) == 0 {
		return fmt.Errorf("this host has no initiator to register (no /etc/iscsi/initiatorname.iscsi, no Online FC port, no usable IP)")
	}
	sc, err := f.Ironic(ctx)
	if err != nil {
		return err
	}
	nodeUUID, err := ResolveNode(ctx, sc, o.Node)
	if err != nil {
		return err
	}
	res, err := ironicattach.Register(ctx, sc, nodeUUID, specs, ironicattach.RegisterOpts{Prune: o.Prune})
	if res != nil {
		// Print what was done even when pruning failed half-way.
		if perr := printRegister(f, res); perr != nil && err == nil {
			err = perr
		}
	}
	if err != nil || !o.SetCaps {
		return err
	}
	return setBootCapabilities(ctx, f, sc, o.Node, nodeUUID, props)
}

// setBootCapabilities sets iscsi_boot / fibre_channel_boot for the kinds
// of initiator the host has.
func setBootCapabilities(ctx context.Context, f *factory.Factory, sc *gophercloud.ServiceClient, node, nodeUUID string, props connector.Properties) error {
	caps := ironicattach.RegisterCapabilities(props)
	if len(caps) == 0 {
		f.Logger().Warn("--set-capabilities: the host has no iSCSI initiator and no FC port; no capability set")
		return nil
	}
	changed, err := ironicattach.SetCapabilities(ctx, sc, nodeUUID, caps)
	if err != nil {
		return err
	}
	if changed {
		fmt.Fprintf(f.ErrWriter(), "Set capabilities %s on node %s\n", ironicattach.FormatCapabilities(caps), node)
	}
	return nil
}

func printRegister(f *factory.Factory, res *ironicattach.RegisterResult) error {
	t := output.Table{Columns: []string{"UUID", "Type", "Connector ID", "Action"}}
	add := func(cs []ironicapi.VolumeConnector, action string) {
		for _, c := range cs {
			t.Rows = append(t.Rows, []any{c.UUID, c.Type, c.ConnectorID, action})
		}
	}
	add(res.Kept, "kept")
	add(res.Created, "created")
	add(res.Pruned, "deleted")
	return f.Output().PrintTable(f.Stdout, t)
}
