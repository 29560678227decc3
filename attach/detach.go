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
	id, err := validVolumeID(vol.ID)
	if err != nil {
		return fmt.Errorf("local-detach %s: %w", ref, err)
	}
	unlock, err := m.Host.FS.Lock(ctx, "volume-"+id)
	if err != nil {
		return fmt.Errorf("local-detach %s: %w", ref, err)
	}
	defer unlock()

	st := m.store()
	rec, err := st.load(id)
	switch {
	case errors.Is(err, ErrNoRecord):
		rec, err = m.recordFromCinder(ctx, vol, opts)
		if err != nil {
			return fmt.Errorf("local-detach %s: %w", ref, err)
		}
	case err != nil:
		return fmt.Errorf("local-detach %s: %w", ref, err)
	case rec.Phase == PhaseAttaching:
		return fmt.Errorf("local-detach %s: %w: local-attach did not finish (step %s); run brick cleanup %s", ref, ErrHalfDone, rec.Step, id)
	case opts.AttachmentID != "" && rec.AttachmentID != "" && opts.AttachmentID != rec.AttachmentID:
		return fmt.Errorf("local-detach %s: the local record holds attachment %s, not %s", ref, rec.AttachmentID, opts.AttachmentID)
	}
	return m.detach(ctx, ref, rec, opts.Force)
}

// detach runs the detach steps from a record; every step tolerates being
// already done, so a crashed detach is finished by running it again.
func (m *Manager) detach(ctx context.Context, ref string, rec *Record, force bool) error {
	st := m.store()
	flow := m.flowFor(rec)
	id := rec.VolumeID
	wasDetaching := rec.Phase == PhaseDetaching
	rec.Phase = PhaseDetaching
	step := ""
	begin := func(s string) error {
		step = s
		rec.Step = s
		rec.UpdatedAt = m.now()
		if err := st.save(rec); err != nil {
			return err
		}
		m.at(s)
		return nil
	}
	fail := func(err error) error { return opError("local-detach", ref, step, err) }

	if rec.Mounted && rec.Mountpoint != "" {
		if err := begin(StepUnmount); err != nil {
			return fail(err)
		}
		if err := m.unmount(ctx, rec.Mountpoint, force); err != nil {
			return m.restoreAttached(rec, fail(err), wasDetaching)
		}
		rec.Mounted = false
	}

	var info connector.ConnectionInfo
	if rec.ConnectionInfo != nil {
		info = *rec.ConnectionInfo
	}
	c, err := m.Connectors.For(info.DriverVolumeType)
	if err != nil {
		return fail(err)
	}

	// Legacy: mark the volume detaching first, so nobody else attaches it
	// while the device goes away; roll back if the disconnect fails.
	began := false
	if !wasDetaching || rec.Step == StepBeginDetach {
		if err := begin(StepBeginDetach); err != nil {
			return fail(err)
		}
		if err := flow.BeginDetach(ctx, id); err != nil {
			if !isInvalidState(err) {
				return m.restoreAttached(rec, fail(err), wasDetaching)
			}
			// Already detaching (an earlier try): carry on.
		} else {
			began = true
		}
	}

	if err := begin(StepDisconnect); err != nil {
		return fail(err)
	}
	if err := c.Disconnect(ctx, info, rec.Device, connector.DisconnectOptions{Force: force}); err != nil {
		if began {
			if rerr := flow.RollDetach(context.WithoutCancel(ctx), id); rerr != nil {
				m.Host.Log.Warn("roll_detaching failed", "volume", id, "err", rerr.Error())
			}
		}
		if errors.Is(err, host.ErrDeviceBusy) || strings.Contains(err.Error(), "busy") || strings.Contains(err.Error(), "in use") {
			err = fmt.Errorf("%w (%w): unmount it or close it, or use --force", err, ErrInUse)
		}
		return m.restoreAttached(rec, fail(err), wasDetaching)
	}

	if err := begin(StepCinderDetach); err != nil {
		return fail(err)
	}
	if err := flow.Detach(ctx, id, rec.AttachmentID, rec.Connector); err != nil {
		return fmt.Errorf("%w; the device is disconnected: run brick local-detach %s again or brick cleanup %s", fail(err), id, id)
	}

	if rec.IronicTargetUUID != "" && m.Targets != nil {
		if err := begin(StepUnregister); err != nil {
			return fail(err)
		}
		if err := m.Targets.DeleteTarget(ctx, rec.IronicNode, rec.IronicTargetUUID); err != nil {
			if !deletionDeferred(err) {
				return fmt.Errorf("%w; run brick cleanup %s", fail(err), id)
			}
			m.Host.Log.Warn("volume detached, but its Ironic volume target stays", "volume", id, "node", rec.IronicNode,
				"target", rec.IronicTargetUUID, "reason", err.Error())
		}
	}
	m.at(StepDone)
	if err := st.remove(id); err != nil {
		return fail(err)
	}
	return nil
}

// restoreAttached puts a record back to "attached" after a detach failed
// before anything irreversible happened (unmount or disconnect refused).
func (m *Manager) restoreAttached(rec *Record, err error, wasDetaching bool) error {
	if !wasDetaching {
		rec.Phase = PhaseAttached
		rec.Step = StepDone
		rec.UpdatedAt = m.now()
		if serr := m.store().save(rec); serr != nil {
			return fmt.Errorf("%w; %v", err, serr)
		}
	}
	return err
}

// recordFromCinder builds a detach record for a volume brick has no record
// of, from its attachment to this host: the connection info comes from
// Cinder again (the attachment, or initialize_connection for the legacy
// flow, which returns the existing export).
func (m *Manager) recordFromCinder(ctx context.Context, vol *cinderapi.Volume, opts DetachOptions) (*Record, error) {
	props, warns, err := connector.Gather(m.Host.FS, opts.Gather)
	for _, w := range warns {
		m.Host.Log.Warn("connector: left out", "file", w.File, "reason", w.Err.Error())
	}
	if err != nil {
		return nil, fmt.Errorf("connector: %w", err)
	}
	conn, err := cinderapi.ConnectorFrom(props)
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
	now := m.now()
	return &Record{
		VolumeID: vol.ID, VolumeName: vol.Name, Phase: PhaseAttached, Step: StepDone, Flow: flow.Name(),
		Microversion: microversionOf(m.Cinder), AttachmentID: mine[0], HostName: props.Host, Mode: "rw",
		Connector: conn, ConnectionInfo: &red, CreatedAt: now, UpdatedAt: now,
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
