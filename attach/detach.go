package attach

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/rollback"
)

// DetachOptions are local-detach's inputs.
type DetachOptions struct {
	// Volume is an ID or a unique name.
	Volume string
	// AttachmentID picks one attachment when the volume has several to
	// this host and no record.
	AttachmentID string
	// Force detaches even when the device is mounted by someone else, open
	// or cannot be flushed: data not yet written may be lost.
	Force bool
	// Gather finds this host's name and connector when there is no record.
	Gather connector.GatherOptions
}

// Detach runs local-detach: from the record, or without one from Cinder's
// attachment for this host. It unmounts what brick mounted, disconnects
// (refusing a device in use unless Force), then ends the Cinder attachment
// and removes the Ironic target. A record left in the detaching phase
// (crash, Cinder failure) is finished by running Detach or Cleanup again.
func (m *Manager) Detach(ctx context.Context, opts DetachOptions) error {
	ref := opts.Volume
	vol, err := m.Cinder.FindVolume(ctx, ref)
	if err != nil {
		// Without Cinder the record may still name the volume.
		if rec, lerr := m.findRecord(ref); lerr == nil {
			return fmt.Errorf("local-detach %s (volume %s): %w", ref, rec.VolumeID, err)
		}
		return fmt.Errorf("local-detach %s: %w", ref, err)
	}
	id, unlock, err := m.lock(ctx, vol)
	if err != nil {
		return fmt.Errorf("local-detach %s: %w", ref, err)
	}
	defer unlock()
	rec, err := m.detachRecord(ctx, vol, id, opts)
	if err != nil {
		return fmt.Errorf("local-detach %s: %w", ref, err)
	}
	return m.detach(ctx, ref, rec, opts.Force)
}

// detachRecord is the record to detach from: brick's own, or one made
// from Cinder's attachment to this host.
func (m *Manager) detachRecord(ctx context.Context, vol *cinderapi.Volume, id string, opts DetachOptions) (*Record, error) {
	rec, err := m.store().load(id)
	switch {
	case errors.Is(err, ErrNoRecord):
		rec, err := m.recordFromCinder(ctx, vol, opts)
		if err != nil {
			return nil, err
		}
		return rec, m.checkUnrecorded(ctx, rec, opts.Force)
	case err != nil:
		return nil, err
	case rec.Phase == PhaseAttaching:
		return nil, fmt.Errorf("%w: local-attach did not finish (step %s); run brick cleanup %s", ErrHalfDone, rec.Step, id)
	case opts.AttachmentID != "" && rec.AttachmentID != "" && opts.AttachmentID != rec.AttachmentID:
		return nil, fmt.Errorf("the local record holds attachment %s, not %s", rec.AttachmentID, opts.AttachmentID)
	}
	return rec, nil
}

// detachRun is one local-detach under way: what its steps share.
type detachRun struct {
	m     *Manager
	rec   *Record
	flow  cinderapi.Flow
	force bool
	info  connector.ConnectionInfo
	conn  connector.Connector
	// wasDetaching: an earlier detach got past its first step.
	wasDetaching bool
	// unmark rolls back this run's BeginDetach (legacy); nil when none.
	unmark func(context.Context) error
}

// detach runs the detach steps from a record; every step tolerates being
// already done, so a crashed detach is finished by running it again. Until
// the device is gone a failure leaves the volume attached (in Cinder and
// in the record); after that, running it again finishes the job.
func (m *Manager) detach(ctx context.Context, ref string, rec *Record, force bool) error {
	d := &detachRun{m: m, rec: rec, flow: m.flowFor(rec), force: force, wasDetaching: rec.Phase == PhaseDetaching}
	if rec.ConnectionInfo != nil {
		d.info = *rec.ConnectionInfo
	}
	c, err := m.Connectors.For(d.info.DriverVolumeType)
	if err != nil {
		return opError("local-detach", ref, err)
	}
	d.conn = c
	rec.Phase = PhaseDetaching
	j := m.journal(rec)
	j.Push("restore record", d.restoreAttached)
	if err := j.Run(ctx, d.steps()...); err != nil {
		first := opError("local-detach", ref, err)
		if rbErr := j.Rollback(ctx); rbErr != nil {
			return fmt.Errorf("%w; %v", first, rbErr)
		}
		return first
	}
	j.Forget() // the device is gone: no way back
	if err := j.Run(ctx, d.finalSteps()...); err != nil {
		return d.finalError(ref, err)
	}
	rollback.Trace(ctx, StepDone)
	if err := m.store().remove(rec.VolumeID); err != nil {
		return opError("local-detach", ref, err)
	}
	return nil
}

// steps lead up to the disconnect; each can still be taken back.
func (d *detachRun) steps() []rollback.Step {
	var steps []rollback.Step
	if d.rec.Mounted && d.rec.Mountpoint != "" {
		steps = append(steps, rollback.Step{Name: StepUnmount, Do: d.unmount})
	}
	steps = append(steps, d.cryptSteps()...)
	// Legacy: mark the volume detaching first, so nobody else attaches it
	// while the device goes away; rolled back if the disconnect fails.
	if !d.wasDetaching || d.rec.Step == StepBeginDetach {
		steps = append(steps, rollback.Step{Name: StepBeginDetach, Do: d.beginDetach, Undo: d.rollDetach, UndoName: "roll_detaching"})
	}
	return append(steps, rollback.Step{Name: StepDisconnect, Do: d.disconnect})
}

// finalSteps follow the disconnect.
func (d *detachRun) finalSteps() []rollback.Step {
	steps := []rollback.Step{{Name: StepCinderDetach, Do: d.cinderDetach}}
	if d.rec.IronicTargetUUID != "" && d.m.Targets != nil {
		steps = append(steps, rollback.Step{Name: StepUnregister, Do: d.unregister})
	}
	return steps
}

func (d *detachRun) unmount(ctx context.Context) error {
	if err := d.m.Host.Unmount(ctx, d.rec.Mountpoint); err != nil {
		return err
	}
	d.rec.Mounted = false
	return nil
}

func (d *detachRun) beginDetach(ctx context.Context) error {
	unmark, err := d.flow.BeginDetach(ctx, d.rec.VolumeID)
	if isInvalidState(err) {
		return nil // already detaching (an earlier try): carry on
	}
	d.unmark = unmark
	return err
}

// rollDetach puts the volume back in-use; a failure is a warning, the
// error that matters is the disconnect's.
func (d *detachRun) rollDetach(ctx context.Context) error {
	if d.unmark == nil {
		return nil
	}
	if err := d.unmark(ctx); err != nil {
		d.m.Host.Log.Warn("roll_detaching failed", "volume", d.rec.VolumeID, "err", err.Error())
	}
	return nil
}

func (d *detachRun) disconnect(ctx context.Context) error {
	err := d.conn.Disconnect(ctx, d.info, d.rec.Device, connector.DisconnectOptions{Force: d.force})
	if err != nil && heldOpen(err) {
		err = fmt.Errorf("%w (%w): unmount it or close it, or use --force", err, ErrInUse)
	}
	return err
}

// heldOpen reports a disconnect refused because the device is held, or
// whose flush failed or was cut short by its deadline: both need the holder
// gone, or --force.
func heldOpen(err error) bool {
	return errors.Is(err, host.ErrDeviceBusy) || errors.Is(err, host.ErrFlush)
}

// restoreAttached puts the record back to "attached" after a detach failed
// before anything irreversible happened (unmount or disconnect refused).
func (d *detachRun) restoreAttached(context.Context) error {
	if d.wasDetaching {
		return nil
	}
	d.rec.Phase = PhaseAttached
	d.rec.Step = StepDone
	d.rec.UpdatedAt = now()
	return d.m.store().save(d.rec)
}

func (d *detachRun) cinderDetach(ctx context.Context) error {
	if d.rec.ExternalAttachment {
		return nil // its owner deletes it
	}
	return d.flow.Release(ctx, d.rec.VolumeID, cinderapi.ReleaseOpts{
		AttachmentID: d.rec.AttachmentID, Connector: d.rec.Connector, HostName: d.rec.HostName,
	})
}

func (d *detachRun) unregister(ctx context.Context) error {
	err := d.m.Targets.DeleteTarget(ctx, d.rec.IronicNode, d.rec.IronicTargetUUID)
	if err != nil && deletionDeferred(err) {
		d.m.Host.Log.Warn("volume detached, but its Ironic volume target stays", "volume", d.rec.VolumeID, "node", d.rec.IronicNode,
			"target", d.rec.IronicTargetUUID, "reason", err.Error())
		return nil
	}
	return err
}

// finalError tells how to finish a detach that failed after the disconnect.
func (d *detachRun) finalError(ref string, err error) error {
	id := d.rec.VolumeID
	if d.rec.Step == StepCinderDetach {
		return fmt.Errorf("%w; the device is disconnected: run brick local-detach %s again or brick cleanup %s", opError("local-detach", ref, err), id, id)
	}
	return fmt.Errorf("%w; run brick cleanup %s", opError("local-detach", ref, err), id)
}

// recordFromCinder builds a detach record for a volume brick has no record
// of, from its attachment to this host: the connection info comes from
// Cinder again (the attachment, or initialize_connection for the legacy
// flow, which returns the existing export).
func (m *Manager) recordFromCinder(ctx context.Context, vol *cinderapi.Volume, opts DetachOptions) (*Record, error) {
	props, conn, err := m.hostConnector(opts.Gather)
	if err != nil {
		return nil, err
	}
	var mine []string
	for _, a := range vol.Attachments {
		if a.HostName == props.Host && (opts.AttachmentID == "" || a.AttachmentID == opts.AttachmentID) {
			mine = append(mine, a.AttachmentID)
		}
	}
	sort.Strings(mine)
	switch {
	case len(mine) == 0 && opts.AttachmentID != "":
		return nil, fmt.Errorf("%w: volume %s has no attachment %s for host %s (status %s)", ErrNotAttached, vol.ID, opts.AttachmentID, props.Host, vol.Status)
	case len(mine) == 0:
		return nil, fmt.Errorf("%w: volume %s has no attachment for host %s (status %s) and brick has no record of it", ErrNotAttached, vol.ID, props.Host, vol.Status)
	case len(mine) > 1:
		return nil, fmt.Errorf("volume %s has %d attachments to host %s: pick one with --attachment-id (%s)", vol.ID, len(mine), props.Host, strings.Join(mine, ", "))
	}
	flow := m.Cinder.Flow()
	info, err := flow.ConnectionInfo(ctx, vol.ID, mine[0], conn)
	if err != nil {
		return nil, err
	}
	m.Host.Redactor.Add(info.Secrets()...)
	red := info.Redacted()
	t := now()
	return &Record{
		VolumeID: vol.ID, VolumeName: vol.Name, Phase: PhaseAttached, Step: StepDone, Flow: flow.Name(),
		Microversion: microversionOf(m.Cinder), AttachmentID: mine[0], HostName: props.Host, Mode: "rw",
		Connector: conn, ConnectionInfo: &red, CreatedAt: t, UpdatedAt: t,
	}, nil
}

// findRecord finds a record by volume ID or name, without Cinder.
func (m *Manager) findRecord(ref string) (*Record, error) {
	recs, _ := m.store().list()
	var found []*Record
	for _, r := range recs {
		if r.VolumeID == strings.ToLower(ref) || r.VolumeName == ref {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("volume %s: %w", ref, ErrNoRecord)
	}
	return found[0], nil
}
