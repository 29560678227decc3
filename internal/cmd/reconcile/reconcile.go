// Package reconcile is brick reconcile and restore: the whole host
// compared with brick's records and Cinder, repaired, and its persistent
// attachments brought back at boot.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/internal/cmd/connflags"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/output"
	usecase "github.com/brick-storage/brick/reconcile"
)

// addFlags adds the flags reconcile and restore share.
func addFlags(f *factory.Factory, cmd *cobra.Command, at *connflags.Attacher) {
	at.Add(f, cmd.Flags())
	f.AddOutputFlags(cmd.Flags())
}

// reconciler builds the whole-host use case on the attach manager.
func reconciler(ctx context.Context, f *factory.Factory, at *connflags.Attacher, op string) (*usecase.Reconciler, error) {
	if err := f.NeedRoot(op); err != nil {
		return nil, err
	}
	m, err := at.Manager(ctx, f, op, "")
	if err != nil {
		return nil, err
	}
	regs := newPathRegistries(f.Host(), at.Volume.Opts)
	m.Connectors = regs
	if sc, err := f.IronicTargets(ctx); err == nil && sc != nil {
		m.Targets = sc
	}
	props, _, err := regs.Gather(f.Host().FS, at.Volume.Gather())
	if err != nil {
		return nil, fmt.Errorf("%s: connector: %w", op, err)
	}
	return &usecase.Reconciler{Host: f.Host(), Cinder: m.Cinder, Attach: m, Connectors: m.Connectors, HostName: props.Host}, nil
}

// pathRegistries is the registry of the command's flags, plus one with
// multipath on and one with it off: a reconnect connects each volume the
// way its local-attach did (attach.MultipathConnectors), whatever flags
// reconcile or restore got.
type pathRegistries struct {
	*connector.Registry
	single, multi *connector.Registry
}

func newPathRegistries(h *host.Host, opts connflags.Options) pathRegistries {
	single, multi := opts, opts
	single.Multipath, single.EnforceMultipath = false, false
	multi.Multipath = true
	return pathRegistries{Registry: opts.Registry(h), single: single.Registry(h), multi: multi.Registry(h)}
}

// ForMultipath implements attach.MultipathConnectors.
func (p pathRegistries) ForMultipath(driverVolumeType string, multipath bool) (connector.Connector, error) {
	if multipath {
		return p.multi.For(driverVolumeType)
	}
	return p.single.For(driverVolumeType)
}

// errNeedsAttention makes reconcile exit non-zero when something is not
// healthy (and, with --apply, was not repaired).
var errNeedsAttention = errors.New("not everything is healthy")

// reconcileOptions are reconcile's.
type reconcileOptions struct {
	f        *factory.Factory
	Attacher connflags.Attacher
	Apply    bool
}

// NewCmdReconcile is `brick reconcile`.
func NewCmdReconcile(f *factory.Factory, runF func(context.Context, *reconcileOptions) error) *cobra.Command {
	o := &reconcileOptions{f: f}
	cmd := &cobra.Command{
		Use:   "reconcile",
		Short: "Compare this host's storage with brick's records and Cinder, and repair it",
		Long:  reconcileLong,
		Example: `  brick reconcile
  brick reconcile -f json
  brick reconcile --apply`,
		Args: cobra.NoArgs,
		RunE: factory.RunE(o, o.validate, nil, reconcileRun, runF),
	}
	addFlags(f, cmd, &o.Attacher)
	cmd.Flags().BoolVar(&o.Apply, "apply", false, "repair what can be repaired (see above)")
	return cmd
}

const reconcileLong = `Take the inventory of this host — brick's records, Cinder's attachments for
this host, iSCSI sessions, SCSI disks, multipath maps and their paths,
dm-crypt mappings, NVMe controllers, rbd maps, NFS mounts — and show, per
volume or stray object, its status:

  healthy      attached in Cinder, every path and device here
  degraded     attached, but a path is lost (no session, no disk, not in the map),
               the dm-crypt mapping is closed or the mount is gone
  orphaned     a device, session or record of a volume not attached to this host
  missing      attached here in Cinder, but no device is here
  interrupted  a local-attach or local-detach that did not finish
  unrecorded   attached here in Cinder and present, but brick has no record
  left-alone   storage of no Cinder volume of this host: never touched

--apply repairs: unfinished operations as 'brick cleanup' does, orphans
flushed and disconnected (refused if mounted or open), degraded volumes and
missing persistent ones reconnected from Cinder's attachment (lost paths
logged in and re-added to the map, dm-crypt re-opened, re-mounted). The exit
status is 0 when everything is healthy or left alone (after --apply: when
every repair succeeded).`

func (o *reconcileOptions) validate() error { return o.Attacher.Volume.Validate(o.f.Host()) }

func reconcileRun(ctx context.Context, o *reconcileOptions) error {
	f := o.f
	r, err := reconciler(ctx, f, &o.Attacher, "reconcile")
	if err != nil {
		return err
	}
	rep, applyErr, err := checkAndRepair(ctx, f, r, o.Apply)
	if err != nil {
		return err
	}
	if err := printReport(f, rep, o.Apply); err != nil {
		return err
	}
	switch {
	case applyErr != nil:
		return fmt.Errorf("reconcile --apply: %w", applyErr)
	case !o.Apply && !rep.Healthy():
		return errNeedsAttention
	}
	return nil
}

// checkAndRepair checks and, with apply, repairs, with the live status line
// up meanwhile: repairs flush, log out and wait on Cinder.
func checkAndRepair(ctx context.Context, f *factory.Factory, r *usecase.Reconciler, apply bool) (rep *usecase.Report, applyErr, err error) {
	ctx, end := f.Track(ctx, "reconcile", "")
	defer end()
	f.Status().Step("check")
	if rep, err = r.Check(ctx); err != nil {
		return nil, nil, err
	}
	f.Logger().Debug("reconcile: checked", "seconds", rep.Elapsed.Seconds(), "cinder_seconds", rep.CinderTime.Seconds())
	if apply {
		f.Status().Step("apply")
		applyErr = r.Apply(ctx, rep)
	}
	return rep, applyErr, nil
}

// printReport prints the findings; Result replaces Repair after --apply.
func printReport(f *factory.Factory, rep *usecase.Report, applied bool) error {
	for _, w := range rep.Warnings {
		f.Logger().Warn("reconcile", "err", w)
	}
	last := "Repair"
	if applied {
		last = "Result"
	}
	t := output.Table{Columns: []string{"Status", "Volume", "Kind", "Object", "Paths", "Detail", "Persist", last}}
	for _, fd := range rep.Findings {
		v := fd.Repair
		if applied {
			v = fd.Result
		}
		t.Rows = append(t.Rows, []any{fd.Status, fd.VolumeID, fd.Kind, fd.Object, strings.Join(fd.Paths, " "),
			f.Redactor.Redact(fd.Detail), fd.Persist, f.Redactor.Redact(v)})
	}
	return f.Output().PrintTable(f.Stdout, t)
}
