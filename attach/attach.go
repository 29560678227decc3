// Package attach is brick's local-attach / local-detach use case: it asks
// Cinder to export a volume to this host, connects it with the protocol's
// connector, completes the attachment, optionally formats and mounts it
// and registers it with Ironic, and keeps a state record so that a detach
// or a crash cleanup knows what was done. Any failure undoes the steps
// already done, newest first, under its own deadline.
//
// A record is written BEFORE each step that changes Cinder or the host,
// naming that step, so a kill -9 at any point leaves enough behind for
// `brick cleanup` to finish (a detach) or undo (an attach).
package attach

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
)

// Cinder is what attach needs of cinderapi.Client.
type Cinder interface {
	FindVolume(ctx context.Context, ref string) (*cinderapi.Volume, error)
	Volume(ctx context.Context, id string) (*cinderapi.Volume, error)
	Attachments(ctx context.Context, volumeID string) ([]cinderapi.Attachment, error)
	Flow() cinderapi.Flow
	FlowNamed(name string) (cinderapi.Flow, error)
}

// Connectors picks a connector by driver_volume_type (*connector.Registry).
type Connectors interface {
	For(driverVolumeType string) (connector.Connector, error)
}

// TargetRegistry registers the attached volume as an Ironic volume target
// of a node (the ironicapi package implements it).
//
// A DeleteTarget error that has a method DeletionDeferred() bool returning
// true means the target cannot be deleted now but may be later (Ironic
// deletes targets only while the node is powered off): local-detach then
// finishes with a warning carrying the error's advice instead of failing,
// since the volume is already detached from this host and from Cinder.
type TargetRegistry interface {
	// CreateTarget registers volumeID on node and returns the target's
	// UUID; tag is kept with the target (Ironic's extra) so that FindTarget
	// can find it again when brick died before it recorded the UUID.
	CreateTarget(ctx context.Context, node, volumeID, volumeType string, bootIndex int, properties map[string]any, tag string) (string, error)
	// FindTarget returns the UUID of node's target for volumeID created
	// with tag, or "" when there is none.
	FindTarget(ctx context.Context, node, volumeID, tag string) (string, error)
	DeleteTarget(ctx context.Context, node, targetUUID string) error
}

// targetTag names one local-attach of a volume for its Ironic target: the
// volume and the time its record was created, both in the record.
func targetTag(rec *Record) string {
	return rec.VolumeID + "@" + rec.CreatedAt.UTC().Format(time.RFC3339Nano)
}

// deletionDeferred reports whether err says "not now, later".
func deletionDeferred(err error) bool {
	var d interface{ DeletionDeferred() bool }
	return errors.As(err, &d) && d.DeletionDeferred()
}

// Steps, in the order local-attach runs them; Options.AtStep sees each
// name just before the step starts (and "done" at the end).
const (
	StepReserve  = "reserve"
	StepExport   = "export"
	StepConnect  = "connect"
	StepComplete = "complete"
	StepMkfs     = "mkfs"
	StepMount    = "mount"
	StepRegister = "register"
	// StepRegistered is no step of its own: AtStep sees it between Ironic
	// creating the target and brick recording its UUID.
	StepRegistered = "registered"
	StepDone       = "done"

	StepUnmount      = "unmount"
	StepBeginDetach  = "begin-detach"
	StepDisconnect   = "disconnect"
	StepCinderDetach = "cinder-detach"
	StepUnregister   = "unregister"
)

// DefaultRollbackTimeout bounds a whole rollback.
const DefaultRollbackTimeout = 5 * time.Minute

// Manager runs local attaches and detaches on one host.
type Manager struct {
	Host       *host.Host
	Cinder     Cinder
	Connectors Connectors
	// Targets registers Ironic volume targets; nil when not configured.
	Targets TargetRegistry
	// StateDir is the host path of the records (DefaultStateDir when empty).
	StateDir string
	// RollbackTimeout bounds each rollback or cleanup (default
	// DefaultRollbackTimeout); it runs even when the caller's context ended.
	RollbackTimeout time.Duration
	// AtStep, when set, is called with each step name just before the step
	// runs. Tests use it to crash brick at a chosen point (the CLI wires it
	// to BRICK_TEST_CRASH_AT).
	AtStep func(step string)
	// Now returns the time (time.Now when nil).
	Now func() time.Time
}

func (m *Manager) store() store {
	dir := m.StateDir
	if dir == "" {
		dir = DefaultStateDir
	}
	return store{fs: m.Host.FS, dir: dir}
}

func (m *Manager) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now().UTC()
}

func (m *Manager) rollbackTimeout() time.Duration {
	if m.RollbackTimeout > 0 {
		return m.RollbackTimeout
	}
	return DefaultRollbackTimeout
}

func (m *Manager) at(step string) {
	if m.AtStep != nil {
		m.AtStep(step)
	}
}

// AttachOptions are local-attach's inputs.
type AttachOptions struct {
	// Volume is an ID or a unique name.
	Volume string
	// Gather builds the connector sent to Cinder (multipath, nic, host...).
	Gather connector.GatherOptions
	// Mode is "rw" (default) or "ro".
	Mode string
	// Mountpoint, when set, is where the device is mounted (created if
	// missing).
	Mountpoint string
	// Mkfs formats a blank device with this filesystem before mounting; a
	// device that already holds a filesystem or partition table is never
	// formatted.
	Mkfs string
	// IronicNode and BootIndex register the volume as an Ironic volume
	// target of that node (needs Manager.Targets).
	IronicNode string
	BootIndex  int
}

// ErrInUse is returned by a detach that would cut off a mounted or open
// device without Force.
var ErrInUse = errors.New("device in use")

// ErrNotAttached is returned by a detach of a volume that has no
// attachment to this host.
var ErrNotAttached = errors.New("not attached to this host")

// ErrHalfDone means a record shows an unfinished operation; cleanup repairs it.
var ErrHalfDone = errors.New("unfinished operation")

// undoStep is one thing to reverse on failure.
type undoStep struct {
	name string
	fn   func(ctx context.Context) error
}

// opError formats failures as "local-attach VOLUME: STEP: cause"; Cinder
// errors already name their step and volume.
func opError(op, volume, step string, err error) error {
	var ce *cinderapi.Error
	if errors.As(err, &ce) {
		return fmt.Errorf("%s %s: %w", op, volume, oneLine{err})
	}
	return fmt.Errorf("%s %s: %s: %w", op, volume, step, oneLine{err})
}

// oneLine keeps an error's chain but prints it on one line: connectors
// join per-path errors and tool output with newlines, and the CLI prints
// one line per error.
type oneLine struct{ err error }

func (o oneLine) Error() string {
	lines := strings.Split(strings.TrimSpace(o.err.Error()), "\n")
	out := lines[:0]
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}

func (o oneLine) Unwrap() error { return o.err }

// Attach runs local-attach. On failure every step already done is undone
// (newest first) and the first error is returned; if the undo itself fails
// the record stays for `brick cleanup` and the error says so.
func (m *Manager) Attach(ctx context.Context, opts AttachOptions) (*Record, error) {
	ref := opts.Volume
	mode := opts.Mode
	if mode == "" {
		mode = "rw"
	}
	if mode != "rw" && mode != "ro" {
		return nil, fmt.Errorf("local-attach %s: mode %s: use rw or ro", ref, connector.Quote(mode))
	}
	if opts.Mountpoint != "" {
		if err := checkMountpoint(opts.Mountpoint); err != nil {
			return nil, fmt.Errorf("local-attach %s: %w", ref, err)
		}
	}
	if opts.Mkfs != "" {
		if opts.Mountpoint == "" {
			return nil, fmt.Errorf("local-attach %s: --mkfs needs --mountpoint", ref)
		}
		if err := checkFSType(opts.Mkfs); err != nil {
			return nil, fmt.Errorf("local-attach %s: %w", ref, err)
		}
	}
	if opts.IronicNode != "" && m.Targets == nil {
		return nil, fmt.Errorf("local-attach %s: Ironic registration is not configured", ref)
	}
	vol, err := m.Cinder.FindVolume(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("local-attach %s: %w", ref, err)
	}
	id, err := validVolumeID(vol.ID)
	if err != nil {
		return nil, fmt.Errorf("local-attach %s: %w", ref, err)
	}
	unlock, err := m.Host.FS.Lock(ctx, "volume-"+id)
	if err != nil {
		return nil, fmt.Errorf("local-attach %s: %w", ref, err)
	}
	defer unlock()

	st := m.store()
	if old, err := st.load(id); err == nil {
		return nil, fmt.Errorf("local-attach %s: volume %s already has a local record (phase %s, step %s): run brick local-detach or brick cleanup", ref, id, old.Phase, old.Step)
	} else if !errors.Is(err, ErrNoRecord) {
		return nil, fmt.Errorf("local-attach %s: %w", ref, err)
	}

	props, warns, err := connector.Gather(m.Host.FS, opts.Gather)
	for _, w := range warns {
		m.Host.Log.Warn("connector: left out", "file", w.File, "reason", w.Err.Error())
	}
	if err != nil {
		return nil, fmt.Errorf("local-attach %s: connector: %w", ref, err)
	}
	conn, err := cinderapi.ConnectorFrom(props)
	if err != nil {
		return nil, fmt.Errorf("local-attach %s: connector: %w", ref, err)
	}
	if opts.Mountpoint != "" {
		// Cinder records the connector's mountpoint on v3 attachments.
		conn["mountpoint"] = opts.Mountpoint
	}

	flow := m.Cinder.Flow()
	now := m.now()
	rec := &Record{
		VolumeID: id, VolumeName: vol.Name, Phase: PhaseAttaching, Flow: flow.Name(),
		Microversion: microversionOf(m.Cinder), HostName: props.Host, Mode: mode, Connector: conn,
		Mountpoint: opts.Mountpoint, IronicNode: opts.IronicNode, CreatedAt: now,
	}
	var undo []undoStep
	step := ""
	// begin records the step before it runs: a crash inside it is then
	// visible to cleanup.
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
	fail := func(err error) (*Record, error) {
		first := opError("local-attach", ref, step, err)
		if rbErr := m.rollback(ctx, undo); rbErr != nil {
			rec.Step = "rollback-failed"
			rec.UpdatedAt = m.now()
			if serr := st.save(rec); serr != nil {
				m.Host.Log.Warn("save state record", "volume", id, "err", serr.Error())
			}
			return nil, fmt.Errorf("%w; rollback incomplete (%v): run brick cleanup %s", first, rbErr, id)
		}
		if rerr := st.remove(id); rerr != nil {
			return nil, fmt.Errorf("%w; %v", first, rerr)
		}
		return nil, first
	}
	if err := begin(StepReserve); err != nil {
		return nil, fmt.Errorf("local-attach %s: %w", ref, err)
	}
	rec.AttachmentID, err = flow.Reserve(ctx, id, mode)
	// Unreserve is pushed even on error: a v3 reserve that failed after
	// Cinder created the attachment leaves nothing to delete by ID, but a
	// legacy one may have reserved the volume.
	attID := rec.AttachmentID
	undo = append(undo, undoStep{"unreserve", func(ctx context.Context) error { return flow.Unreserve(ctx, id, attID) }})
	if err != nil {
		if isInvalidState(err) {
			// The volume was not ours to reserve (in-use elsewhere):
			// unreserving would free someone else's claim.
			undo = nil
		}
		return fail(err)
	}

	if err := begin(StepExport); err != nil {
		return fail(err)
	}
	undo = append(undo, undoStep{"unexport", func(ctx context.Context) error { return flow.Unexport(ctx, id, attID, conn) }})
	info, err := flow.Export(ctx, id, attID, conn)
	if err != nil {
		return fail(err)
	}
	m.Host.Redactor.Add(info.Secrets()...)
	red := info.Redacted()
	rec.ConnectionInfo = &red

	c, err := m.Connectors.For(info.DriverVolumeType)
	if err != nil {
		return fail(err)
	}
	if err := begin(StepConnect); err != nil {
		return fail(err)
	}
	var dev *connector.Device
	var connectErr error
	undo = append(undo, undoStep{"disconnect", func(ctx context.Context) error {
		// Connectors validate the whole connection info before touching
		// the host, so info they refused left nothing to undo here; a
		// disconnect would only refuse it again and keep the record (and
		// every later cleanup) failing.
		if errors.Is(connectErr, connector.ErrInvalid) {
			return nil
		}
		// The device never reached the user: force past a udev probe
		// holding it open.
		return c.Disconnect(ctx, info, dev, connector.DisconnectOptions{Force: true})
	}})
	dev, err = c.Connect(ctx, info)
	connectErr = err
	if err != nil {
		return fail(err)
	}
	rec.Device = dev

	if err := begin(StepComplete); err != nil {
		return fail(err)
	}
	// Cinder shows the mountpoint as the attachment's device; without one
	// the device path is the most useful thing to show.
	mp := opts.Mountpoint
	if mp == "" {
		mp = dev.Path
	}
	cop := cinderapi.CompleteOpts{HostName: props.Host, Mountpoint: mp, Mode: mode}
	undo = append(undo, undoStep{"uncomplete", func(ctx context.Context) error { return flow.Uncomplete(ctx, id, rec.AttachmentID, cop) }})
	rec.AttachmentID, err = flow.Complete(ctx, id, attID, cop)
	if err != nil {
		rec.AttachmentID = attID
		return fail(err)
	}

	if opts.Mountpoint != "" {
		if opts.Mkfs != "" {
			if err := begin(StepMkfs); err != nil {
				return fail(err)
			}
			formatted, err := m.mkfsIfBlank(ctx, dev.Path, opts.Mkfs)
			if err != nil {
				return fail(err)
			}
			if formatted {
				rec.Formatted = opts.Mkfs
			}
		}
		if err := begin(StepMount); err != nil {
			return fail(err)
		}
		undo = append(undo, undoStep{"unmount", func(ctx context.Context) error { return m.unmount(ctx, opts.Mountpoint, true) }})
		if err := m.mount(ctx, dev.Path, opts.Mountpoint, mode); err != nil {
			return fail(err)
		}
		rec.Mounted = true
	}

	if opts.IronicNode != "" {
		if err := begin(StepRegister); err != nil {
			return fail(err)
		}
		// Ironic keeps the target's connection properties for booting
		// from the volume; it masks the credentials when showing them.
		props := make(map[string]any, len(info.Data))
		for k, v := range info.Data {
			props[k] = v
		}
		uuid, err := m.Targets.CreateTarget(ctx, opts.IronicNode, id, info.DriverVolumeType, opts.BootIndex, props, targetTag(rec))
		if err != nil {
			return fail(err)
		}
		// Created but not yet recorded: cleanup finds it by its tag.
		m.at(StepRegistered)
		rec.IronicTargetUUID = uuid
		undo = append(undo, undoStep{"unregister", func(ctx context.Context) error {
			return m.Targets.DeleteTarget(ctx, opts.IronicNode, uuid)
		}})
	}

	rec.Phase = PhaseAttached
	if err := begin(StepDone); err != nil {
		return fail(err)
	}
	return rec, nil
}

// rollback runs undo newest first under its own deadline, continuing past
// failures; it returns the joined errors.
func (m *Manager) rollback(ctx context.Context, undo []undoStep) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.rollbackTimeout())
	defer cancel()
	var errs []error
	for i := len(undo) - 1; i >= 0; i-- {
		u := undo[i]
		start := time.Now()
		err := u.fn(ctx)
		m.Host.Log.Debug("rollback", "step", u.name, "duration", time.Since(start).Round(time.Millisecond), "ok", err == nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", u.name, err))
		}
	}
	return joinShort(errs)
}

// joinShort joins errors on one line.
func joinShort(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return &joined{msg: strings.Join(msgs, "; "), errs: errs}
}

type joined struct {
	msg  string
	errs []error
}

func (j *joined) Error() string   { return j.msg }
func (j *joined) Unwrap() []error { return j.errs }

func isInvalidState(err error) bool { return errors.Is(err, cinderapi.ErrInvalidState) }

func microversionOf(c Cinder) string {
	if cl, ok := c.(*cinderapi.Client); ok {
		return cl.Version.String()
	}
	return ""
}

// flowFor returns the flow a record was made with, or the negotiated one
// (with a warning) when this client cannot speak it.
func (m *Manager) flowFor(rec *Record) cinderapi.Flow {
	f, err := m.Cinder.FlowNamed(rec.Flow)
	if err == nil {
		return f
	}
	cur := m.Cinder.Flow()
	m.Host.Log.Warn("volume was attached with another Cinder flow; using the current one",
		"volume", rec.VolumeID, "attached_with", rec.Flow, "now", cur.Name(), "reason", err.Error())
	return cur
}
