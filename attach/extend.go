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
	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/rollback"
)

// Steps of extend, in order; a trace (rollback.WithTrace) sees each name
// before the step starts.
const (
	StepCinderExtend   = "cinder-extend"
	StepGrowDevice     = "grow-device"
	StepCryptResize    = "crypt-resize"
	StepGrowFilesystem = "grow-filesystem"
)

// growFSTimeout bounds resize2fs / xfs_growfs.
const growFSTimeout = 10 * time.Minute

// VolumeExtender grows a volume in Cinder and waits until Cinder reports
// the new size (*cinderapi.Client has it).
type VolumeExtender interface {
	ExtendVolume(ctx context.Context, id string, newSizeGiB int, timeout time.Duration) (*cinderapi.Volume, error)
}

// ExtendOptions are extend's inputs.
type ExtendOptions struct {
	// Volume is an ID or a name brick has a local record of.
	Volume string
	// SizeGiB is the size to ask Cinder for. Zero with LocalOnly.
	SizeGiB int
	// LocalOnly grows the host side only: the volume grew elsewhere.
	LocalOnly bool
	// CinderTimeout bounds the wait for Cinder's extend (default
	// cinderapi.DefaultExtendTimeout).
	CinderTimeout time.Duration
}

// ExtendResult is what extend did.
type ExtendResult struct {
	VolumeID string
	// Device is what the user opens; OldSize and NewSize are its sizes in
	// bytes before and after.
	Device           string
	OldSize, NewSize int64
	// Filesystem is the type of the filesystem grown ("" when brick did
	// not mount the volume).
	Filesystem string
	Mountpoint string
}

// ErrCannotExtend means the volume's protocol cannot grow online.
var ErrCannotExtend = errors.New("cannot grow online")

// Extend grows an attached volume: Cinder first (unless LocalOnly), then
// every path and the map on this host, then the filesystem when brick
// mounted it. It works from the local record and updates its size. A
// failure leaves the volume usable at its old size; the error names the
// step and says how to finish.
func (m *Manager) Extend(ctx context.Context, opts ExtendOptions) (*ExtendResult, error) {
	ref := opts.Volume
	if opts.LocalOnly == (opts.SizeGiB > 0) {
		return nil, fmt.Errorf("extend %s: give either a new size or local-only", ref)
	}
	rec, err := m.Record(ref)
	if err != nil {
		return nil, fmt.Errorf("extend %s: %w (brick grows only volumes it attached here)", ref, err)
	}
	unlock, err := m.Host.Locks.Lock(ctx, "volume-"+rec.VolumeID)
	if err != nil {
		return nil, fmt.Errorf("extend %s: %w", ref, err)
	}
	defer unlock()
	// Re-read under the lock: a detach may have run meanwhile.
	if rec, err = m.store().load(rec.VolumeID); err != nil {
		return nil, fmt.Errorf("extend %s: %w", ref, err)
	}
	if rec.Phase != PhaseAttached {
		return nil, fmt.Errorf("extend %s: %w: the record is %s (step %s); run brick cleanup %s", ref, ErrHalfDone, rec.Phase, rec.Step, rec.VolumeID)
	}
	x := extendRun{m: m, ref: ref, rec: rec}
	ext, err := x.extender()
	if err != nil {
		return nil, fmt.Errorf("extend %s: %w", ref, err)
	}
	var want int64
	if !opts.LocalOnly {
		if err := x.cinderExtend(ctx, opts); err != nil {
			return nil, fmt.Errorf("extend %s: %s: %w; nothing changed on this host", ref, StepCinderExtend, oneLine{err})
		}
		want = int64(opts.SizeGiB) << 30
	}
	return x.growHost(ctx, ext, want)
}

// extendRun is one extend under way: the volume as the user named it and
// its record, read under the volume's lock.
type extendRun struct {
	m   *Manager
	ref string
	rec *Record
}

// extender returns the record's connector when it can grow online.
func (x extendRun) extender() (connector.Extender, error) {
	m, rec := x.m, x.rec
	if rec.ConnectionInfo == nil || rec.Device == nil {
		return nil, errors.New("the local record has no connection info or device")
	}
	c, err := m.Connectors.For(rec.ConnectionInfo.DriverVolumeType)
	if err != nil {
		return nil, err
	}
	ext, ok := c.(connector.Extender)
	if !ok {
		return nil, fmt.Errorf("%s volumes: %w (detach and attach again to see the new size)", rec.ConnectionInfo.DriverVolumeType, ErrCannotExtend)
	}
	return ext, nil
}

func (x extendRun) cinderExtend(ctx context.Context, opts ExtendOptions) error {
	m, rec := x.m, x.rec
	rollback.Trace(ctx, StepCinderExtend)
	ce, ok := m.Cinder.(VolumeExtender)
	if !ok || m.Cinder == nil {
		return errors.New("no Cinder client that can extend")
	}
	_, err := ce.ExtendVolume(ctx, rec.VolumeID, opts.SizeGiB, opts.CinderTimeout)
	return err
}

// growHost grows the device, records its size, then grows the
// filesystem brick mounted.
func (x extendRun) growHost(ctx context.Context, ext connector.Extender, want int64) (*ExtendResult, error) {
	m, ref, rec := x.m, x.ref, x.rec
	rollback.Trace(ctx, StepGrowDevice)
	start := time.Now()
	rs, err := ext.Extend(ctx, *rec.ConnectionInfo, rec.Device, want)
	if err != nil {
		return nil, extendError(ref, StepGrowDevice, err)
	}
	m.Host.Log.Debug("extend: device grown", "device", rs.Device, "old", rs.OldSize, "new", rs.NewSize, "took", time.Since(start).Round(time.Millisecond))
	rec.SizeBytes, rec.UpdatedAt = rs.NewSize, now()
	if err := m.store().save(rec); err != nil {
		return nil, extendError(ref, StepGrowDevice, err)
	}
	res := &ExtendResult{VolumeID: rec.VolumeID, Device: rs.Device, OldSize: rs.OldSize, NewSize: rs.NewSize}
	if rec.Crypt != nil && rec.Crypt.Name != "" {
		rollback.Trace(ctx, StepCryptResize)
		if err := x.cryptResize(ctx); err != nil {
			return nil, extendError(ref, StepCryptResize, err)
		}
		res.Device = rec.DevicePath()
	}
	if !rec.Mounted || rec.Mountpoint == "" {
		return res, nil
	}
	rollback.Trace(ctx, StepGrowFilesystem)
	fsType, err := x.growFilesystem(ctx, rec.DevicePath(), rec.Mountpoint)
	if err != nil {
		return nil, extendError(ref, StepGrowFilesystem, err)
	}
	res.Filesystem, res.Mountpoint = fsType, rec.Mountpoint
	rollback.Trace(ctx, StepDone)
	return res, nil
}

// cryptResize grows an encrypted volume's dm-crypt mapping to its
// device's new size; LUKS2 may want the key, so it is fetched as for an
// attach (Cinder's encryption metadata, then the key manager).
func (x extendRun) cryptResize(ctx context.Context) error {
	m, rec := x.m, x.rec
	src, ok := m.Cinder.(encryptionSource)
	if !ok || m.Cinder == nil {
		return fmt.Errorf("%w %s: the key is needed and no Cinder is configured", ErrEncrypted, rec.VolumeID)
	}
	meta, err := src.Encryption(ctx, rec.VolumeID)
	if err != nil {
		return fmt.Errorf("%w %s: read its encryption metadata: %w", ErrEncrypted, rec.VolumeID, err)
	}
	key, err := m.cryptKey(ctx, meta.KeyID)
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrEncrypted, rec.VolumeID, err)
	}
	return m.dm().Resize(ctx, rec.Crypt.Name, key)
}

// extendError says which step failed, that the volume still works at its
// old size, and how to finish.
func extendError(ref, step string, err error) error {
	return fmt.Errorf("extend %s: %s: %w; the volume stays usable at its old size; run 'brick extend %s --local-only' to finish", ref, step, oneLine{err}, ref)
}

// growFilesystem grows the filesystem mounted at dir online to fill dev:
// resize2fs for ext2/3/4 (takes the device), xfs_growfs for xfs (takes
// the mount point). It returns the filesystem type.
func (x extendRun) growFilesystem(ctx context.Context, dev, dir string) (string, error) {
	m := x.m
	if !strings.HasPrefix(dev, "/dev/") {
		return "", fmt.Errorf("grow filesystem: %s is not a device path", connector.Quote(dev))
	}
	mounts, err := m.Host.Sys.Mounts()
	if err != nil {
		return "", fmt.Errorf("read mounts: %w", err)
	}
	fsType := ""
	for _, mt := range mounts {
		if mt.MountPoint == dir {
			fsType = mt.FSType
		}
	}
	var cmd host.Command
	switch fsType {
	case "":
		return "", fmt.Errorf("%s is not mounted", dir)
	case "ext2", "ext3", "ext4":
		cmd = host.Command{Name: "resize2fs", Args: []string{dev}, Timeout: growFSTimeout}
	case "xfs":
		cmd = host.Command{Name: "xfs_growfs", Args: []string{dir}, Timeout: growFSTimeout}
	default:
		return fsType, fmt.Errorf("%s on %s: brick grows ext2/3/4 and xfs online, not %s", dev, dir, connector.Quote(fsType))
	}
	if _, err := m.Host.Runner.Run(ctx, cmd); err != nil {
		return fsType, fmt.Errorf("grow %s on %s: %w", fsType, dir, err)
	}
	return fsType, nil
}

// DeviceSize is the size in bytes of the record's block device as the
// kernel reports it now, else the size the record holds (0: unknown).
func (m *Manager) DeviceSize(r *Record) int64 {
	if r.Device == nil || r.Device.Type != connector.TypeBlock || !strings.HasPrefix(r.Device.Path, "/dev/") {
		return r.SizeBytes
	}
	target, err := m.Host.FS.EvalSymlinks(r.Device.Path)
	if err != nil {
		return r.SizeBytes
	}
	name := strings.TrimPrefix(target, "/dev/")
	if !ident.DiskName(name) && !ident.DMName(name) {
		return r.SizeBytes
	}
	if n, err := m.Host.Block.Size(name); err == nil && n > 0 {
		return n
	}
	return r.SizeBytes
}
