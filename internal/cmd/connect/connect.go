// Package connect is brick connect and disconnect: a volume attached to
// this host from its connection info, with no Cinder call.
package connect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/internal/cmd/connflags"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/view"
)

// maxInputSize bounds --connection-info and --device-info documents.
const maxInputSize = connector.MaxConnectionInfoSize

// connectFlags are shared by connect and disconnect.
type connectFlags struct {
	connectionInfo string
	dryRun         bool
	opts           connflags.Options
	// info is the parsed --connection-info (validate reads it: a bad
	// document is a usage error found before anything runs).
	info connector.ConnectionInfo
}

func addConnectFlags(f *pflag.FlagSet, cf *connectFlags) {
	f.StringVar(&cf.connectionInfo, "connection-info", "", `Cinder connection info as JSON: a file name, or "-" for stdin (nested {"driver_volume_type":..,"data":{..}}, flat v3, or wrapped in {"connection_info":..})`)
	connflags.AddMultipathFlags(f, &cf.opts, "attach through dm-multipath over every portal (falls back to one path, with a warning, when multipathd is not running)")
	f.BoolVar(&cf.dryRun, "dry-run", false, "validate the connection info and print what would be done, changing nothing (exit 0 when brick would attempt it)")
	connflags.AddProtocolFlags(f, &cf.opts)
}

// readConnectionInfo reads the document named by --connection-info.
func (cf *connectFlags) readConnectionInfo(f *factory.Factory, stdin io.Reader) error {
	if cf.connectionInfo == "" {
		return factory.UsageError{Err: errors.New("--connection-info is required (a file, or - for stdin)")}
	}
	raw, err := readJSONObjectInput(stdin, "--connection-info", cf.connectionInfo, maxInputSize, connInfoShape)
	if err != nil {
		return err
	}
	ci, err := connector.ParseConnectionInfo(raw)
	if err != nil {
		return err
	}
	// Before anything can log or fail: mask the secrets everywhere.
	f.Redactor.Add(ci.Secrets()...)
	cf.info = ci
	return nil
}

// begin checks root, unless --dry-run (a plan takes no lock and changes
// nothing, so any user may ask for one), and reads --connection-info.
func (cf *connectFlags) begin(f *factory.Factory, what string, stdin io.Reader) error {
	if !cf.dryRun {
		if err := f.NeedRoot(what); err != nil {
			return err
		}
	}
	return cf.readConnectionInfo(f, stdin)
}

// connectOptions are connect's.
type connectOptions struct {
	f *factory.Factory
	connectFlags
	stdin io.Reader
}

// NewCmdConnect is `brick connect`.
func NewCmdConnect(f *factory.Factory, runF func(context.Context, *connectOptions) error) *cobra.Command {
	o := &connectOptions{f: f}
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
	}
	cmd.RunE = factory.RunE(o, o.validate, func([]string) { o.stdin = cmd.InOrStdin() }, connectRun, runF)
	addConnectFlags(cmd.Flags(), &o.connectFlags)
	factory.HideFlags(cmd.Flags(), "rbd-unmap-timeout") // a failed map is not unmapped
	f.AddRecordOutputFlags(cmd.Flags())
	return cmd
}

// validate has nothing to check beyond the flags' types: the connection
// info is read in connectRun, where a bad document exits 1 as a failed
// attach does.
func (o *connectOptions) validate() error { return nil }

func connectRun(ctx context.Context, o *connectOptions) error {
	f := o.f
	if err := o.begin(f, "connect", o.stdin); err != nil {
		return err
	}
	ci := o.info
	conn, err := o.opts.Registry(f.Host()).For(ci.DriverVolumeType)
	if err != nil {
		return err
	}
	if o.dryRun {
		return printPlan(f, ci, conn, func(p connector.Planner) (*connector.Plan, error) {
			return p.PlanConnect(ctx, ci)
		})
	}
	if enc, _ := ci.Data["encrypted"].(bool); enc {
		fmt.Fprintln(f.ErrWriter(), "brick: "+connector.CiphertextNote)
	}
	ctx, end := f.Track(ctx, "connect", ci.DriverVolumeType)
	dev, err := conn.Connect(ctx, ci)
	end()
	if err != nil {
		return err
	}
	return f.Output().PrintRecord(f.Stdout, view.Device(dev))
}

// disconnectOptions are disconnect's.
type disconnectOptions struct {
	f *factory.Factory
	connectFlags
	DeviceInfo string
	Force      bool
	stdin      io.Reader
}

// NewCmdDisconnect is `brick disconnect`.
func NewCmdDisconnect(f *factory.Factory, runF func(context.Context, *disconnectOptions) error) *cobra.Command {
	o := &disconnectOptions{f: f}
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
	}
	cmd.RunE = factory.RunE(o, o.validate, func([]string) { o.stdin = cmd.InOrStdin() }, disconnectRun, runF)
	fl := cmd.Flags()
	addConnectFlags(fl, &o.connectFlags)
	factory.HideFlags(fl, connflags.AttachOnlyFlags...)
	f.AddHiddenOutputFlags(fl)
	fl.StringVar(&o.DeviceInfo, "device-info", "", "the device 'brick connect -f json' printed: a file name or the JSON itself")
	fl.BoolVar(&o.Force, "force", false, "detach even if the device is mounted or in use, or a flush fails (unwritten data may be lost)")
	return cmd
}

func (o *disconnectOptions) validate() error { return nil }

func disconnectRun(ctx context.Context, o *disconnectOptions) error {
	f := o.f
	if err := o.begin(f, "disconnect", o.stdin); err != nil {
		return err
	}
	ci := o.info
	dev, err := readDeviceInfo(o.DeviceInfo)
	if err != nil {
		return err
	}
	conn, err := o.opts.Registry(f.Host()).For(ci.DriverVolumeType)
	if err != nil {
		return err
	}
	opts := connector.DisconnectOptions{Force: o.Force}
	if o.dryRun {
		return printPlan(f, ci, conn, func(p connector.Planner) (*connector.Plan, error) {
			return p.PlanDisconnect(ctx, ci, dev, opts)
		})
	}
	ctx, end := f.Track(ctx, "disconnect", ci.DriverVolumeType)
	defer end()
	return conn.Disconnect(ctx, ci, dev, opts)
}

// printPlan prints what conn would do (--dry-run). A connector that cannot
// plan is an error: printing only "valid" would promise more than brick
// checked.
func printPlan(f *factory.Factory, ci connector.ConnectionInfo, conn connector.Connector, plan func(connector.Planner) (*connector.Plan, error)) error {
	p, ok := conn.(connector.Planner)
	if !ok {
		return fmt.Errorf("--dry-run is not available for %s volumes yet", ci.DriverVolumeType)
	}
	pl, err := plan(p)
	if err != nil {
		return err
	}
	out := f.Output()
	return out.PrintRecord(f.Stdout, view.Plan(pl, out.Format))
}

// readDeviceInfo accepts the JSON itself or a file holding it.
func readDeviceInfo(s string) (*connector.Device, error) {
	if s == "" {
		return nil, nil
	}
	raw := []byte(s)
	if !strings.HasPrefix(strings.TrimSpace(s), "{") {
		b, err := host.ReadInput(s, maxInputSize)
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
