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

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/rollback"
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
// A DeleteTarget error of kind apierr.ErrInvalidState means the target
// cannot be deleted now but may be later (Ironic deletes targets only
// while the node is powered off): local-detach then
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
func deletionDeferred(err error) bool { return apierr.IsKind(err, apierr.ErrInvalidState) }

// Steps, in the order local-attach runs them. A trace set with
// rollback.WithTrace on the context sees each name just before the step
// starts (and "done" at the end): tests crash brick there.
const (
	StepReserve  = "reserve"
	StepExport   = "export"
	StepConnect  = "connect"
	StepComplete = "complete"
	StepMkfs     = "mkfs"
	StepMount    = "mount"
	StepRegister = "register"
	// StepDecrypt (crypt.go) follows StepConnect.
	// StepRegistered is no step of its own: the trace sees it between Ironic
	// creating the target and brick recording its UUID.
	StepRegistered = "registered"
	StepDone       = "done"

	StepUnmount      = "unmount"
	StepBeginDetach  = "begin-detach"
	StepDisconnect   = "disconnect"
	StepCinderDetach = "cinder-detach"
	StepUnregister   = "unregister"
)

// Manager runs local attaches and detaches on one host.
type Manager struct {
	Host       *host.Host
	Cinder     Cinder
	Connectors Connectors
	// Targets registers Ironic volume targets; nil when not configured.
	Targets TargetRegistry
	// Crypt opens encrypted volumes; nil refuses them.
	Crypt *Crypt
	// StateDir is the host path of the records (DefaultStateDir when empty).
	StateDir string
	// RollbackTimeout bounds each rollback or cleanup (default
	// rollback.DefaultTimeout); it runs even when the caller's context ended.
	RollbackTimeout time.Duration
}

func (m *Manager) store() store {
	dir := m.StateDir
	if dir == "" {
		dir = DefaultStateDir
	}
	return store{fs: m.Host.FS, dir: dir}
}

func now() time.Time { return time.Now().UTC() }

// journal runs the steps of one operation on rec: each step is recorded
// before it starts, so a crash inside it is visible to cleanup.
func (m *Manager) journal(rec *Record) *rollback.Journal {
	st := m.store()
	return &rollback.Journal{
		Begin: func(step string) error {
			rec.Step = step
			rec.UpdatedAt = now()
			return st.save(rec)
		},
		Timeout: m.RollbackTimeout,
		Log:     m.Host.Log,
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
	// MkfsForce formats even a device that is not all zeros at both ends
	// when blkid finds no signature on it (it may hold plain dm-crypt or
	// raw data).
	MkfsForce bool
	// MountFSType mounts with this type, even one brick does not mount
	// unasked; empty: what blkid finds, among btrfs, ext2-4, vfat, xfs.
	MountFSType string
	// MountSuidDev mounts without nosuid,nodev: set-uid programs and
	// device nodes on the volume take effect for every local user.
	MountSuidDev bool
	// IronicNode and BootIndex register the volume as an Ironic volume
	// target of that node (needs Manager.Targets).
	IronicNode string
	BootIndex  int
	// NoDecrypt hands out an encrypted volume's ciphertext device.
	NoDecrypt bool
	// Persist marks the attachment to be restored at boot (Restore) and
	// taken down, keeping the Cinder attachment, at shutdown (Suspend).
	Persist bool
	// Attachment is a v3 attachment someone else reserved for this host
	// (brick csi's controller): attach exports, connects and completes it
	// but never deletes it, neither on failure nor at detach; its owner does.
	Attachment string
}

// ErrInUse is returned by a detach that would cut off a mounted or open
// device without Force.
var ErrInUse = errors.New("device in use")

// ErrNotAttached is returned by a detach of a volume that has no
// attachment to this host.
var ErrNotAttached = errors.New("not attached to this host")

// ErrHalfDone means a record shows an unfinished operation; cleanup repairs it.
var ErrHalfDone = errors.New("unfinished operation")

// opError formats failures as "local-attach VOLUME: STEP: cause"; Cinder
// errors already name their step and volume.
func opError(op, volume string, err error) error {
	step := ""
	var se *rollback.StepError
	if errors.As(err, &se) {
		step, err = se.Step, se.Err
	}
	var ce *apierr.Error
	if errors.As(err, &ce) && ce.Service == cinderapi.Service {
		return fmt.Errorf("%s %s: %w", op, volume, oneLine{err})
	}
	if step == "" {
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
	mode, err := m.checkAttach(&opts)
	if err != nil {
		return nil, fmt.Errorf("local-attach %s: %w", ref, err)
	}
	vol, err := m.Cinder.FindVolume(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("local-attach %s: %w", ref, err)
	}
	id, unlock, err := m.lock(ctx, vol)
	if err != nil {
		return nil, fmt.Errorf("local-attach %s: %w", ref, err)
	}
	defer unlock()
	r, err := m.newAttachRun(vol, id, mode, opts)
	if err != nil {
		return nil, fmt.Errorf("local-attach %s: %w", ref, err)
	}
	j := m.journal(r.rec)
	err = j.Run(ctx, r.steps()...)
	if err == nil {
		r.rec.Phase = PhaseAttached
		err = j.Run(ctx, rollback.Step{Name: StepDone})
	}
	if err != nil {
		return nil, r.fail(ctx, j, err)
	}
	return r.rec, nil
}

// checkAttach refuses bad options before anything is asked of Cinder; it
// returns the mode.
func (m *Manager) checkAttach(opts *AttachOptions) (string, error) {
	if err := CheckOptions(m.Host, opts); err != nil {
		return "", err
	}
	if opts.IronicNode != "" && m.Targets == nil {
		return "", errors.New("Ironic registration is not configured")
	}
	if opts.Attachment != "" && !ident.IsUUID(opts.Attachment) {
		return "", fmt.Errorf("attachment %s: not a Cinder attachment ID (a UUID)", connector.Quote(opts.Attachment))
	}
	if opts.Mode == "" {
		return "rw", nil
	}
	return opts.Mode, nil
}

// CheckOptions refuses bad attach options before anything is asked of
// Cinder or changed on the host, naming the flag and what it takes, and
// cleans the mountpoint's trailing slash (shell completion adds one). The
// CLI runs it before it builds a cloud client.
func CheckOptions(h *host.Host, opts *AttachOptions) error {
	if opts.Mode != "" && opts.Mode != "rw" && opts.Mode != "ro" {
		return fmt.Errorf("--mode %s: use rw or ro", connector.Quote(opts.Mode))
	}
	if len(opts.Mountpoint) > 1 {
		opts.Mountpoint = strings.TrimRight(opts.Mountpoint, "/")
		if opts.Mountpoint == "" {
			opts.Mountpoint = "/"
		}
	}
	if opts.Mountpoint != "" {
		if err := checkMountpoint(opts.Mountpoint); err != nil {
			return err
		}
	}
	if err := checkFormat(h, opts); err != nil {
		return err
	}
	switch {
	case opts.BootIndex != 0 && opts.IronicNode == "":
		return errors.New("--boot-index goes with --ironic-node")
	case opts.BootIndex < 0:
		return fmt.Errorf("--boot-index %d: must be 0 or more", opts.BootIndex)
	}
	return nil
}

// checkFormat checks --mount-fstype, --mkfs and --mkfs-force, and that
// mkfs.TYPE is installed, before a volume is reserved for it.
func checkFormat(h *host.Host, opts *AttachOptions) error {
	if opts.MountFSType != "" {
		if opts.Mountpoint == "" {
			return errors.New("--mount-fstype needs --mountpoint")
		}
		if err := checkFSType("--mount-fstype", opts.MountFSType); err != nil {
			return err
		}
	}
	if opts.Mkfs == "" {
		return nil
	}
	if opts.Mountpoint == "" {
		return errors.New("--mkfs needs --mountpoint")
	}
	if err := checkFSType("--mkfs", opts.Mkfs); err != nil {
		return err
	}
	if err := h.FindProgram("mkfs." + opts.Mkfs); err != nil {
		return fmt.Errorf("--mkfs %s: %w (install the package that has mkfs.%s, or pick another type)", opts.Mkfs, err, opts.Mkfs)
	}
	return nil
}

// lock takes the volume's cross-process lock; it returns the checked ID.
func (m *Manager) lock(ctx context.Context, vol *cinderapi.Volume) (string, func(), error) {
	id, err := validVolumeID(vol.ID)
	if err != nil {
		return "", nil, err
	}
	unlock, err := m.Host.Locks.Lock(ctx, "volume-"+id)
	if err != nil {
		return "", nil, err
	}
	return id, unlock, nil
}

// hostConnector gathers this host's connector and turns it into what
// Cinder takes; unreadable sources are warnings.
func (m *Manager) hostConnector(o connector.GatherOptions) (connector.Properties, cinderapi.HostConnector, error) {
	gather := connector.Gather
	if g, ok := m.Connectors.(interface {
		Gather(host.FS, connector.GatherOptions) (connector.Properties, []connector.Warning, error)
	}); ok {
		gather = g.Gather // the common facts and each protocol's own
	}
	props, warns, err := gather(m.Host.FS, o)
	for _, w := range warns {
		m.Host.Log.Warn("connector: left out", "file", w.File, "reason", w.Err.Error())
	}
	if err != nil {
		return props, nil, fmt.Errorf("connector: %w", err)
	}
	conn, err := cinderapi.HostConnectorFrom(props)
	if err != nil {
		return props, nil, fmt.Errorf("connector: %w", err)
	}
	return props, conn, nil
}

func isInvalidState(err error) bool { return errors.Is(err, apierr.ErrInvalidState) }

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
