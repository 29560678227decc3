package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/internal/output"
)

// maxInputSize bounds --connection-info and --device-info documents.
const maxInputSize = connector.MaxConnectionInfoSize

// connectFlags are shared by connect and disconnect.
type connectFlags struct {
	connectionInfo string
	dryRun         bool
	opts           connectorOptions
}

func (a *app) addConnectFlags(f *pflag.FlagSet, cf *connectFlags) {
	f.StringVar(&cf.connectionInfo, "connection-info", "", `Cinder connection info as JSON: a file name, or "-" for stdin (nested {"driver_volume_type":..,"data":{..}}, flat v3, or wrapped in {"connection_info":..})`)
	addMultipathFlags(f, &cf.opts, "attach through dm-multipath over every portal (falls back to one path, with a warning, when multipathd is not running)")
	f.BoolVar(&cf.dryRun, "dry-run", false, "validate the connection info and print what would be done, changing nothing (exit 0 when brick would attempt it)")
	addProtocolFlags(f, &cf.opts)
}

// readConnectionInfo reads the document named by --connection-info.
func (a *app) readConnectionInfo(cmd *cobra.Command, name string) (connector.ConnectionInfo, error) {
	if name == "" {
		return connector.ConnectionInfo{}, usageError{errors.New("--connection-info is required (a file, or - for stdin)")}
	}
	raw, err := readJSONObjectInput(cmd.InOrStdin(), "--connection-info", name, maxInputSize, connInfoShape)
	if err != nil {
		return connector.ConnectionInfo{}, err
	}
	ci, err := connector.ParseConnectionInfo(raw)
	if err != nil {
		return connector.ConnectionInfo{}, err
	}
	// Before anything can log or fail: mask the secrets everywhere.
	a.redactor.Add(ci.Secrets()...)
	return ci, nil
}

func (a *app) connectCommand() *cobra.Command {
	var cf connectFlags
	cmd := &cobra.Command{
		Use:   "connect",
		Short: "Attach a volume to this host from its connection info (no Cinder call)",
		Long: `Attach a volume described by Cinder connection info and print the device.

This is the low-level half of local-attach for standalone users (Ironic
standalone scripts, storage tools that are not Cinder): it talks to no API.
The connection info's driver_volume_type picks the protocol. For iSCSI, brick
logs in (CHAP passwords never appear on a command line or in output), scans
exactly the volume's LUN, waits for the device, verifies its WWID and, with
--multipath, builds the dm-multipath map over every portal that answers.

Keep the printed device (-f json) and pass it to 'brick disconnect
--device-info' later: it lets disconnect check that the LUN still holds the
same volume.`,
		Example: `  brick connect --connection-info conn.json -f json > device.json
  openstack ... | brick connect --connection-info - --multipath -f value -c path`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.needRootUnlessDryRun(cmd, cf.dryRun); err != nil {
				return err
			}
			ci, err := a.readConnectionInfo(cmd, cf.connectionInfo)
			if err != nil {
				return err
			}
			conn, err := a.newRegistry(cf.opts).For(ci.DriverVolumeType)
			if err != nil {
				return err
			}
			if cf.dryRun {
				return a.printPlan(cmd, ci, conn, func(p connector.Planner) (*connector.Plan, error) {
					return p.PlanConnect(cmd.Context(), ci)
				})
			}
			if enc, _ := ci.Data["encrypted"].(bool); enc {
				fmt.Fprintln(a.errWriter(), "brick: "+connector.CiphertextNote)
			}
			ctx, end := a.track(cmd.Context(), "connect", ci.DriverVolumeType)
			dev, err := conn.Connect(ctx, ci)
			end()
			if err != nil {
				return err
			}
			return a.out.PrintRecord(cmd.OutOrStdout(), deviceRecord(dev))
		},
	}
	a.addConnectFlags(cmd.Flags(), &cf)
	hideFlags(cmd.Flags(), "rbd-unmap-timeout") // a failed map is not unmapped
	a.addRecordOutputFlags(cmd.Flags())
	return cmd
}

func (a *app) disconnectCommand() *cobra.Command {
	var cf connectFlags
	var deviceInfo string
	var force bool
	cmd := &cobra.Command{
		Use:   "disconnect",
		Short: "Detach a volume from this host, given its connection info",
		Long: `Detach a volume attached with 'brick connect' (or by anyone else).

Refuses while the device is mounted or held open, unless --force. Flushes
the device (and the multipath map), deletes the SCSI devices, forgets the
multipath WWID, and logs out of a session only when no other LUN uses it.
Disconnecting a volume that is not attached succeeds.`,
		Example: `  brick disconnect --connection-info conn.json --device-info device.json
  brick disconnect --connection-info conn.json --force`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.needRootUnlessDryRun(cmd, cf.dryRun); err != nil {
				return err
			}
			ci, err := a.readConnectionInfo(cmd, cf.connectionInfo)
			if err != nil {
				return err
			}
			dev, err := readDeviceInfo(deviceInfo)
			if err != nil {
				return err
			}
			conn, err := a.newRegistry(cf.opts).For(ci.DriverVolumeType)
			if err != nil {
				return err
			}
			opts := connector.DisconnectOptions{Force: force}
			if cf.dryRun {
				return a.printPlan(cmd, ci, conn, func(p connector.Planner) (*connector.Plan, error) {
					return p.PlanDisconnect(cmd.Context(), ci, dev, opts)
				})
			}
			ctx, end := a.track(cmd.Context(), "disconnect", ci.DriverVolumeType)
			defer end()
			return conn.Disconnect(ctx, ci, dev, opts)
		},
	}
	a.addConnectFlags(cmd.Flags(), &cf)
	for _, n := range attachOnlyFlags {
		_ = cmd.Flags().MarkHidden(n)
	}
	a.addHiddenOutputFlags(cmd.Flags())
	cmd.Flags().StringVar(&deviceInfo, "device-info", "", "the device 'brick connect -f json' printed: a file name or the JSON itself")
	cmd.Flags().BoolVar(&force, "force", false, "detach even if the device is mounted or in use, or a flush fails (unwritten data may be lost)")
	return cmd
}

// needRootUnlessDryRun: a plan takes no lock and changes nothing, so any
// user may ask for one.
func (a *app) needRootUnlessDryRun(cmd *cobra.Command, dryRun bool) error {
	if dryRun {
		return nil
	}
	return a.needRoot(cmd.Name())
}

// printPlan prints what conn would do (--dry-run). A connector that cannot
// plan is an error: printing only "valid" would promise more than brick
// checked.
func (a *app) printPlan(cmd *cobra.Command, ci connector.ConnectionInfo, conn connector.Connector, plan func(connector.Planner) (*connector.Plan, error)) error {
	p, ok := conn.(connector.Planner)
	if !ok {
		return fmt.Errorf("--dry-run is not available for %s volumes yet", ci.DriverVolumeType)
	}
	pl, err := plan(p)
	if err != nil {
		return err
	}
	return a.out.PrintRecord(cmd.OutOrStdout(), planRecord(pl, a.out.Format))
}

// planRecord lays a plan out with stable keys: protocol, action, dry_run,
// multipath, the protocol's details, steps and warnings (lists, never
// null). The table shows one row per step.
func planRecord(p *connector.Plan, format string) output.Record {
	r := output.Record{{Name: "protocol", Value: p.Protocol}, {Name: "action", Value: p.Action}, {Name: "dry_run", Value: true}, {Name: "multipath", Value: p.Multipath}}
	for _, d := range p.Details {
		r = append(r, output.Field{Name: d.Key, Value: d.Value})
	}
	steps, warns := append([]string{}, p.Steps...), append([]string{}, p.Warnings...)
	if format != output.FormatTable {
		return append(r, output.Field{Name: "steps", Value: steps}, output.Field{Name: "warnings", Value: warns})
	}
	for i, s := range steps {
		r = append(r, output.Field{Name: fmt.Sprintf("step %d", i+1), Value: s})
	}
	for _, w := range warns {
		r = append(r, output.Field{Name: "warning", Value: w})
	}
	return r
}

// readDeviceInfo accepts the JSON itself or a file holding it.
func readDeviceInfo(s string) (*connector.Device, error) {
	if s == "" {
		return nil, nil
	}
	raw := []byte(s)
	if !strings.HasPrefix(strings.TrimSpace(s), "{") {
		b, err := os.ReadFile(s)
		if err != nil {
			return nil, fmt.Errorf("read device info: %w", err)
		}
		raw = b
	}
	if len(raw) > maxInputSize {
		return nil, fmt.Errorf("device info larger than %d bytes", maxInputSize)
	}
	var dev connector.Device
	if err := json.Unmarshal(raw, &dev); err != nil {
		return nil, fmt.Errorf("parse device info: %w", err)
	}
	return &dev, nil
}

// deviceRecord prints a Device with the JSON names it is stored under.
func deviceRecord(d *connector.Device) output.Record {
	r := output.Record{
		{Name: "path", Value: d.Path},
		{Name: "type", Value: d.Type},
		{Name: "protocol", Value: d.Protocol},
	}
	if d.WWN != "" {
		r = append(r, output.Field{Name: "scsi_wwn", Value: d.WWN})
	}
	if d.MultipathID != "" {
		r = append(r, output.Field{Name: "multipath_id", Value: d.MultipathID})
	}
	if len(d.Paths) > 0 {
		r = append(r, output.Field{Name: "paths", Value: d.Paths})
	}
	if len(d.Extra) > 0 {
		r = append(r, output.Field{Name: "extra", Value: d.Extra})
	}
	return r
}
