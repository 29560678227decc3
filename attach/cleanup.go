package attach

import (
	"context"
	"errors"
	"fmt"

	"github.com/brick-storage/brick/ident"
)

// CleanupResult says what Cleanup did for one volume.
type CleanupResult struct {
	VolumeID string
	// Action is "none" (attached, nothing half done), "undone" (an
	// unfinished attach was rolled back), "finished" (an unfinished detach
	// was completed) or "failed".
	Action string
	// Step is the step the record was left at.
	Step string
	Err  error
}

// Cleanup repairs what a crash left half done: an unfinished local-attach
// is undone (disconnect, then the Cinder reservation, export and
// attachment), an unfinished local-detach is finished. With an empty ref it
// repairs every record; attached volumes are left alone.
func (m *Manager) Cleanup(ctx context.Context, ref string, force bool) ([]CleanupResult, error) {
	var recs []*Record
	if ref == "" {
		all, errs := m.store().list()
		for _, e := range errs {
			m.Host.Log.Warn("cleanup: skipping unreadable record", "err", e.Error())
		}
		recs = all
	} else {
		id, err := m.resolveID(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("cleanup %s: %w", ref, err)
		}
		rec, err := m.store().load(id)
		if errors.Is(err, ErrNoRecord) {
			return []CleanupResult{{VolumeID: id, Action: "none", Step: "no record"}}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("cleanup %s: %w", ref, err)
		}
		recs = []*Record{rec}
	}
	var out []CleanupResult
	var firstErr error
	cr := cleanupRun{m: m, force: force}
	for _, r := range recs {
		res := cr.one(ctx, r.VolumeID)
		if res.Err != nil && firstErr == nil {
			firstErr = res.Err
		}
		out = append(out, res)
	}
	return out, firstErr
}

// resolveID maps a reference to a volume ID: a local record's ID or name
// first (cleanup must work when the name lookup cannot), then Cinder.
func (m *Manager) resolveID(ctx context.Context, ref string) (string, error) {
	if rec, err := m.findRecord(ref); err == nil {
		return rec.VolumeID, nil
	}
	if id, ok := ident.ParseUUID(ref); ok {
		return id, nil
	}
	vol, err := m.Cinder.FindVolume(ctx, ref)
	if err != nil {
		return "", err
	}
	return validVolumeID(vol.ID)
}

// cleanupRun repairs the records Cleanup chose, one at a time.
type cleanupRun struct {
	m     *Manager
	force bool
}

// one repairs the record of volume id, under the volume's lock.
func (cr cleanupRun) one(ctx context.Context, id string) CleanupResult {
	m, force := cr.m, cr.force
	res := CleanupResult{VolumeID: id}
	unlock, err := m.Host.Locks.Lock(ctx, "volume-"+id)
	if err != nil {
		res.Action, res.Err = "failed", fmt.Errorf("cleanup %s: %w", id, err)
		return res
	}
	defer unlock()
	rec, err := m.store().load(id) // again, under the lock
	if errors.Is(err, ErrNoRecord) {
		res.Action, res.Step = "none", "no record"
		return res
	}
	if err != nil {
		res.Action, res.Err = "failed", fmt.Errorf("cleanup %s: %w", id, err)
		return res
	}
	res.Step = rec.Step
	switch rec.Phase {
	case PhaseAttached:
		res.Action = "none"
	case PhaseDetaching:
		if err := m.detach(ctx, id, rec, force); err != nil {
			res.Action, res.Err = "failed", fmt.Errorf("cleanup %s: finish detach: %w", id, err)
			return res
		}
		res.Action = "finished"
	case PhaseAttaching:
		if err := cr.undoAttach(ctx, rec); err != nil {
			res.Action, res.Err = "failed", fmt.Errorf("cleanup %s: undo attach (left at step %s): %w; the record is kept", id, rec.Step, err)
			return res
		}
		if err := m.store().remove(id); err != nil {
			res.Action, res.Err = "failed", fmt.Errorf("cleanup %s: %w", id, err)
			return res
		}
		res.Action = "undone"
	}
	return res
}

// undoAttach reverses an unfinished attach from its record, whatever step
// it reached; each undo tolerates "never happened".
func (cr cleanupRun) undoAttach(ctx context.Context, rec *Record) error {
	m := cr.m
	u := undoer{m: m, flow: m.flowFor(rec), rec: rec, orphans: true}
	j := m.journal(rec)
	reached := stepIndex(rec.Step)
	exported := reached >= stepIndex(StepExport)
	j.Push("release", func(ctx context.Context) error { return u.release(ctx, exported) })
	if reached >= stepIndex(StepConnect) && rec.ConnectionInfo != nil {
		info := *rec.ConnectionInfo
		j.Push("disconnect", func(ctx context.Context) error { return u.disconnect(ctx, info, rec.Device) })
	}
	m.pushCryptClose(j, rec)
	if reached >= stepIndex(StepMount) && rec.Mountpoint != "" {
		j.Push("unmount", u.unmount)
	}
	if rec.IronicNode != "" && m.Targets != nil && (rec.IronicTargetUUID != "" || reached >= stepIndex(StepRegister)) {
		j.Push("unregister", u.unregister)
	}
	return j.Rollback(ctx)
}

var attachSteps = []string{StepReserve, StepExport, StepCryptKey, StepConnect, StepDecrypt, StepComplete, StepMkfs, StepMount, StepRegister, StepDone}

// stepIndex orders attach steps; unknown steps (rollback-failed) count as
// the last, so everything is undone.
func stepIndex(s string) int {
	for i, x := range attachSteps {
		if x == s {
			return i
		}
	}
	return len(attachSteps)
}
