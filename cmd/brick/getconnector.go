package main

import (
	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/protocols"
)

func newCmdGetConnector(a *app) *cobra.Command {
	var opts connector.GatherOptions
	cmd := &cobra.Command{
		Use:   "get-connector",
		Short: "Print this host's connector properties, as Cinder drivers expect them",
		Long: `Print the connector Cinder needs to export a volume to this host (initiator
IQN, FC WWPNs/WWNNs, NVMe host NQN, ip, host, multipath, system UUID...), read
from /etc and /sys. Needs no cloud and no root privileges (a root-only system
UUID is left out with a warning); runs no command, writes no file. Keys whose
source is absent are left out, as os-brick does. ip defaults to the address
of the interface holding the default route.`,
		Example: `  brick get-connector
  brick get-connector --multipath -f json
  brick get-connector --nic eth1 -c ip -c initiator -f value`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			props, warns, err := protocols.New(a.host, protocols.Options{}).Gather(a.host.FS, opts)
			for _, w := range warns {
				a.logger.Warn("get-connector: left out", "file", w.File, "reason", w.Err.Error())
			}
			if err != nil {
				return err
			}
			return a.out.PrintRecord(cmd.OutOrStdout(), propertiesRecord(props))
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.Multipath, "multipath", false, "report multipath=true when multipathd runs (a warning, not an error, when it does not)")
	f.BoolVar(&opts.EnforceMultipath, "enforce-multipath", false, "fail unless multipathd runs")
	f.StringVar(&opts.IP, "ip", "", "report this IP address")
	f.StringVar(&opts.NIC, "nic", "", "report the address of this network interface (IPv4 first, else global IPv6)")
	f.StringVar(&opts.Hostname, "host", "", "report this host name instead of the kernel's")
	cmd.MarkFlagsMutuallyExclusive("ip", "nic")
	return cmd
}

// propertiesRecord lists the connector keys in os-brick's order, leaving
// out those the host does not have.
func propertiesRecord(p connector.Properties) output.Record {
	r := output.Record{
		{Name: "platform", Value: p.Platform},
		{Name: "os_type", Value: p.OSType},
		{Name: "ip", Value: p.IP},
		{Name: "host", Value: p.Host},
		{Name: "multipath", Value: p.Multipath},
		{Name: "enforce_multipath", Value: p.EnforceMultipath},
	}
	add := func(name string, v any, present bool) {
		if present {
			r = append(r, output.Field{Name: name, Value: v})
		}
	}
	add("initiator", p.Initiator, p.Initiator != "")
	add("wwpns", p.WWPNs, len(p.WWPNs) > 0)
	add("wwnns", p.WWNNs, len(p.WWNNs) > 0)
	add("system uuid", p.SystemUUID, p.SystemUUID != "")
	add("nqn", p.NQN, p.NQN != "")
	add("nvme_hostid", p.NVMeHostID, p.NVMeHostID != "")
	add("uuid", p.UUID, p.UUID != "")
	if p.NVMeNativeMultipath != nil {
		add("nvme_native_multipath", *p.NVMeNativeMultipath, true)
	}
	r = append(r, output.Field{Name: "do_local_attach", Value: p.DoLocalAttach})
	return r
}

// connectorKeys are all the keys get-connector may print: those of a
// host that has every one.
func connectorKeys() []string {
	on := true
	r := propertiesRecord(connector.Properties{Initiator: "-", WWPNs: []string{"-"}, WWNNs: []string{"-"}, SystemUUID: "-",
		NQN: "-", NVMeHostID: "-", UUID: "-", NVMeNativeMultipath: &on})
	names := make([]string, len(r))
	for i, f := range r {
		names[i] = f.Name
	}
	return names
}
