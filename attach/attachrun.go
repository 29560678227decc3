package attach

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/rollback"
)

// attachRun is one local-attach under way: what its steps share.
type attachRun struct {
	m    *Manager
	opts AttachOptions
	rec  *Record
	flow cinderapi.Flow
	undo undoer

	reserved   string // the attachment ID Reserve returned (v3)
	reserveErr error
	exported   bool                     // Export ran (perhaps half way)
	info       connector.ConnectionInfo // with its secrets, unlike rec's
	conn       connector.Connector
	dev        *connector.Device
	connectErr error
	crypt      *cryptPlan // an encrypted volume's spec and key (crypt-key step)
	reopen     bool       // a restore re-opening what an attach made: never format
}

func (m *Manager) newAttachRun(vol *cinderapi.Volume, id, mode string, opts AttachOptions) (*attachRun, error) {
	if old, err := m.store().load(id); err == nil {
		return nil, fmt.Errorf("volume %s already has a local record (phase %s, step %s): run brick local-detach or brick cleanup", id, old.Phase, old.Step)
	} else if !errors.Is(err, ErrNoRecord) {
		return nil, err
	}
	props, conn, err := m.hostConnector(opts.Gather)
	if err != nil {
		return nil, err
	}
	if opts.Mountpoint != "" {
		// Cinder records the connector's mountpoint on v3 attachments.
		conn["mountpoint"] = opts.Mountpoint
	}
	flow := m.Cinder.Flow()
	rec := &Record{
		VolumeID: id, VolumeName: vol.Name, Phase: PhaseAttaching, Flow: flow.Name(),
		Microversion: microversionOf(m.Cinder), HostName: props.Host, Mode: mode, Connector: conn,
		Mountpoint: opts.Mountpoint, IronicNode: opts.IronicNode, CreatedAt: now(), Persist: opts.Persist,
	}
	return &attachRun{m: m, opts: opts, rec: rec, flow: flow, undo: undoer{m: m, flow: flow, rec: rec}}, nil
}

// steps are local-attach's steps for these options, in order.
func (r *attachRun) steps() []rollback.Step {
	steps := []rollback.Step{
		// One Cinder undo takes back the reservation, the export and the
		// completion alike, after the device is gone.
		{Name: StepReserve, Do: r.reserve, Undo: r.release, UndoName: "release"},
		{Name: StepExport, Do: r.export},
	}
	steps = append(steps, r.cryptKeySteps()...)
	steps = append(steps, rollback.Step{Name: StepConnect, Do: r.connect, Undo: r.disconnect, UndoName: "disconnect"})
	steps = append(steps, r.cryptSteps()...)
	steps = append(steps, rollback.Step{Name: StepComplete, Do: r.complete})
	if r.opts.Mkfs != "" {
		steps = append(steps, rollback.Step{Name: StepMkfs, Do: r.mkfs})
	}
	if r.opts.Mountpoint != "" {
		steps = append(steps, rollback.Step{Name: StepMount, Do: r.mount, Undo: r.undo.unmount, UndoName: "unmount"})
	}
	if r.opts.IronicNode != "" {
		steps = append(steps, rollback.Step{Name: StepRegister, Do: r.register, Undo: r.unregister, UndoName: "unregister"})
	}
	return steps
}

func (r *attachRun) reserve(ctx context.Context) error {
	if r.opts.Attachment != "" {
		return r.adopt()
	}
	r.reserved, r.reserveErr = r.flow.Reserve(ctx, r.rec.VolumeID, r.rec.Mode)
	r.rec.AttachmentID = r.reserved
	return r.reserveErr
}

// adopt takes the attachment its owner reserved instead of reserving one.
func (r *attachRun) adopt() error {
	if r.flow.Name() != cinderapi.FlowV3 {
		return fmt.Errorf("attachment %s: a reserved attachment needs Cinder's v3 attachments flow (microversion %s or later), this client uses %s",
			r.opts.Attachment, cinderapi.MVComplete, r.flow.Name())
	}
	r.reserved = r.opts.Attachment
	r.rec.AttachmentID = r.reserved
	r.rec.ExternalAttachment = true
	return nil
}

// release runs even when Reserve failed: a legacy reserve may have
// reserved the volume (a v3 one that failed left no ID to delete).
func (r *attachRun) release(ctx context.Context) error {
	if isInvalidState(r.reserveErr) {
		// The volume was not ours to reserve (in-use elsewhere):
		// unreserving would free someone else's claim.
		return nil
	}
	return r.undo.release(ctx, r.exported)
}

// export asks Cinder for the connection info and picks its connector.
func (r *attachRun) export(ctx context.Context) error {
	r.exported = true
	info, err := r.flow.Export(ctx, r.rec.VolumeID, r.reserved, r.rec.Connector)
	if err != nil {
		return err
	}
	r.m.Host.Redactor.Add(info.Secrets()...)
	red := info.Redacted()
	r.rec.ConnectionInfo = &red
	r.info = info
	r.conn, err = r.m.Connectors.For(info.DriverVolumeType)
	return err
}

func (r *attachRun) connect(ctx context.Context) error {
	r.dev, r.connectErr = r.conn.Connect(ctx, r.info)
	if r.connectErr != nil {
		return r.connectErr
	}
	r.rec.Device = r.dev
	return nil
}

func (r *attachRun) disconnect(ctx context.Context) error {
	// Connectors validate the whole connection info before touching the
	// host, so info they refused left nothing to undo here; a disconnect
	// would only refuse it again and keep the record (and every later
	// cleanup) failing.
	if errors.Is(r.connectErr, connector.ErrInvalid) {
		return nil
	}
	return r.undo.disconnect(ctx, r.info, r.dev)
}

func (r *attachRun) complete(ctx context.Context) error {
	// Cinder shows the mountpoint as the attachment's device; without one
	// the device path is the most useful thing to show.
	mp := r.opts.Mountpoint
	if mp == "" {
		mp = r.devicePath()
	}
	o := cinderapi.CompleteOpts{HostName: r.rec.HostName, Mountpoint: mp, Mode: r.rec.Mode}
	id, err := r.flow.Complete(ctx, r.rec.VolumeID, r.reserved, o)
	if err != nil {
		return err
	}
	r.rec.AttachmentID = id
	return nil
}

func (r *attachRun) mkfs(ctx context.Context) error {
	formatted, err := r.m.Host.MkfsIfBlank(ctx, r.devicePath(), r.opts.Mkfs, r.opts.MkfsForce || r.freshPlaintext())
	if err != nil {
		return err
	}
	if formatted {
		r.rec.Formatted = r.opts.Mkfs
	}
	return nil
}

func (r *attachRun) mount(ctx context.Context) error {
	dev := r.devicePath()
	t, err := r.m.Host.MountType(ctx, dev, r.opts.MountFSType, r.rec.Formatted)
	if err != nil {
		return fmt.Errorf("mount %s on %s: %w", dev, r.opts.Mountpoint, err)
	}
	if err := r.m.Host.Mount(ctx, dev, r.opts.Mountpoint, t, host.MountOptions(r.rec.Mode == "ro", r.opts.MountSuidDev)); err != nil {
		return err
	}
	r.rec.Mounted, r.rec.MountFSType, r.rec.MountSuidDev = true, r.opts.MountFSType, r.opts.MountSuidDev
	return nil
}

func (r *attachRun) register(ctx context.Context) error {
	// Ironic keeps the target's connection properties for booting from
	// the volume; it masks the credentials when showing them.
	props := make(map[string]any, len(r.info.Data))
	maps.Copy(props, r.info.Data)
	uuid, err := r.m.Targets.CreateTarget(ctx, r.opts.IronicNode, r.rec.VolumeID, r.info.DriverVolumeType, r.opts.BootIndex, props, targetTag(r.rec))
	if err != nil {
		return err
	}
	// Created but not yet recorded: cleanup finds it by its tag.
	rollback.Trace(ctx, StepRegistered)
	r.rec.IronicTargetUUID = uuid
	return nil
}

// unregister deletes the target this attach created, if it did.
func (r *attachRun) unregister(ctx context.Context) error {
	if r.rec.IronicTargetUUID == "" {
		return nil
	}
	return r.undo.unregister(ctx)
}

// fail undoes what the run did and returns its error; when the undo
// fails too the record stays for `brick cleanup`.
func (r *attachRun) fail(ctx context.Context, j *rollback.Journal, err error) error {
	first := opError("local-attach", r.opts.Volume, err)
	id := r.rec.VolumeID
	st := r.m.store()
	if rbErr := j.Rollback(ctx); rbErr != nil {
		r.rec.Step = "rollback-failed"
		r.rec.UpdatedAt = now()
		if serr := st.save(r.rec); serr != nil {
			r.m.Host.Log.Warn("save state record", "volume", id, "err", serr.Error())
		}
		return fmt.Errorf("%w; rollback incomplete (%v): run brick cleanup %s", first, rbErr, id)
	}
	if rerr := st.remove(id); rerr != nil {
		return fmt.Errorf("%w; %v", first, rerr)
	}
	return first
}
