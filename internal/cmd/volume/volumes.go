package volume

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/internal/cmd/connflags"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/internal/view"
)

// volumePathsOptions are get-volume-paths'.
type volumePathsOptions struct {
	f      *factory.Factory
	Ref    string
	Volume connflags.Volume
	// formatGiven: -f came from the command line, BRICK_FORMAT or
	// brick.yaml; else paths print one a line.
	formatGiven bool
}

// NewCmdGetVolumePaths is `brick get-volume-paths VOLUME`.
func NewCmdGetVolumePaths(f *factory.Factory, runF func(context.Context, *volumePathsOptions) error) *cobra.Command {
	o := &volumePathsOptions{f: f}
	cmd := &cobra.Command{
		Use:   "get-volume-paths VOLUME",
		Short: "Print the device paths of an attached volume on this host",
		Long: `Print the device paths on this host of a volume: from brick's local record,
or from the volume's attachment to this host in Cinder. One path a line, as
python-brick-cinderclient-ext prints them; -f table for a table.`,
		Args: cobra.ExactArgs(1),
	}
	cmd.RunE = factory.RunE(o, o.validate, func(args []string) { o.Ref, o.formatGiven = args[0], f.FormatGiven(cmd) }, volumePathsRun, runF)
	fl := cmd.Flags()
	f.AddAuthFlags(fl)
	f.AddOutputFlags(fl)
	// What help shows is what it does: one path a line unless -f says.
	fl.Lookup("format").DefValue = output.FormatValue
	o.Volume.Add(fl, connflags.ForPaths)
	return cmd
}

func (o *volumePathsOptions) validate() error { return o.Volume.Validate(o.f.Host()) }

func volumePathsRun(ctx context.Context, o *volumePathsOptions) error {
	f := o.f
	m, err := localManager(ctx, f, "get-volume-paths", o.Volume.Opts)
	if err != nil {
		return err
	}
	if _, rerr := m.Record(o.Ref); rerr != nil {
		if m, err = connflags.Manager(ctx, f, o.Volume.Opts, true, "get-volume-paths", o.Ref); err != nil {
			return err
		}
	}
	paths, err := m.VolumePaths(ctx, o.Ref, o.Volume.Gather())
	if err != nil {
		return err
	}
	t := output.Table{Columns: []string{"Path"}}
	for _, p := range paths {
		t.Rows = append(t.Rows, []any{p})
	}
	out := f.Output()
	if !o.formatGiven {
		out.Format = output.FormatValue // one path a line, as python-brick-cinderclient-ext prints them
	}
	return out.PrintTable(f.Stdout, t)
}

// allVolumePathsOptions are get-all-volume-paths'.
type allVolumePathsOptions struct {
	f        *factory.Factory
	Volume   connflags.Volume
	Protocol string
}

// NewCmdGetAllVolumePaths is `brick get-all-volume-paths`.
func NewCmdGetAllVolumePaths(f *factory.Factory, runF func(context.Context, *allVolumePathsOptions) error) *cobra.Command {
	o := &allVolumePathsOptions{f: f}
	cmd := &cobra.Command{
		Use:   "get-all-volume-paths",
		Short: "Print the device paths of every volume brick attached on this host",
		Args:  cobra.NoArgs,
		RunE:  factory.RunE(o, o.validate, nil, allVolumePathsRun, runF),
	}
	f.AddOutputFlags(cmd.Flags())
	o.Volume.Add(cmd.Flags(), connflags.ForNone)
	cmd.Flags().StringVar(&o.Protocol, "protocol", "", "only this driver_volume_type (iscsi, nfs, ...; any case)")
	return cmd
}

// validate: Cinder names protocols in lowercase; the ext's users type ISCSI.
func (o *allVolumePathsOptions) validate() error {
	o.Protocol = strings.ToLower(o.Protocol)
	types := o.Volume.Opts.Registry(o.f.Host()).Types()
	if o.Protocol != "" && !slices.Contains(types, o.Protocol) {
		return fmt.Errorf("--protocol %s: unknown protocol (use one of: %s)", connector.Quote(o.Protocol), strings.Join(types, ", "))
	}
	return nil
}

func allVolumePathsRun(ctx context.Context, o *allVolumePathsOptions) error {
	f := o.f
	m, err := localManager(ctx, f, "get-all-volume-paths", o.Volume.Opts)
	if err != nil {
		return err
	}
	paths, errs := m.AllVolumePaths(ctx, o.Protocol)
	for _, e := range errs {
		f.Logger().Warn("get-all-volume-paths", "err", e.Error())
	}
	t := output.Table{Columns: []string{"Volume", "Protocol", "Path"}}
	for _, p := range paths {
		t.Rows = append(t.Rows, []any{p.VolumeID, p.Protocol, p.Path})
	}
	return f.Output().PrintTable(f.Stdout, t)
}

// listOptions are list's.
type listOptions struct {
	f       *factory.Factory
	Offline bool
}

// NewCmdList is `brick list`.
func NewCmdList(f *factory.Factory, runF func(context.Context, *listOptions) error) *cobra.Command {
	o := &listOptions{f: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the volumes brick attached to this host, with their Cinder status",
		Long: `List brick's local attachments: volume, device, protocol, multipath map,
mount point, the local phase (attached, or attaching/detaching when an
operation did not finish: run brick cleanup) and the volume's status in
Cinder. Cinder errors become warnings and the status shows "unknown";
--offline does not ask Cinder.`,
		Args: cobra.NoArgs,
		RunE: factory.RunE(o, factory.NoChecks, nil, listRun, runF),
	}
	f.AddAuthFlags(cmd.Flags())
	f.AddOutputFlags(cmd.Flags())
	cmd.Flags().BoolVar(&o.Offline, "offline", false, "do not ask Cinder for the status")
	return cmd
}

func listRun(ctx context.Context, o *listOptions) error {
	f := o.f
	m, err := localManager(ctx, f, "list", connflags.Options{})
	if err != nil {
		return err
	}
	entries, errs := m.List(ctx)
	// Without records there is no status to ask Cinder for.
	if !o.Offline && len(entries) > 0 {
		if c, err := f.Cinder(ctx); err == nil {
			m.Cinder = c
			entries, errs = m.List(ctx)
		} else {
			f.Logger().Warn("list: Cinder status unknown", "err", err.Error())
		}
	}
	for _, e := range errs {
		f.Logger().Warn("list", "err", e.Error())
	}
	return f.Output().PrintTable(f.Stdout, view.List(entries))
}

// cleanupOptions are cleanup's.
type cleanupOptions struct {
	f      *factory.Factory
	Ref    string
	Force  bool
	Volume connflags.Volume
}

// NewCmdCleanup is `brick cleanup [VOLUME]`.
func NewCmdCleanup(f *factory.Factory, runF func(context.Context, *cleanupOptions) error) *cobra.Command {
	o := &cleanupOptions{f: f}
	cmd := &cobra.Command{
		Use:   "cleanup [VOLUME]",
		Short: "Repair what an interrupted local-attach or local-detach left behind",
		Long: `Repair after a crash (kill -9, power loss) in the middle of local-attach or
local-detach, from brick's records and Cinder: an unfinished attach is undone
(device disconnected, Cinder reservation, export and attachment removed, so
the volume is available again), an unfinished detach is finished. Volumes
that are fully attached are left alone. Without VOLUME every record is
examined.`,
		Args: cobra.MaximumNArgs(1),
		RunE: factory.RunE(o, o.validate, func(args []string) {
			if len(args) == 1 {
				o.Ref = args[0]
			}
		}, cleanupRun, runF),
	}
	f.AddAuthFlags(cmd.Flags())
	f.AddOutputFlags(cmd.Flags())
	o.Volume.Add(cmd.Flags(), connflags.ForDetach)
	cmd.Flags().BoolVar(&o.Force, "force", false, "when finishing a detach, disconnect even if the device is in use")
	return cmd
}

func (o *cleanupOptions) validate() error { return o.Volume.Validate(o.f.Host()) }

func cleanupRun(ctx context.Context, o *cleanupOptions) error {
	f := o.f
	if err := f.NeedRoot("cleanup"); err != nil {
		return err
	}
	ctx, end := f.Track(ctx, "cleanup", o.Ref)
	defer end()
	m, err := connflags.Manager(ctx, f, o.Volume.Opts, true, "cleanup", o.Ref)
	if err != nil {
		return err
	}
	if sc, err := f.IronicTargets(ctx); err == nil && sc != nil {
		m.Targets = sc
	}
	results, err := m.Cleanup(ctx, o.Ref, o.Force)
	end()
	t := output.Table{Columns: []string{"Volume", "Action", "Step", "Error"}}
	for _, r := range results {
		msg := ""
		if r.Err != nil {
			msg = f.Redactor.Redact(r.Err.Error())
		}
		t.Rows = append(t.Rows, []any{r.VolumeID, r.Action, r.Step, msg})
	}
	if perr := f.Output().PrintTable(f.Stdout, t); perr != nil && err == nil {
		err = perr
	}
	return err
}

// localManager checks root and builds the manager of brick's records,
// without Cinder.
func localManager(ctx context.Context, f *factory.Factory, what string, opts connflags.Options) (*attach.Manager, error) {
	if err := f.NeedRoot(what); err != nil {
		return nil, err
	}
	return connflags.Manager(ctx, f, opts, false, "", "")
}
