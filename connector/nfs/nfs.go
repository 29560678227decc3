// Package nfs attaches Cinder volumes served by NFS backends: the volume is
// a file on a share. Connect mounts the share (once per share, however many
// of its volumes are attached), checks the file and returns its path, or a
// loop device over it with Options.AsBlock. Disconnect detaches the loop
// device, and unmounts the share when its last brick-attached volume goes,
// refusing while files on it are open unless forced. os-brick never
// unmounts; brick does, and keeps a per-share user list to know when.
//
//	c := nfs.New(h, nfs.Options{AsBlock: true})
//	dev, err := c.Connect(ctx, info) // dev.Path: /dev/loop0, dev.Extra["file"]: the volume file
package nfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
)

// Protocol is the driver_volume_type this package handles.
const Protocol = "nfs"

// Defaults for Options.
const (
	DefaultMountBase      = "/var/lib/brick/mnt"
	DefaultStateDir       = "/run/brick/nfs"
	DefaultMountTimeout   = 2 * time.Minute
	DefaultCommandTimeout = 30 * time.Second
	DefaultLockTimeout    = 5 * time.Minute
)

// Device.Extra keys.
const (
	ExtraExport     = "export"
	ExtraMountPoint = "mount_point"
	ExtraFile       = "file"
	ExtraVersion    = "nfs_version"
	ExtraLoop       = "loop_device"
	ExtraReused     = "mount_reused"
	ExtraFormat     = "format"
)

// Options configure the connector; zero values take the defaults.
type Options struct {
	// MountBase holds one mount point per share, named by Export.ID.
	MountBase string
	// StateDir holds one user list per mounted share.
	StateDir string
	// MountOptions are the host's extra mount options (brick config
	// --nfs-mount-options), applied after the connection's so they win.
	MountOptions string
	// AsBlock makes Connect return a loop device over the volume file.
	AsBlock bool
	// MountTimeout bounds each mount attempt; CommandTimeout every other
	// command; LockTimeout the wait for another brick process on the share.
	MountTimeout   time.Duration
	CommandTimeout time.Duration
	LockTimeout    time.Duration
}

func (o Options) withDefaults() Options {
	if o.MountBase == "" {
		o.MountBase = DefaultMountBase
	}
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir
	}
	if o.MountTimeout <= 0 {
		o.MountTimeout = DefaultMountTimeout
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = DefaultCommandTimeout
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	o.MountBase = filepath.Clean(o.MountBase)
	o.StateDir = filepath.Clean(o.StateDir)
	return o
}

// What the connector offers, checked at compile time.
var (
	_ connector.Connector = (*Connector)(nil)
	_ connector.Extender  = (*Connector)(nil)
	_ connector.Planner   = (*Connector)(nil)
)

// Connector implements connector.Connector for NFS.
type Connector struct {
	h     *host.Host
	opts  Options
	loop  loops
	state states
}

// New returns an NFS connector working on h.
func New(h *host.Host, opts Options) *Connector {
	o := opts.withDefaults()
	return &Connector{h: h, opts: o, loop: loops{h: h, timeout: o.CommandTimeout}, state: states{fs: h.FS, dir: o.StateDir}}
}

// ErrBusy is returned (wrapped, with host.ErrDeviceBusy) when a disconnect
// finds the volume file, its loop device or the share still in use.
var ErrBusy = host.ErrDeviceBusy

// Volume is validated NFS connection info.
type Volume struct {
	Export   Export
	Name     string   // the volume file, relative to the export
	Options  []string // from the connection info's "options"
	Format   string   // "raw", "qcow2", ... ("" when not given)
	ReadOnly bool
}

// ParseVolume validates the NFS keys of connection info: export, name,
// options, and the optional format and access_mode.
func ParseVolume(info connector.ConnectionInfo) (Volume, error) {
	var v Volume
	exp, err := info.RequiredString("export")
	if err != nil {
		return v, err
	}
	if v.Export, err = ParseExport(exp); err != nil {
		return v, err
	}
	name, err := info.RequiredString("name")
	if err != nil {
		return v, err
	}
	if v.Name, err = ParseName(name); err != nil {
		return v, err
	}
	if s, ok, err := info.String("options"); err != nil {
		return v, err
	} else if ok {
		if v.Options, err = ParseMountOptions("options", s); err != nil {
			return v, err
		}
		// Cinder is not trusted to lift brick's hardening: a share mounted
		// suid, dev or exec would let the storage side plant set-uid
		// programs or device nodes on a root-run host. Only the host's own
		// --nfs-mount-options may relax it.
		for _, o := range v.Options {
			if relaxesHardening(o) {
				return v, connector.Invalid("options", "mount option %s is not accepted from connection info (set it in brick's --nfs-mount-options if this host needs it)", connector.Quote(o))
			}
		}
	}
	if s, ok, err := info.String("format"); err != nil {
		return v, err
	} else if ok && s != "" {
		if !validFormat(s) {
			return v, connector.Invalid("format", "%s is not a disk format name", connector.Quote(s))
		}
		v.Format = s
	}
	if v.ReadOnly, err = info.ReadOnly(); err != nil {
		return v, err
	}
	return v, nil
}

func validFormat(s string) bool {
	if len(s) > 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= 'a' && s[i] <= 'z' || s[i] >= '0' && s[i] <= '9') {
			return false
		}
	}
	return true
}

// share is what a connect or disconnect works on.
type share struct {
	vol        Volume
	id         string
	mountPoint string // host path
	file       string // host path
}

func (c *Connector) share(info connector.ConnectionInfo) (share, error) {
	vol, err := ParseVolume(info)
	if err != nil {
		return share{}, err
	}
	id := vol.Export.ID()
	mp := filepath.Join(c.opts.MountBase, id)
	return share{vol: vol, id: id, mountPoint: mp, file: filepath.Join(mp, vol.Name)}, nil
}

func (c *Connector) lock(ctx context.Context, s share) (func(), error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.LockTimeout)
	defer cancel()
	unlock, err := c.h.Locks.Lock(ctx, "nfs-"+s.id)
	if err != nil {
		return nil, fmt.Errorf("nfs share %s: %w", s.vol.Export, err)
	}
	return unlock, nil
}

// Connect mounts the share (or reuses brick's mount of it), checks the
// volume file and returns it, or a loop device over it with AsBlock.
func (c *Connector) Connect(ctx context.Context, info connector.ConnectionInfo) (*connector.Device, error) {
	d, err := c.decideConnect(info)
	if err != nil {
		return nil, err
	}
	s := d.share
	unlock, err := c.lock(ctx, s)
	if err != nil {
		return nil, err
	}
	defer unlock()

	st, err := c.state.read(s.id)
	if err != nil {
		return nil, err
	}
	if prev, ok := st.Users[s.vol.Name]; ok {
		if dev, ok := c.stillAttached(s, st, prev); ok {
			c.h.Log.Info("nfs: volume already attached", "file", s.file, "device", dev.Path)
			return dev, nil
		}
	}
	version, reused, err := c.ensureMounted(ctx, s, st, d)
	if err != nil {
		return nil, err
	}
	loop, err := c.openVolume(ctx, s)
	if err == nil {
		err = c.addUser(ctx, s, st, version, loop)
	}
	if err != nil {
		c.undoMount(ctx, s, st, reused)
		return nil, err
	}
	return c.device(s, version, loop, reused), nil
}

// hostMountOptions parses the host's --nfs-mount-options; a mistake there
// is the host's configuration, not the connection info, at fault.
func (c *Connector) hostMountOptions() ([]string, error) {
	config, err := ParseMountOptions("nfs-mount-options", c.opts.MountOptions)
	var ie *connector.InvalidError
	if errors.As(err, &ie) {
		return nil, fmt.Errorf("nfs: invalid --nfs-mount-options (config nfs-mount-options): %s", ie.Reason)
	}
	return config, err
}

// ensureMounted reuses brick's mount of the share or mounts it, and
// returns the NFS version and whether the mount was reused.
func (c *Connector) ensureMounted(ctx context.Context, s share, st *shareState, d connectDecision) (string, bool, error) {
	exp := s.vol.Export.String()
	m, mounted, err := c.mountAt(s.mountPoint, exp)
	if err != nil {
		return "", false, err
	}
	if mounted {
		version := versionOf(m.Options)
		c.h.Log.Info("nfs: reusing mount", "export", exp, "mount_point", s.mountPoint, "version", version)
		return version, true, nil
	}
	if len(st.Users) > 0 {
		// A reboot or a manual umount took the share away from volumes
		// brick still lists: they are gone too.
		c.h.Log.Warn("nfs: share was not mounted; forgetting its stale users", "export", exp, "users", strings.Join(st.userNames(), ","))
		st.Users = map[string]user{}
	}
	version, err := c.mount(ctx, s, d)
	return version, false, err
}

// connectDecision is what Connect does with a volume, decided once: the
// same value drives Connect and PlanConnect's dry run.
type connectDecision struct {
	share share
	// mountOpts are the mount options (the connection info's over the
	// host's nfs_mount_options); versions the vers= values tried in turn
	// ("" alone when the options fix the version).
	mountOpts []string
	versions  []string
}

// decideConnect validates the volume and picks the mount options and the
// NFS versions to try. A non-raw volume cannot be a block device.
func (c *Connector) decideConnect(info connector.ConnectionInfo) (connectDecision, error) {
	s, err := c.share(info)
	if err != nil {
		return connectDecision{}, err
	}
	config, err := c.hostMountOptions()
	if err != nil {
		return connectDecision{}, err
	}
	if c.opts.AsBlock && s.vol.Format != "" && s.vol.Format != "raw" {
		return connectDecision{}, connector.Invalid("format", "a %s volume cannot be attached as a block device; attach the file", connector.Quote(s.vol.Format))
	}
	d := connectDecision{share: s, mountOpts: mountOptions(s.vol.Options, config), versions: []string{""}}
	if !hasVersion(d.mountOpts) {
		d.versions = fallbackVersions()
	}
	return d, nil
}

// openVolume checks the volume file and, with AsBlock, sets up the loop
// device over it (returned; "" without AsBlock).
func (c *Connector) openVolume(ctx context.Context, s share) (string, error) {
	if err := c.checkFile(s); err != nil {
		return "", err
	}
	if !c.opts.AsBlock {
		return "", nil
	}
	return c.loop.attach(ctx, s.file, s.vol.ReadOnly)
}

// addUser records the volume as a user of the share; if the record cannot
// be saved, the loop device is detached again.
func (c *Connector) addUser(ctx context.Context, s share, st *shareState, version, loop string) error {
	st.Export, st.MountPoint, st.Version = s.vol.Export.String(), s.mountPoint, version
	st.Users[s.vol.Name] = user{Loop: loop}
	err := c.state.write(s.id, st)
	if err == nil {
		return nil
	}
	if loop != "" {
		if derr := c.loop.detach(ctx, loop, s.file); derr != nil {
			c.h.Log.Warn("nfs: undo loop device", "device", loop, "err", derr)
		}
	}
	delete(st.Users, s.vol.Name)
	return err
}

// undoMount unmounts a share this connect mounted, after a later step
// failed, unless other volumes use it.
func (c *Connector) undoMount(ctx context.Context, s share, st *shareState, reused bool) {
	if reused || len(st.Users) > 0 {
		return
	}
	if err := c.unmount(ctx, s.mountPoint, false); err != nil {
		c.h.Log.Warn("nfs: undo mount", "mount_point", s.mountPoint, "err", err)
		return
	}
	c.removeMountPoint(s.mountPoint)
}

func (c *Connector) device(s share, version, loop string, reused bool) *connector.Device {
	dev := &connector.Device{
		Path:     s.file,
		Type:     connector.TypeFile,
		Protocol: Protocol,
		Extra: map[string]string{
			ExtraExport:     s.vol.Export.String(),
			ExtraMountPoint: s.mountPoint,
			ExtraFile:       s.file,
			ExtraReused:     fmt.Sprint(reused),
		},
	}
	if version != "" {
		dev.Extra[ExtraVersion] = version
	}
	if s.vol.Format != "" {
		dev.Extra[ExtraFormat] = s.vol.Format
	}
	if loop != "" {
		dev.Path, dev.Type = loop, connector.TypeBlock
		dev.Extra[ExtraLoop] = loop
	}
	return dev
}

// stillAttached answers a repeated connect of an attached volume with the
// device it already has, when the share is still mounted and the loop
// device (if one is wanted) still backs the file.
func (c *Connector) stillAttached(s share, st *shareState, u user) (*connector.Device, bool) {
	if _, mounted, err := c.mountAt(s.mountPoint, s.vol.Export.String()); err != nil || !mounted {
		return nil, false
	}
	if c.opts.AsBlock != (u.Loop != "") {
		return nil, false
	}
	if u.Loop != "" && !c.loop.backs(u.Loop, s.file) {
		return nil, false
	}
	return c.device(s, st.Version, u.Loop, true), true
}

// mountAt reports the mount on mp (the top one if several are stacked).
// A mount there of anything but this export is an error: brick's mount
// points are named by the export's hash, so it is tampering or a clash.
func (c *Connector) mountAt(mp, export string) (host.Mount, bool, error) {
	mounts, err := c.h.Sys.Mounts()
	if err != nil {
		return host.Mount{}, false, fmt.Errorf("nfs %s: %w", export, err)
	}
	real := c.h.FS.Path(mp)
	var found *host.Mount
	for i := range mounts {
		if mounts[i].MountPoint == mp || mounts[i].MountPoint == real {
			found = &mounts[i]
		}
	}
	if found == nil {
		return host.Mount{}, false, nil
	}
	if (found.FSType != "nfs" && found.FSType != "nfs4") || found.Source != export {
		return host.Mount{}, false, fmt.Errorf("nfs %s: %s already holds %s %s", export, mp, found.FSType, connector.Quote(found.Source))
	}
	return *found, true, nil
}

// mount mounts the share, trying NFS 4.2, 4.1 and 3 in turn when the
// options fix no version, and returns the version the kernel reports.
func (c *Connector) mount(ctx context.Context, s share, d connectDecision) (string, error) {
	exp := s.vol.Export.String()
	if err := c.h.FS.PrivateDir(c.opts.MountBase, true); err != nil {
		return "", fmt.Errorf("nfs mount %s: mount base: %w", exp, err)
	}
	if err := c.h.FS.MkdirAll(s.mountPoint, 0o755); err != nil {
		return "", fmt.Errorf("nfs mount %s: create mount point: %w", exp, err)
	}
	var errs []error
	for _, v := range d.versions {
		optString := joinOptions(d.mountOpts, v)
		_, err := c.h.Runner.Run(ctx, host.Command{
			Name:    "mount",
			Args:    []string{"-t", "nfs", "-o", optString, exp, c.h.FS.Path(s.mountPoint)},
			Timeout: c.opts.MountTimeout,
		})
		if err == nil {
			got := v
			if m, ok, merr := c.mountAt(s.mountPoint, exp); merr == nil && ok {
				if kv := versionOf(m.Options); kv != "" {
					got = kv
				}
			} else if merr == nil {
				err = fmt.Errorf("mount reported success but %s is not mounted", s.mountPoint)
			}
			if err == nil {
				c.h.Log.Info("nfs: mounted", "export", exp, "mount_point", s.mountPoint, "version", got, "options", optString, "attempts", len(errs)+1)
				return got, nil
			}
		}
		label := "vers=" + v
		if v == "" {
			label = "with the given version"
		}
		errs = append(errs, fmt.Errorf("%s: %w", label, err))
		if ctx.Err() != nil || timedOut(err) {
			// The server does not answer: another version will not either,
			// and each attempt costs a whole timeout.
			break
		}
		if v != "" {
			c.h.Log.Info("nfs: mount failed, trying an older version", "export", exp, "version", v, "err", err)
		}
	}
	c.removeMountPoint(s.mountPoint)
	return "", fmt.Errorf("nfs mount %s: %w", exp, errors.Join(errs...))
}

func timedOut(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ee *host.ExitError
	return errors.As(err, &ee) && strings.Contains(strings.ToLower(ee.Stderr), "timed out")
}

// checkFile makes sure the volume file is a regular file inside the share:
// a symlink (or a symlinked directory on the way) planted on the server
// could otherwise point brick, and a loop device, at a host file.
func (c *Connector) checkFile(s share) error {
	resolved, err := c.h.FS.EvalSymlinks(s.file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("nfs %s: volume file %s not found on the share: %w", s.vol.Export, s.vol.Name, err)
		}
		return fmt.Errorf("nfs %s: volume file %s: %w", s.vol.Export, s.vol.Name, err)
	}
	base, err := c.h.FS.EvalSymlinks(s.mountPoint)
	if err != nil {
		return fmt.Errorf("nfs %s: mount point: %w", s.vol.Export, err)
	}
	if resolved != filepath.Join(base, s.vol.Name) {
		return fmt.Errorf("nfs %s: volume file %s: %w", s.vol.Export, s.vol.Name,
			connector.Invalid("name", "%s leads through a symlink", connector.Quote(s.vol.Name)))
	}
	fi, err := c.h.FS.Lstat(s.file)
	if err != nil {
		return fmt.Errorf("nfs %s: volume file %s: %w", s.vol.Export, s.vol.Name, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("nfs %s: volume file %s is not a regular file (%s)", s.vol.Export, s.vol.Name, fi.Mode().Type())
	}
	return nil
}

// unmount unmounts brick's mount of a share. Already unmounted is success.
// With force, a busy share is detached lazily: the kernel finishes the
// unmount when the last user lets go.
func (c *Connector) unmount(ctx context.Context, mp string, force bool) error {
	real := c.h.FS.Path(mp)
	_, err := c.h.Runner.Run(ctx, host.Command{Name: "umount", Args: []string{real}, Timeout: c.opts.MountTimeout})
	if err == nil {
		return nil
	}
	var ee *host.ExitError
	if errors.As(err, &ee) {
		stderr := strings.ToLower(ee.Stderr)
		switch {
		case strings.Contains(stderr, "not mounted") || strings.Contains(stderr, "no mount point"):
			return nil
		case strings.Contains(stderr, "busy") && force:
			c.h.Log.Warn("nfs: share busy, detaching it lazily (--force)", "mount_point", mp)
			if _, lerr := c.h.Runner.Run(ctx, host.Command{Name: "umount", Args: []string{"-l", real}, Timeout: c.opts.MountTimeout}); lerr != nil {
				return fmt.Errorf("nfs unmount %s: %w", mp, lerr)
			}
			return nil
		case strings.Contains(stderr, "busy"):
			return fmt.Errorf("nfs unmount %s: %w: %w", mp, ErrBusy, err)
		}
	}
	return fmt.Errorf("nfs unmount %s: %w", mp, err)
}

// removeMountPoint removes brick's mount point directory if it is empty
// and nothing is mounted on it; rmdir refuses anything else.
func (c *Connector) removeMountPoint(mp string) {
	if err := c.h.FS.Remove(mp); err != nil {
		c.h.Log.Warn("nfs: mount point left in place", "mount_point", mp, "err", err)
	}
}

// Disconnect detaches the volume: its loop device if brick made one, then
// the share when no other brick-attached volume uses it. It refuses while
// the file, the loop device or (when unmounting) anything on the share is
// open, unless opts.Force. A volume that is not attached succeeds.
func (c *Connector) Disconnect(ctx context.Context, info connector.ConnectionInfo, dev *connector.Device, opts connector.DisconnectOptions) error {
	s, err := c.share(info)
	if err != nil {
		return err
	}
	s = s.followRecord(dev)
	unlock, err := c.lock(ctx, s)
	if err != nil {
		return err
	}
	defer unlock()

	st, err := c.state.read(s.id)
	if err != nil {
		return err
	}
	loop := c.attachedLoop(s, st, dev)
	_, mounted, err := c.mountAt(s.mountPoint, s.vol.Export.String())
	if err != nil {
		return err
	}
	last := st.onlyUser(s.vol.Name)
	if !opts.Force && mounted {
		if err := c.checkUnused(s, loop, last); err != nil {
			return err
		}
	}
	if loop != "" {
		if err := c.loop.detach(ctx, loop, s.file); err != nil {
			return err
		}
	}
	if _, ok := st.Users[s.vol.Name]; ok {
		delete(st.Users, s.vol.Name)
		if err := c.state.write(s.id, st); err != nil {
			return err
		}
	}
	if !last {
		c.h.Log.Info("nfs: share stays mounted for other volumes", "export", s.vol.Export.String(), "users", strings.Join(st.userNames(), ","))
		return nil
	}
	return c.releaseShare(ctx, s, st, mounted, opts.Force)
}

// followRecord moves s to the mount point the attachment record names when
// it was made under another --nfs-mount-base, but only to a mount point
// named for this export.
func (s share) followRecord(dev *connector.Device) share {
	if dev == nil || dev.Extra[ExtraMountPoint] == "" || dev.Extra[ExtraMountPoint] == s.mountPoint {
		return s
	}
	mp := filepath.Clean(dev.Extra[ExtraMountPoint])
	if filepath.IsAbs(mp) && filepath.Base(mp) == s.id {
		s.mountPoint, s.file = mp, filepath.Join(mp, s.vol.Name)
	}
	return s
}

// attachedLoop is the loop device brick made over the volume file (from
// the share's record, else the attachment record), or "" when there is
// none or it now backs something else.
func (c *Connector) attachedLoop(s share, st *shareState, dev *connector.Device) string {
	loop := st.Users[s.vol.Name].Loop
	if loop == "" && dev != nil && loopDevRE().MatchString(dev.Extra[ExtraLoop]) {
		loop = dev.Extra[ExtraLoop]
	}
	if loop != "" && !c.loop.backs(loop, s.file) {
		return "" // detached already, or reused for another file
	}
	return loop
}

// onlyUser reports whether no volume but name uses the share.
func (st *shareState) onlyUser(name string) bool {
	for n := range st.Users {
		if n != name {
			return false
		}
	}
	return true
}

// checkUnused refuses (ErrBusy) while the volume file or its loop device
// is open, or, when the share is to be unmounted, anything on it.
func (c *Connector) checkUnused(s share, loop string, last bool) error {
	paths := []string{s.file}
	var skip []string
	if loop != "" {
		if err := c.h.Block.CheckNotInUse(loop); err != nil {
			return fmt.Errorf("nfs disconnect %s: loop device %w (mounted or held)", s.file, err)
		}
		paths, skip = append(paths, loop), []string{loop}
	}
	dir, what := "", s.file
	if last {
		dir, what = s.mountPoint, "share "+s.mountPoint
	}
	u, err := c.users(paths, dir, skip)
	if err != nil {
		return fmt.Errorf("nfs disconnect %s: find open files: %w", s.file, err)
	}
	if len(u) > 0 {
		return fmt.Errorf("nfs disconnect: %s is in use by %s: %w (use --force to detach anyway)", what, strings.Join(u, ", "), ErrBusy)
	}
	return nil
}

// releaseShare unmounts the share its last volume left and removes the
// mount point and the share's record.
func (c *Connector) releaseShare(ctx context.Context, s share, st *shareState, mounted, force bool) error {
	if mounted {
		if err := c.unmount(ctx, s.mountPoint, force); err != nil {
			return err
		}
		c.h.Log.Info("nfs: unmounted", "export", s.vol.Export.String(), "mount_point", s.mountPoint)
	}
	c.removeMountPoint(s.mountPoint)
	return c.state.write(s.id, st) // no users: removes the record
}

// DevicePaths returns the volume file if its share is mounted by brick and
// the file is there, and the loop device brick made over it.
func (c *Connector) DevicePaths(ctx context.Context, info connector.ConnectionInfo) ([]string, error) {
	s, err := c.share(info)
	if err != nil {
		return nil, err
	}
	_, mounted, err := c.mountAt(s.mountPoint, s.vol.Export.String())
	if err != nil || !mounted {
		return nil, err
	}
	if fi, err := c.h.FS.Lstat(s.file); err != nil || !fi.Mode().IsRegular() {
		return nil, nil
	}
	out := []string{s.file}
	st, err := c.state.read(s.id)
	if err != nil {
		return nil, err
	}
	if l := st.Users[s.vol.Name].Loop; l != "" && c.loop.backs(l, s.file) {
		out = append(out, l)
	}
	return out, nil
}
