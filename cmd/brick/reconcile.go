package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/internal/cmd/connflags"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/reconcile"
)

// reconcileFlags are the flags reconcile and restore share.
type reconcileFlags struct {
	vf           connflags.Volume
	fixedKeyFile string
}

func addReconcileFlags(a *app, cmd *cobra.Command, rf *reconcileFlags) {
	f := cmd.Flags()
	a.addAuthFlags(f)
	a.addOutputFlags(f)
	rf.vf.Add(f, connflags.ForAttach)
	connflags.AddFixedKeyFlag(f, &rf.fixedKeyFile)
}

// reconciler builds the whole-host use case on the attach manager.
func reconciler(ctx context.Context, a *app, rf *reconcileFlags, op string) (*reconcile.Reconciler, error) {
	if err := a.needRoot(op); err != nil {
		return nil, err
	}
	m, err := connflags.Manager(ctx, a.factory(), rf.vf.Opts, true, op, "")
	if err != nil {
		return nil, err
	}
	if m.Crypt, err = a.cryptAccess(ctx, m.Cinder, rf.fixedKeyFile); err != nil {
		return nil, err
	}
	regs := newPathRegistries(a, rf.vf.Opts)
	m.Connectors = regs
	if sc, err := a.ironicClientIfConfigured(ctx); err == nil && sc != nil {
		m.Targets = sc
	}
	props, _, err := regs.Gather(a.host.FS, rf.vf.Gather())
	if err != nil {
		return nil, fmt.Errorf("%s: connector: %w", op, err)
	}
	return &reconcile.Reconciler{Host: a.host, Cinder: m.Cinder, Attach: m, Connectors: m.Connectors, HostName: props.Host}, nil
}

// pathRegistries is the registry of the command's flags, plus one with
// multipath on and one with it off: a reconnect connects each volume the
// way its local-attach did (attach.MultipathConnectors), whatever flags
// reconcile or restore got.
type pathRegistries struct {
	*connector.Registry
	single, multi *connector.Registry
}

func newPathRegistries(a *app, opts connflags.Options) pathRegistries {
	single, multi := opts, opts
	single.Multipath, single.EnforceMultipath = false, false
	multi.Multipath = true
	return pathRegistries{Registry: opts.Registry(a.host), single: single.Registry(a.host), multi: multi.Registry(a.host)}
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
	f *app
	reconcileFlags
	Apply bool
}

func newCmdReconcile(f *app, runF func(context.Context, *reconcileOptions) error) *cobra.Command {
	o := &reconcileOptions{f: f}
	cmd := &cobra.Command{
		Use:   "reconcile",
		Short: "Compare this host's storage with brick's records and Cinder, and repair it",
		Long:  reconcileLong,
		Example: `  brick reconcile
  brick reconcile -f json
  brick reconcile --apply`,
		Args: cobra.NoArgs,
		RunE: runE(o, nil, reconcileRun, runF),
	}
	addReconcileFlags(f, cmd, &o.reconcileFlags)
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

func (o *reconcileFlags) validate(f *app) error { return o.vf.Validate(f.host) }

func (o *reconcileOptions) validate() error { return o.reconcileFlags.validate(o.f) }

func reconcileRun(ctx context.Context, o *reconcileOptions) error {
	f := o.f
	r, err := reconciler(ctx, f, &o.reconcileFlags, "reconcile")
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
func checkAndRepair(ctx context.Context, a *app, r *reconcile.Reconciler, apply bool) (rep *reconcile.Report, applyErr, err error) {
	ctx, end := a.track(ctx, "reconcile", "")
	defer end()
	a.status.Step("check")
	if rep, err = r.Check(ctx); err != nil {
		return nil, nil, err
	}
	a.logger.Debug("reconcile: checked", "seconds", rep.Elapsed.Seconds(), "cinder_seconds", rep.CinderTime.Seconds())
	if apply {
		a.status.Step("apply")
		applyErr = r.Apply(ctx, rep)
	}
	return rep, applyErr, nil
}

// printReport prints the findings; Result replaces Repair after --apply.
func printReport(a *app, rep *reconcile.Report, applied bool) error {
	for _, w := range rep.Warnings {
		a.logger.Warn("reconcile", "err", w)
	}
	last := "Repair"
	if applied {
		last = "Result"
	}
	t := output.Table{Columns: []string{"Status", "Volume", "Kind", "Object", "Paths", "Detail", "Persist", last}}
	for _, f := range rep.Findings {
		v := f.Repair
		if applied {
			v = f.Result
		}
		t.Rows = append(t.Rows, []any{f.Status, f.VolumeID, f.Kind, f.Object, strings.Join(f.Paths, " "),
			a.redactor.Redact(f.Detail), f.Persist, a.redactor.Redact(v)})
	}
	return a.out.PrintTable(a.stdout, t)
}
