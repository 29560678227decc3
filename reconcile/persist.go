package reconcile

import (
	"context"
	"errors"

	"github.com/brick-storage/brick/attach"
)

// Restore is the boot half of persistent attachments: a Check, then the
// repairs of persistent volumes only — a missing or degraded one is
// reconnected from Cinder's attachment (connection info from Cinder,
// dm-crypt re-opened, re-mounted); one whose attachment was deleted in
// Cinder meanwhile is not re-attached: its record goes and the finding
// says so. Other findings are reported, not repaired.
func (r *Reconciler) Restore(ctx context.Context) (*Report, error) {
	rep, err := r.Check(ctx)
	if err != nil {
		return nil, err
	}
	kept := rep.Findings[:0]
	for _, f := range rep.Findings {
		if !f.Persist {
			continue
		}
		if f.Status == Interrupted {
			f.fix, f.Repair = nil, "none at boot: run brick cleanup "+f.VolumeID
		}
		kept = append(kept, f)
	}
	rep.Findings = kept
	return rep, r.Apply(ctx, rep)
}

// Shutdown is the other half: every persistent attachment is unmounted,
// closed, flushed and disconnected; its Cinder attachment and its record
// stay, for Restore at the next boot.
func (r *Reconciler) Shutdown(ctx context.Context) (*Report, error) {
	recs, errs := r.Attach.Records()
	rep := &Report{}
	for _, e := range errs {
		rep.Warnings = append(rep.Warnings, e.Error())
	}
	var first error
	for _, rec := range recs {
		if !rec.Persist || rec.Phase != attach.PhaseAttached {
			continue
		}
		f := Finding{Status: "stopped", VolumeID: rec.VolumeID, Kind: "attachment", Object: rec.DevicePath(), Persist: true,
			Repair: "unmount, close, flush, disconnect; keep the Cinder attachment", Result: "done"}
		err := r.Attach.Suspend(ctx, rec.VolumeID, attach.SuspendOptions{Unmount: true})
		if err != nil {
			f.Status, f.Result = "failed", "failed: "+err.Error()
			first = errors.Join(first, err)
		}
		rep.Findings = append(rep.Findings, f)
	}
	return rep, first
}
