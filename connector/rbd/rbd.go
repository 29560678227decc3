// Package rbd attaches Cinder's Ceph RBD volumes ("rbd" connection info)
// to the local host as block devices, with the kernel's rbd module (krbd,
// /dev/rbdN) or the rbd-nbd daemon (/dev/nbdN), as os-brick's
// do_local_attach does for Docker/Magnum hosts and workstations.
//
// A key that comes in the connection info travels to rbd only in a 0600
// config+keyring under a 0700 root-owned directory (DefaultTempDir),
// removed as soon as the map command returns; without one the host's
// /etc/ceph/<cluster>.conf and keyring for the user are used. Mappings are
// found by pool, namespace AND image, so two pools holding images of the
// same name never get confused, and in the kernel's own records (sysfs,
// and rbd-nbd's command line in /proc) rather than with `rbd device
// list`: a connect or disconnect starts only the map or unmap.
//
//	c := rbd.New(h, rbd.Options{Driver: rbd.DriverNBD})
//	dev, err := c.Connect(ctx, info) // dev.Path == "/dev/nbd0"
package rbd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
)

// Options configure the connector; every zero field takes its default.
type Options struct {
	// Driver is DriverKRBD (default) or DriverNBD.
	Driver string
	// RBD is the rbd program (default "rbd" from PATH).
	RBD string
	// TempDir is the host directory for temporary credentials (default
	// DefaultTempDir).
	TempDir string
	// MapTimeout bounds `rbd device map` (default 2m: the monitors must
	// answer and, for nbd, rbd-nbd must open the image).
	MapTimeout time.Duration
	// UnmapTimeout bounds `rbd device unmap` (default 1m).
	UnmapTimeout time.Duration
	// ListTimeout bounds `rbd device list` (default 30s), run only when an
	// nbd device's client cannot be read from /proc.
	ListTimeout time.Duration
	// FlushTimeout bounds the buffer flush before unmap (default 1m).
	FlushTimeout time.Duration
	// DeviceTimeout bounds the wait for the device node after a map
	// (default 30s).
	DeviceTimeout time.Duration
	// Now is the clock (default time.Now); tests fix it.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Driver == "" {
		o.Driver = DriverKRBD
	}
	if o.RBD == "" {
		o.RBD = "rbd"
	}
	if o.TempDir == "" {
		o.TempDir = DefaultTempDir
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.MapTimeout, 2*time.Minute)
	def(&o.UnmapTimeout, time.Minute)
	def(&o.ListTimeout, 30*time.Second)
	def(&o.FlushTimeout, time.Minute)
	def(&o.DeviceTimeout, 30*time.Second)
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// What the connector offers, checked at compile time.
var (
	_ connector.Connector = (*Connector)(nil)
	_ connector.Extender  = (*Connector)(nil)
	_ connector.Planner   = (*Connector)(nil)
)

// Connector maps and unmaps RBD images on one host.
type Connector struct {
	h    *host.Host
	opts Options
}

// New returns a connector using h. An unknown Driver is reported by the
// first Connect or Disconnect, so that building a registry never fails.
// It sweeps the temporary credentials a killed brick left behind, so every
// command that can map or clean up (brick cleanup included) removes them.
func New(h *host.Host, opts Options) *Connector {
	c := &Connector{h: h, opts: opts.withDefaults()}
	for _, dir := range SweepCredentials(h.FS, c.opts.TempDir, c.opts.Now()) {
		if h.Log != nil {
			h.Log.Info("removed temporary ceph credentials left by a killed brick", "dir", dir)
		}
	}
	return c
}

// Extra keys of the Device this connector returns.
const (
	ExtraPool      = "pool"
	ExtraNamespace = "namespace"
	ExtraImage     = "image"
	ExtraDriver    = "driver"
	ExtraCluster   = "cluster"
	ExtraUdevPath  = "udev_path"
	ExtraReused    = "reused"
)

// Protocol is the driver_volume_type this connector handles.
const Protocol = "rbd"

// ErrMapFailed marks an rbd map that did not produce a device.
var ErrMapFailed = errors.New("rbd map failed")

func (c *Connector) driver() (string, error) {
	if !ValidDriver(c.opts.Driver) {
		return "", fmt.Errorf("rbd: unknown driver %q (want %s or %s)", c.opts.Driver, DriverKRBD, DriverNBD)
	}
	return c.opts.Driver, nil
}

// prepare validates info and registers its secrets before anything runs.
func (c *Connector) prepare(info connector.ConnectionInfo) (Volume, error) {
	c.h.Redactor.Add(info.Secrets()...)
	v, err := ParseVolume(info)
	if err != nil {
		return v, fmt.Errorf("rbd: %w", err)
	}
	c.h.Redactor.Add(v.Secrets()...)
	for _, why := range v.Ignored {
		c.h.Log.Debug("rbd: key ignored (brick does not use it)", "reason", why)
	}
	return v, nil
}

// lockName serialises brick processes working on the same image.
func lockName(v Volume) string {
	sum := sha256.Sum256([]byte(v.Cluster + "\x00" + v.Spec()))
	return "rbd-" + hex.EncodeToString(sum[:8])
}

// Connect maps the image, or reuses an existing mapping of the same pool,
// namespace and image, and returns its device.
func (c *Connector) Connect(ctx context.Context, info connector.ConnectionInfo) (*connector.Device, error) {
	d, err := c.decideConnect(info)
	if err != nil {
		return nil, err
	}
	v, driver := d.vol, d.driver
	unlock, err := c.h.Locks.Lock(ctx, lockName(v))
	if err != nil {
		return nil, fmt.Errorf("rbd map %s: %w", v.Spec(), err)
	}
	defer unlock()

	m, ok, err := c.existing(ctx, d)
	if err != nil {
		return nil, err
	}
	if ok {
		c.h.Log.Debug("rbd: image already mapped, reusing it", "image", v.Spec(), "device", m.Device, "driver", driver)
		if err := c.checkReadOnly(m.Device, v); err != nil {
			return nil, err
		}
		dev, err := c.device(ctx, v, driver, m.Device)
		if err != nil {
			return nil, err
		}
		dev.Extra[ExtraReused] = "true"
		return dev, nil
	}

	path, err := c.mapImage(ctx, v, driver)
	if err != nil {
		return nil, err
	}
	return c.device(ctx, v, driver, path)
}

// connectDecision is what Connect does with a volume, decided once: the
// same value drives Connect and PlanConnect's dry run.
type connectDecision struct {
	vol    Volume
	driver string // krbd or nbd
}

// decideConnect validates the volume and picks the mapping driver.
func (c *Connector) decideConnect(info connector.ConnectionInfo) (connectDecision, error) {
	v, err := c.prepare(info)
	if err != nil {
		return connectDecision{}, err
	}
	driver, err := c.driver()
	if err != nil {
		return connectDecision{}, err
	}
	return connectDecision{vol: v, driver: driver}, nil
}

// existing finds a mapping of the image through the decided driver: a
// connect reuses it instead of mapping again.
func (c *Connector) existing(ctx context.Context, d connectDecision) (Mapping, bool, error) {
	mappings, err := c.mappings(ctx, d.driver)
	if err != nil {
		return Mapping{}, false, fmt.Errorf("rbd map %s: %w", d.vol.Spec(), err)
	}
	m, ok := find(mappings, d.vol)
	return m, ok, nil
}

// mapImage runs rbd device map with the credentials in place and returns
// the device the listing confirms for this image.
func (c *Connector) mapImage(ctx context.Context, v Volume, driver string) (string, error) {
	var confPath string
	var cr *creds
	if !v.Key.IsZero() {
		var err error
		if cr, err = writeCreds(c.h.FS, c.opts.TempDir, v, c.opts.Now()); err != nil {
			return "", fmt.Errorf("rbd map %s: %w", v.Spec(), err)
		}
		// A safety net for panics; the normal path removes them sooner.
		defer func() { _ = cr.remove() }()
		confPath = cr.ConfPath
	}
	start := time.Now()
	res, err := c.h.Runner.Run(ctx, host.Command{
		Name: c.opts.RBD, Args: mapArgs(v, driver, confPath, c.noUdev()), Timeout: c.opts.MapTimeout, Secrets: v.Secrets(),
	})
	// rbd (and rbd-nbd, which connects before it daemonizes) has read the
	// key by now, or failed: the key leaves the disk at once.
	if rerr := cr.remove(); rerr != nil {
		c.h.Log.Warn("rbd: " + rerr.Error())
	}
	if err != nil {
		return "", fmt.Errorf("%w for %s (%s): %w", ErrMapFailed, v.Spec(), driver, explainMapError(err))
	}
	c.h.Log.Debug("rbd: mapped", "image", v.Spec(), "driver", driver, "took", time.Since(start).Round(time.Millisecond))

	// The kernel's records, not rbd's stdout, decide: they name pool and
	// image too.
	printed := strings.TrimSpace(string(res.Stdout))
	m, ok, err := c.confirmMapped(ctx, v, driver, printed)
	if err != nil {
		return "", fmt.Errorf("rbd map %s: verify: %w", v.Spec(), err)
	}
	if !ok {
		return "", fmt.Errorf("%w for %s (%s): rbd printed %q but the kernel shows no such mapping", ErrMapFailed, v.Spec(), driver, ident.Clip(printed, 64))
	}
	return m.Device, nil
}

// confirmMapped finds v's mapping right after a map. krbd's is in sysfs
// when rbd returns. rbd-nbd daemonizes before it hands the socket to the
// kernel, so /sys/block/nbdN/pid of the device rbd printed may appear a
// moment later: wait for it (bounded), then read its command line.
func (c *Connector) confirmMapped(ctx context.Context, v Volume, driver, printed string) (Mapping, bool, error) {
	if name := strings.TrimPrefix(printed, "/dev/"); driver == DriverNBD && nbdNameRE().MatchString(name) {
		var m Mapping
		var state nbdState
		wctx, cancel := context.WithTimeout(ctx, c.opts.DeviceTimeout)
		defer cancel()
		_ = c.h.FS.WaitFor(wctx, nil, host.Backoff{}, func() (bool, error) {
			m, state = readNBDDevice(c.h.FS, name)
			return state != nbdFree && state != nbdGone, nil
		})
		if state == nbdRBD {
			return m, m.Matches(v), nil
		}
	}
	mappings, err := c.mappings(ctx, driver)
	if err != nil {
		return Mapping{}, false, err
	}
	m, ok := find(mappings, v)
	return m, ok, nil
}

// explainMapError adds a hint for the failures users hit most. Ceph's own
// words for a refused key are vague: krbd's rbd exits 13 (EACCES) with
// "couldn't connect to the cluster!", rbd-nbd exits 22 with "failed to
// fetch mon config" (both seen on Ceph 16.2 with a wrong key).
func explainMapError(err error) error {
	var ee *host.ExitError
	if !errors.As(err, &ee) {
		return err
	}
	s := strings.ToLower(ee.Stderr)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w (are the monitors reachable?)", err)
	case ee.ExitCode == int(unix.EACCES) || ee.ExitCode == int(unix.EPERM) ||
		strings.Contains(s, "permission denied") || strings.Contains(s, "operation not permitted") ||
		strings.Contains(s, "couldn't connect to the cluster") || strings.Contains(s, "failed to fetch mon config"):
		return fmt.Errorf("%w (the cluster refused the connection: check auth_username and the key, and that the monitors are right)", err)
	case strings.Contains(s, "no such file or directory") && strings.Contains(s, "image"):
		return fmt.Errorf("%w (no such image)", err)
	}
	return err
}

// device waits for the device node and builds the Device.
func (c *Connector) device(ctx context.Context, v Volume, driver, path string) (*connector.Device, error) {
	wctx, cancel := context.WithTimeout(ctx, c.opts.DeviceTimeout)
	defer cancel()
	err := c.h.FS.WaitFor(wctx, []string{"/dev"}, host.Backoff{}, func() (bool, error) {
		return c.h.FS.Exists(path), nil
	})
	if err != nil {
		return nil, fmt.Errorf("rbd map %s: wait for %s: %w", v.Spec(), path, err)
	}
	dev := &connector.Device{
		Path:     path,
		Type:     connector.TypeBlock,
		Protocol: Protocol,
		Extra: map[string]string{
			ExtraPool:    v.Pool,
			ExtraImage:   v.Image,
			ExtraDriver:  driver,
			ExtraCluster: v.Cluster,
		},
	}
	if v.Namespace != "" {
		dev.Extra[ExtraNamespace] = v.Namespace
	}
	// ceph-common's udev rule adds /dev/rbd/<pool>/[<ns>/]<image> for krbd
	// when udev runs; report it when it is there, never wait for it.
	if driver == DriverKRBD {
		link := "/dev/rbd/" + v.Spec()
		if target, err := c.h.FS.EvalSymlinks(link); err == nil && target == path {
			dev.Extra[ExtraUdevPath] = link
		}
	}
	return dev, nil
}

// checkReadOnly refuses to hand a read-only mapping to a read-write user.
func (c *Connector) checkReadOnly(devPath string, v Volume) error {
	if v.ReadOnly {
		return nil
	}
	ro, err := c.h.FS.ReadString("/sys/block/" + strings.TrimPrefix(devPath, "/dev/") + "/ro")
	if err == nil && ro == "1" {
		return fmt.Errorf("rbd map %s: already mapped read-only at %s; disconnect it first to map read-write", v.Spec(), devPath)
	}
	return nil
}

// noUdev reports that no udev daemon runs, so krbd must not wait for
// udev's events (rbd map and unmap would hang until their timeout).
func (c *Connector) noUdev() bool {
	running := c.h.Sys.ProcessRunning("systemd-udevd") || c.h.Sys.ProcessRunning("udevd")
	if !running {
		c.h.Log.Debug("rbd: no udev daemon runs; krbd will not wait for udev (noudev)")
	}
	return !running
}

// mappings lists one driver's mappings from the kernel's records. Only
// when an nbd device's client cannot be read (a stale pid, or rbd-nbd
// started with options brick does not know) does it ask `rbd device list`,
// once, and take its answer.
func (c *Connector) mappings(ctx context.Context, driver string) ([]Mapping, error) {
	if driver == DriverKRBD {
		return KernelMappings(c.h.FS)
	}
	scan, err := readNBD(c.h.FS)
	if err != nil || len(scan.Unknown) == 0 {
		return scan.Mappings, err
	}
	c.h.Log.Debug("rbd: nbd devices whose client brick cannot read; asking rbd", "devices", strings.Join(scan.Unknown, ","))
	return c.list(ctx, driver)
}

// list runs rbd device list for one driver.
func (c *Connector) list(ctx context.Context, driver string) ([]Mapping, error) {
	res, err := c.h.Runner.Run(ctx, host.Command{Name: c.opts.RBD, Args: listArgs(driver), Timeout: c.opts.ListTimeout})
	if err != nil {
		return nil, fmt.Errorf("list %s mappings: %w", driver, err)
	}
	return ParseDeviceList(res.Stdout)
}

func find(mappings []Mapping, v Volume) (Mapping, bool) {
	for _, m := range mappings {
		if m.Matches(v) {
			return m, true
		}
	}
	return Mapping{}, false
}

// DevicePaths lists the devices mapping info's image with the configured
// driver.
func (c *Connector) DevicePaths(ctx context.Context, info connector.ConnectionInfo) ([]string, error) {
	v, err := c.prepare(info)
	if err != nil {
		return nil, err
	}
	driver, err := c.driver()
	if err != nil {
		return nil, err
	}
	mappings, err := c.mappings(ctx, driver)
	if err != nil {
		return nil, fmt.Errorf("rbd %s: %w", v.Spec(), err)
	}
	var out []string
	for _, m := range mappings {
		if m.Matches(v) {
			out = append(out, m.Device)
		}
	}
	return out, nil
}

// Disconnect unmaps every mapping of info's image (pool, namespace and
// image all matching). It refuses while a device is mounted or open unless
// opts.Force; an image that is not mapped is success.
func (c *Connector) Disconnect(ctx context.Context, info connector.ConnectionInfo, dev *connector.Device, opts connector.DisconnectOptions) error {
	v, drivers, err := c.lookup(info, dev)
	if err != nil {
		return err
	}
	unlock, err := c.h.Locks.Lock(ctx, lockName(v))
	if err != nil {
		return fmt.Errorf("rbd unmap %s: %w", v.Spec(), err)
	}
	defer unlock()

	for i, d := range drivers {
		mappings, err := c.mappings(ctx, d)
		if err != nil {
			if i > 0 {
				// The fallback driver may not even be installed (rbd-nbd).
				c.h.Log.Debug("rbd: cannot list the other driver's mappings", "driver", d, "err", err)
				continue
			}
			return fmt.Errorf("rbd unmap %s: %w", v.Spec(), err)
		}
		if err := c.unmapAll(ctx, v, d, mappings, opts.Force); err != nil {
			return err
		}
	}
	return nil
}

// unmapAll unmaps every mapping of v among mappings (one driver's) and
// checks that none is left.
func (c *Connector) unmapAll(ctx context.Context, v Volume, driver string, mappings []Mapping, force bool) error {
	var mine []Mapping
	for _, m := range mappings {
		if m.Matches(v) {
			mine = append(mine, m)
		}
	}
	if len(mine) == 0 {
		c.h.Log.Debug("rbd: image not mapped, nothing to do", "image", v.Spec(), "driver", driver)
		return nil
	}
	for _, m := range mine {
		if err := c.unmap(ctx, v, driver, m.Device, force); err != nil {
			return err
		}
		// Confirm: an unmap that "succeeded" but left the mapping is a failure.
		if c.stillMapped(v, driver, m) {
			return fmt.Errorf("rbd unmap %s: still mapped at %s after unmap", v.Spec(), m.Device)
		}
	}
	return nil
}

// stillMapped reads the kernel's record of one unmapped device: gone, or
// reused for another image, is success. A live rbd-nbd whose arguments
// brick cannot read still serving it counts as mapped.
func (c *Connector) stillMapped(v Volume, driver string, m Mapping) bool {
	if driver == DriverKRBD {
		now, err := readKRBDDevice(c.h.FS, m.ID)
		return err == nil && now.Matches(v)
	}
	now, state := readNBDDevice(c.h.FS, strings.TrimPrefix(m.Device, "/dev/"))
	return state == nbdUnreadable || (state == nbdRBD && now.Matches(v))
}

// lookup parses info and names the drivers whose mappings may hold its
// image, first the one to use: the driver the device record names, else
// the configured one and then the other (the image may have been mapped
// with either; looking there too beats reporting "not attached" while it
// still is).
func (c *Connector) lookup(info connector.ConnectionInfo, dev *connector.Device) (Volume, []string, error) {
	v, err := c.prepare(info)
	if err != nil {
		return v, nil, err
	}
	driver, err := c.driver()
	if err != nil {
		return v, nil, err
	}
	if dev != nil && ValidDriver(dev.Extra[ExtraDriver]) {
		return v, []string{dev.Extra[ExtraDriver]}, nil
	}
	return v, []string{driver, otherDriver(driver)}, nil
}

func otherDriver(d string) string {
	if d == DriverNBD {
		return DriverKRBD
	}
	return DriverNBD
}

func (c *Connector) unmap(ctx context.Context, v Volume, driver, devPath string, force bool) error {
	if !force {
		if err := c.checkNotInUse(devPath); err != nil {
			return fmt.Errorf("rbd unmap %s (%s): %w", v.Spec(), devPath, err)
		}
		fctx, cancel := context.WithTimeout(ctx, c.opts.FlushTimeout)
		err := c.h.Block.FlushBuffersContext(fctx, devPath)
		cancel()
		if err != nil {
			return fmt.Errorf("rbd unmap %s: flush %s (use --force to unmap anyway): %w", v.Spec(), devPath, err)
		}
	}
	_, err := c.h.Runner.Run(ctx, host.Command{Name: c.opts.RBD, Args: unmapArgs(driver, devPath, force, c.noUdev()), Timeout: c.opts.UnmapTimeout})
	if err == nil {
		return nil
	}
	var ee *host.ExitError
	if errors.As(err, &ee) && (ee.ExitCode == int(unix.EBUSY) || strings.Contains(ee.Stderr, "Device or resource busy")) {
		return fmt.Errorf("rbd unmap %s (%s): %w: the device is open (a process, a mount or a holder such as dm or md uses it); close it, or use --force: %w", v.Spec(), devPath, host.ErrDeviceBusy, err)
	}
	return fmt.Errorf("rbd unmap %s (%s): %w", v.Spec(), devPath, err)
}

// checkNotInUse refuses a device that is mounted (itself or a partition),
// has holders (dm, md) or is held open exclusively.
func (c *Connector) checkNotInUse(devPath string) error {
	name := strings.TrimPrefix(devPath, "/dev/")
	if mounts, err := c.h.Sys.Mounts(); err == nil {
		majmin := c.majorMinor(devPath)
		for _, m := range mounts {
			if m.Source == devPath || strings.HasPrefix(m.Source, devPath+"p") || (majmin != "" && m.MajorMinor == majmin) {
				return fmt.Errorf("%w: mounted at %s (unmount it, or use --force)", host.ErrDeviceBusy, m.MountPoint)
			}
		}
	}
	if holders, err := c.h.FS.ReadDir("/sys/block/" + name + "/holders"); err == nil && len(holders) > 0 {
		return fmt.Errorf("%w: held by %s (remove it, or use --force)", host.ErrDeviceBusy, holders[0].Name())
	}
	if err := c.h.Block.CheckNotInUse(devPath); err != nil {
		return fmt.Errorf("%w (close it, or use --force)", err)
	}
	return nil
}

// majorMinor returns "M:m" of a device node, or "" when path is not one.
func (c *Connector) majorMinor(devPath string) string {
	fi, err := c.h.FS.Stat(devPath)
	if err != nil || fi.Mode()&fs.ModeDevice == 0 {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))
}
