package main

import (
	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/internal/view"
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
			return a.out.PrintRecord(cmd.OutOrStdout(), view.Properties(props))
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
