package main

import (
	"errors"
	"fmt"
	"net"
	"path"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ironicapi"
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
			props, warns, err := connector.Gather(a.host.FS, gopts)
			for _, w := range warns {
				a.logger.Warn("get-connector: left out", "file", w.File, "reason", w.Err.Error())
			}
			if err != nil {
				return err
			}
			specs, err := a.hostConnectorSpecs(props, gopts.NIC)
			if err != nil {
				return err
			}
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
			res, err := ironicapi.Register(ctx, sc, nodeUUID, specs, ironicapi.RegisterOpts{Prune: prune})
			if res != nil {
				// Print what was done even when pruning failed half-way.
				if perr := a.printRegister(cmd, res); perr != nil && err == nil {
					err = perr
				}
			}
			if err != nil {
				return err
			}
			if setCaps {
				var caps []ironicapi.Capability
				if props.Initiator != "" {
					caps = append(caps, ironicapi.Capability{Key: "iscsi_boot", Value: "True"})
				}
				if len(props.WWPNs) > 0 {
					caps = append(caps, ironicapi.Capability{Key: "fibre_channel_boot", Value: "True"})
				}
				if len(caps) == 0 {
					a.logger.Warn("--set-capabilities: the host has no iSCSI initiator and no FC port; no capability set")
					return nil
				}
				changed, err := ironicapi.SetCapabilities(ctx, sc, nodeUUID, caps)
				if err != nil {
					return err
				}
				if changed {
					fmt.Fprintf(cmd.ErrOrStderr(), "Set capabilities %s on node %s\n", ironicapi.FormatCapabilities(caps), node)
				}
			}
			return nil
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

// hostConnectorSpecs maps get-connector properties to Ironic connectors.
func (a *app) hostConnectorSpecs(p connector.Properties, nic string) ([]ironicapi.ConnectorSpec, error) {
	var specs []ironicapi.ConnectorSpec
	if p.Initiator != "" {
		specs = append(specs, ironicapi.ConnectorSpec{Type: ironicapi.ConnectorIQN, ConnectorID: p.Initiator})
	}
	for _, w := range p.WWPNs {
		specs = append(specs, ironicapi.ConnectorSpec{Type: ironicapi.ConnectorWWPN, ConnectorID: w})
	}
	for _, w := range p.WWNNs {
		specs = append(specs, ironicapi.ConnectorSpec{Type: ironicapi.ConnectorWWNN, ConnectorID: w})
	}
	ip := net.ParseIP(p.IP)
	if ip == nil || ip.IsLoopback() {
		// get-connector falls back to 127.0.0.1: useless to a storage array.
		a.logger.Warn("register: no routable IP address; no ip or mac connector registered", "ip", p.IP)
		return specs, nil
	}
	specs = append(specs, ironicapi.ConnectorSpec{Type: ironicapi.ConnectorIP, ConnectorID: p.IP})
	if nic == "" {
		nic = interfaceOf(a.host.FS, p.IP)
	}
	if nic == "" {
		a.logger.Warn("register: no interface holds the IP; no mac connector registered", "ip", p.IP)
		return specs, nil
	}
	mac, err := interfaceMAC(a.host.FS, nic)
	if err != nil {
		a.logger.Warn("register: no mac connector registered", "interface", nic, "reason", err.Error())
		return specs, nil
	}
	return append(specs, ironicapi.ConnectorSpec{Type: ironicapi.ConnectorMAC, ConnectorID: mac}), nil
}

// interfaceOf returns the interface holding ip, or "".
func interfaceOf(fsys host.FS, ip string) string {
	addrs, err := fsys.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if a.Addr.String() == ip {
			return a.Interface
		}
	}
	return ""
}

// interfaceMAC reads /sys/class/net/<nic>/address.
func interfaceMAC(fsys host.FS, nic string) (string, error) {
	if nic == "" || nic == "." || nic == ".." || path.Base(nic) != nic {
		return "", fmt.Errorf("bad interface name %s", connector.Quote(nic))
	}
	s, err := fsys.ReadString(path.Join("/sys/class/net", nic, "address"))
	if err != nil {
		return "", err
	}
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return "", fmt.Errorf("%s has no Ethernet address (%s)", nic, connector.Quote(s))
	}
	if hw.String() == "00:00:00:00:00:00" {
		return "", errors.New(nic + " has an all-zero MAC address")
	}
	return hw.String(), nil
}

func (a *app) printRegister(cmd *cobra.Command, res *ironicapi.RegisterResult) error {
	t := table{Columns: []string{"UUID", "Type", "Connector ID", "Action"}}
	add := func(cs []ironicapi.Connector, action string) {
		for _, c := range cs {
			t.Rows = append(t.Rows, []any{c.UUID, c.Type, c.ConnectorID, action})
		}
	}
	add(res.Kept, "kept")
	add(res.Created, "created")
	add(res.Pruned, "deleted")
	return a.out.printTable(cmd.OutOrStdout(), t)
}
