package ironic

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/ironicattach"
)

// Manager builds the attach-volume use case from the auth flags.
func Manager(ctx context.Context, f *factory.Factory) (*ironicattach.Manager, error) {
	c, err := f.Cinder(ctx)
	if err != nil {
		return nil, err
	}
	sc, err := f.Ironic(ctx)
	if err != nil {
		return nil, err
	}
	return &ironicattach.Manager{Cinder: c, Ironic: sc, Secrets: f.Redactor, Log: f.Logger()}, nil
}

// attachVolumeOptions are ironic attach-volume's.
type attachVolumeOptions struct {
	f    *factory.Factory
	Opts ironicattach.AttachOpts
}

func newCmdIronicAttachVolume(f *factory.Factory, runF func(context.Context, *attachVolumeOptions) error) *cobra.Command {
	o := &attachVolumeOptions{f: f}
	cmd := &cobra.Command{
		Use:   "attach-volume --node NODE VOLUME",
		Short: "Export a Cinder volume to an Ironic node and record it as the node's volume target",
		Long: `The standalone boot-from-volume tool: build a Cinder connector from the
node's registered volume connectors (not this host's: iqn -> initiator,
wwpn/wwnn -> wwpns/wwnns, ip -> ip, host = the node's UUID), have Cinder
export the volume to it (v3 attachment, or reserve + initialize_connection
+ attach on older Cinder, with host_name = the node's UUID), and create the
node's volume target with the connection info Cinder returned
(volume_type from driver_volume_type; credentials are stored by Ironic and
shown masked). Nothing is connected on this host.

Any failure undoes what was done, newest first. Register the node's
initiators first (brick ironic register on the node, or brick ironic
connector create).`,
		Example: `  brick ironic attach-volume --node node-1 boot-vol
  brick ironic attach-volume --node node-1 data-vol --boot-index 1 -f json`,
		Args: cobra.ExactArgs(1),
		RunE: factory.RunE(o, o.validate, func(args []string) { o.Opts.Volume = args[0] }, attachVolumeRun, runF),
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Opts.Node, "node", "", "Ironic node name or UUID (required)")
	fl.IntVar(&o.Opts.BootIndex, "boot-index", 0, "boot index of the volume target (0 boots first)")
	fl.BoolVar(&o.Opts.Multipath, "multipath", false, "ask Cinder for a multipath export (every portal)")
	_ = cmd.MarkFlagRequired("node")
	return cmd
}

func (o *attachVolumeOptions) validate() error {
	if o.Opts.BootIndex < 0 {
		return fmt.Errorf("--boot-index %d: must be 0 or more", o.Opts.BootIndex)
	}
	return nil
}

// runManager runs do on the attach-volume use case and prints the record
// it returns.
func runManager(ctx context.Context, f *factory.Factory, do func(*ironicattach.Manager) (output.Record, error)) error {
	m, err := Manager(ctx, f)
	if err != nil {
		return err
	}
	rec, err := do(m)
	if err != nil {
		return err
	}
	return f.Output().PrintRecord(f.Stdout, rec)
}

func attachVolumeRun(ctx context.Context, o *attachVolumeOptions) error {
	return runManager(ctx, o.f, func(m *ironicattach.Manager) (output.Record, error) {
		res, err := m.AttachVolume(ctx, o.Opts)
		if err != nil {
			return nil, err
		}
		return attachRecord(res), nil
	})
}

// attachRecord is what attach-volume prints.
func attachRecord(res *ironicattach.Result) output.Record {
	return output.Record{
		{Name: "node_uuid", Value: res.Node.UUID},
		{Name: "node_name", Value: res.Node.Name},
		{Name: "volume_id", Value: res.VolumeID},
		{Name: "attachment_id", Value: res.AttachmentID},
		{Name: "flow", Value: res.Flow},
		{Name: "target_uuid", Value: res.Target.UUID},
		{Name: "volume_type", Value: res.Target.VolumeType},
		{Name: "boot_index", Value: res.Target.BootIndex},
		{Name: "properties", Value: ironicattach.MaskProperties(res.Target.Properties)},
	}
}

// detachVolumeOptions are ironic detach-volume's.
type detachVolumeOptions struct {
	f    *factory.Factory
	Opts ironicattach.DetachOpts
}

func newCmdIronicDetachVolume(f *factory.Factory, runF func(context.Context, *detachVolumeOptions) error) *cobra.Command {
	o := &detachVolumeOptions{f: f}
	cmd := &cobra.Command{
		Use:   "detach-volume --node NODE VOLUME",
		Short: "Delete the node's volume target for a volume and end its Cinder attachment",
		Long: `The reverse of attach-volume: delete the node's volume targets for the
volume, then end the volume's Cinder attachments to the node (terminate the
connection and detach). Ironic deletes targets only while the node is
powered off; when it is not, nothing is changed (the node may be running
from the volume). Running it again after a partial failure finishes the
job; a volume with nothing left to undo is success.`,
		Example: `  brick ironic detach-volume --node node-1 boot-vol`,
		Args:    cobra.ExactArgs(1),
		RunE:    factory.RunE(o, factory.NoChecks, func(args []string) { o.Opts.Volume = args[0] }, detachVolumeRun, runF),
	}
	cmd.Flags().StringVar(&o.Opts.Node, "node", "", "Ironic node name or UUID (required)")
	_ = cmd.MarkFlagRequired("node")
	return cmd
}

func detachVolumeRun(ctx context.Context, o *detachVolumeOptions) error {
	return runManager(ctx, o.f, func(m *ironicattach.Manager) (output.Record, error) {
		res, err := m.DetachVolume(ctx, o.Opts)
		if err != nil {
			return nil, err
		}
		return output.Record{
			{Name: "node_uuid", Value: res.Node.UUID},
			{Name: "volume_id", Value: res.VolumeID},
			{Name: "deleted_targets", Value: res.DeletedTargets},
			{Name: "detached_attachments", Value: res.Detached},
		}, nil
	})
}
