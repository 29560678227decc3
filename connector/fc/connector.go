package fc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/multipath"
	"github.com/brick-storage/brick/scsi"
)

// Options configure the FC connector; the zero value means the defaults.
type Options struct {
	// Multipath attaches through dm-multipath over every HBA and target port.
	Multipath bool
	// EnforceMultipath fails instead of falling back to a single path when
	// multipathd is not running or builds no map.
	EnforceMultipath bool
	// CommandTimeout bounds each blockdev or multipath run. Default 30 s.
	CommandTimeout time.Duration
	// LockTimeout bounds the wait for another brick process working on the
	// same target ports. Default 5 min.
	LockTimeout time.Duration
	// RescanInterval is how long a scanned path that showed no LUN waits
	// before it is scanned again, while no path has a device yet (the
	// array may map the LUN a moment late). Default 2 s.
	RescanInterval time.Duration
	// SCSI and MultipathOptions tune device and map handling;
	// SCSI.DeviceTimeout bounds the whole wait for the volume's devices,
	// target ports still logging in included. Default 30 s.
	SCSI             scsi.Options
	MultipathOptions multipath.Options
}

// withDefaults puts the default in place of every zero or negative value.
func (o Options) withDefaults() Options {
	o.CommandTimeout = cmp.Or(max(o.CommandTimeout, 0), 30*time.Second)
	o.LockTimeout = cmp.Or(max(o.LockTimeout, 0), 5*time.Minute)
	o.RescanInterval = cmp.Or(max(o.RescanInterval, 0), 2*time.Second)
	o.SCSI.DeviceTimeout = cmp.Or(max(o.SCSI.DeviceTimeout, 0), 30*time.Second)
	o.MultipathOptions.CommandTimeout = cmp.Or(max(o.MultipathOptions.CommandTimeout, 0), o.CommandTimeout)
	return o
}

// What the connector offers, checked at compile time.
var (
	_ connector.Connector  = (*Connector)(nil)
	_ connector.Extender   = (*Connector)(nil)
	_ connector.Planner    = (*Connector)(nil)
	_ connector.HostFacter = (*Connector)(nil)
)

// Connector attaches Fibre Channel volumes. It implements connector.Connector.
type Connector struct {
	h    *host.Host
	log  *slog.Logger
	opts Options
	scsi *scsi.SCSI
	mp   *multipath.Multipath
}

// New returns an FC connector working on h.
func New(h *host.Host, opts Options) *Connector {
	opts = opts.withDefaults()
	log := h.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Connector{h: h, log: log, opts: opts, scsi: scsi.New(h, opts.SCSI), mp: multipath.New(h, opts.MultipathOptions)}
}

// Device.Extra keys the FC connector sets.
const (
	ExtraTargetWWPNs  = "target_wwpns" // the target ports the paths use, comma separated
	ExtraTargetLUN    = "target_lun"
	ExtraHCTLs        = "hctls"   // H:C:T:L of each path, comma separated
	ExtraByPath       = "by_path" // /dev/disk/by-path link of the first path, when udev made one
	ExtraMultipathDev = connector.ExtraMultipathByID
	ExtraDMName       = connector.ExtraDMName
	ExtraReadOnly     = "read_only"
)

// ErrNoHBA means the host has no usable FC port for the volume.
var ErrNoHBA = errors.New("no usable Fibre Channel HBA")

// ErrNoDevice means no path of the volume produced a device in time.
var ErrNoDevice = errors.New("no Fibre Channel device found for the volume")

func (c *Connector) parse(ci connector.ConnectionInfo) (*Info, error) {
	// FC carries no credentials, but a stray secret key must still never
	// reach a log line.
	c.h.Redactor.Add(ci.Secrets()...)
	return ParseInfo(ci)
}

// lock serialises brick processes working on the same target ports, so a
// disconnect deleting a LUN's paths does not race a connect scanning it.
func (c *Connector) lock(ctx context.Context, info *Info) (func(), error) {
	names := make([]string, 0, len(info.Targets))
	for _, t := range info.Targets {
		names = append(names, "fc-"+t.WWPN+"-"+strconv.Itoa(t.LUN))
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.LockTimeout)
	defer cancel()
	return c.h.Locks.LockAll(ctx, names...)
}

// selectHBAs returns the HBAs the volume may use: Online ones, and only
// those initiator_target_map names when it is given.
func (c *Connector) selectHBAs(info *Info, onlineOnly bool) ([]HBA, error) {
	all, skipped, err := ListHBAs(c.h.FS)
	if err != nil {
		return nil, err
	}
	for _, s := range skipped {
		c.log.Warn("fc: ignoring an HBA", "err", s.Error())
	}
	var out []HBA
	var seen []string
	for _, h := range all {
		if h.PortName == "" {
			c.log.Warn("fc: ignoring an HBA without a readable WWPN", "host", h.Host, "err", h.Unreadable[0].Error())
			continue
		}
		seen = append(seen, fmt.Sprintf("host%d 0x%s %s", h.Host, h.PortName, h.PortState))
		if onlineOnly && !h.Online() {
			c.log.Debug("fc: HBA not online; skipped", "host", h.Host, "wwpn", h.PortName, "state", h.PortState)
			continue
		}
		if info.InitiatorTargetMap != nil {
			if _, ok := info.InitiatorTargetMap[h.PortName]; !ok {
				c.log.Debug("fc: HBA not in initiator_target_map; skipped", "host", h.Host, "wwpn", h.PortName)
				continue
			}
		}
		out = append(out, h)
	}
	if len(out) == 0 && onlineOnly {
		if len(seen) == 0 {
			return nil, fmt.Errorf("%w: /sys/class/fc_host lists no port (no FC driver loaded?)", ErrNoHBA)
		}
		what := "online"
		if info.InitiatorTargetMap != nil {
			what = "online and named in initiator_target_map"
		}
		return nil, fmt.Errorf("%w: none is %s (found %s)", ErrNoHBA, what, strings.Join(seen, "; "))
	}
	return out, nil
}

// route is one (HBA, target port, LUN) path to the volume.
type route struct {
	hba    HBA
	target Target

	port     remotePort
	resolved bool // port found in sysfs
	scanned  bool
	lastScan time.Time
	created  bool // the SCSI device appeared after brick's own scan
	empty    bool // scanned, and the kernel found no LUN there

	disk   string
	hctl   scsi.HCTL
	link   string // by-path link, when one names the disk
	wwid   string
	id     scsi.Identity // wwid, or what stands in for one
	hasDev bool
}

func (p *route) String() string {
	return fmt.Sprintf("host%d (0x%s) -> 0x%s lun %d", p.hba.Host, p.hba.PortName, p.target.WWPN, p.target.LUN)
}

func (p *route) addr() scsi.HCTL {
	return scsi.HCTL{Host: p.hba.Host, Channel: p.port.Channel, Target: p.port.Target, LUN: p.target.LUN}
}

func (p *route) linkPath() string {
	if p.hba.PCI == "" {
		return ""
	}
	return byPathDir + "/" + ByPathName(p.hba.Platform, p.hba.PCI, p.target.WWPN, p.target.LUN)
}

// buildPaths pairs every selected HBA with the targets it may reach.
func buildPaths(info *Info, hbas []HBA) []*route {
	var out []*route
	for _, h := range hbas {
		for _, t := range info.TargetsFor(h.PortName) {
			out = append(out, &route{hba: h, target: t})
		}
	}
	return out
}

// Connect scans exactly the volume's LUN behind each requested target port
// on each usable HBA, waits for the devices, verifies them and returns the
// volume: /dev/sdX on a single path, /dev/dm-N with multipath.
func (c *Connector) Connect(ctx context.Context, ci connector.ConnectionInfo) (*connector.Device, error) {
	info, err := c.parse(ci)
	if err != nil {
		return nil, err
	}
	c.warnAbout(info)
	d, err := c.decideConnect(info)
	if err != nil {
		return nil, err
	}
	if d.warning != "" {
		c.log.Warn("fc: " + d.warning)
	}
	useMP := d.multipath
	unlock, err := c.lock(ctx, info)
	if err != nil {
		return nil, fmt.Errorf("fc connect: %w", err)
	}
	defer unlock()
	found, err := c.findDevices(ctx, info, d)
	if err != nil {
		return nil, fmt.Errorf("fc connect: %w", err)
	}
	undo := func() { c.undo(context.WithoutCancel(ctx), found) }
	dev := device(info, found)
	if dev.WWN == "" {
		if useMP {
			undo()
			return nil, fmt.Errorf("fc connect: %w", found[0].id.NoMultipath(fmt.Sprintf("LUN %d behind 0x%s", found[0].target.LUN, found[0].target.WWPN)))
		}
		c.log.Warn("fc: LUN has no WWID (no VPD page 0x83); attached identified by "+found[0].id.String()+found[0].id.CheckNote(), "paths", len(found))
	}
	if useMP {
		err = c.toMultipath(ctx, info, dev)
	} else {
		err = c.claimed(ctx, info, dev)
	}
	if err != nil {
		undo()
		return nil, err
	}
	if info.ReadOnly {
		if err := c.setReadOnly(ctx, strings.TrimPrefix(dev.Path, "/dev/")); err != nil {
			undo()
			return nil, err
		}
	}
	return dev, nil
}

// warnAbout warns about what the info asks for that brick does not do.
func (c *Connector) warnAbout(info *Info) {
	if info.Encrypted {
		c.log.Debug("fc: volume is encrypted: the device holds ciphertext (local-attach opens it with dm-crypt)", "volume_id", info.VolumeID)
	}
	if len(info.UnknownMapTargets) > 0 {
		c.log.Warn("fc: initiator_target_map names target ports that are not among target_wwn(s); ignoring them", "wwpns", strings.Join(info.UnknownMapTargets, ","))
	}
}

// findDevices brings up the volume's devices on the usable HBAs and keeps
// those that show the same LUN behind a requested target port.
func (c *Connector) findDevices(ctx context.Context, info *Info, d connectDecision) ([]*route, error) {
	start := time.Now()
	found, err := c.discover(ctx, info, d.hbas, d.paths, d.multipath)
	if err != nil {
		return nil, err
	}
	c.log.Debug("fc: devices found", "paths", len(found), "of", len(d.paths), "took", time.Since(start).Round(time.Millisecond).String())
	return c.verify(ctx, found)
}

// connectDecision is what Connect does with a volume, decided once: the
// same value drives Connect and PlanConnect's dry run.
type connectDecision struct {
	multipath bool     // through dm-multipath, over every path found
	hbas      []HBA    // the online HBAs the volume may use
	paths     []*route // (HBA, target port, LUN) to bring up
	warning   string   // a fallback the user should hear of ("" for none)
}

// decideConnect picks multipath or a single path, the HBAs and the paths
// over them; no path at all is ErrNoHBA.
func (c *Connector) decideConnect(info *Info) (connectDecision, error) {
	useMP, warning, err := c.mp.Choose(c.opts.Multipath, c.opts.EnforceMultipath)
	if err != nil {
		return connectDecision{}, fmt.Errorf("fc connect: %w", err)
	}
	hbas, err := c.selectHBAs(info, true)
	if err != nil {
		return connectDecision{}, fmt.Errorf("fc connect: %w", err)
	}
	paths := buildPaths(info, hbas)
	if len(paths) == 0 {
		return connectDecision{}, fmt.Errorf("fc connect: %w: initiator_target_map pairs no online HBA with a target port of the volume", ErrNoHBA)
	}
	return connectDecision{multipath: useMP, hbas: hbas, paths: paths, warning: warning}, nil
}

// device is the single-path device over the found paths.
func device(info *Info, found []*route) *connector.Device {
	disks := make([]string, len(found))
	for i, p := range found {
		disks[i] = p.disk
	}
	return &connector.Device{
		Path: scsi.DevPath(disks[0]), Type: connector.TypeBlock, Protocol: Protocol, WWN: found[0].wwid,
		Paths: devPaths(disks), Extra: extra(info, found),
	}
}

// toMultipath makes multipathd build the map over dev's paths and points
// dev at it; without a map dev stays on its first path unless multipath
// is enforced.
func (c *Connector) toMultipath(ctx context.Context, info *Info, dev *connector.Device) error {
	disks := make([]string, len(dev.Paths))
	for i, p := range dev.Paths {
		disks[i] = strings.TrimPrefix(p, "/dev/")
	}
	mp, err := c.mp.Assemble(ctx, dev.WWN, disks...)
	if err == nil && !info.ReadOnly {
		err = c.mp.WaitReadWrite(ctx, mp)
	}
	switch {
	case err == nil:
		dev.OnMap(mp.DevPath(), mp.WWID, mp.ByIDPath(), mp.Name)
	case c.opts.EnforceMultipath:
		return fmt.Errorf("fc connect: multipath enforced: %w", err)
	default:
		c.log.Warn("fc: no multipath map; using a single path", "err", err.Error())
	}
	return nil
}

// claimed points dev, attached without multipath, at the map multipathd
// built over its paths on its own (multipath.Claimed), if it did.
func (c *Connector) claimed(ctx context.Context, info *Info, dev *connector.Device) error {
	mp, err := c.mp.Claimed(ctx, dev.WWN, !info.ReadOnly, dev.Paths...)
	if err != nil {
		return fmt.Errorf("fc connect: %w", err)
	}
	if mp != nil {
		dev.OnMap(mp.DevPath(), mp.WWID, mp.ByIDPath(), mp.Name)
	}
	return nil
}

func devPaths(disks []string) []string {
	out := make([]string, len(disks))
	for i, d := range disks {
		out[i] = scsi.DevPath(d)
	}
	return out
}

func extra(info *Info, found []*route) map[string]string {
	var wwpns, hctls []string
	seen := map[string]bool{}
	for _, p := range found {
		if !seen[p.target.WWPN] {
			seen[p.target.WWPN] = true
			wwpns = append(wwpns, p.target.WWPN)
		}
		hctls = append(hctls, p.hctl.String())
	}
	e := map[string]string{
		ExtraTargetWWPNs: strings.Join(wwpns, ","),
		ExtraTargetLUN:   strconv.Itoa(found[0].target.LUN),
		ExtraHCTLs:       strings.Join(hctls, ","),
	}
	for _, p := range found {
		if p.link != "" {
			e[ExtraByPath] = p.link
			break
		}
	}
	if info.ReadOnly {
		e[ExtraReadOnly] = "true"
	}
	if found[0].wwid == "" && found[0].id.Serial != "" {
		e[connector.ExtraUnitSerial] = found[0].id.Serial
	}
	return e
}

func (c *Connector) setReadOnly(ctx context.Context, name string) error {
	if _, err := c.h.Runner.Run(ctx, host.Command{Name: "blockdev", Args: []string{"--setro", scsi.DevPath(name)}, Timeout: c.opts.CommandTimeout}); err != nil {
		return fmt.Errorf("fc: set %s read-only (access_mode ro): %w", name, err)
	}
	return nil
}

// discover finds the volume's devices: it resolves each path's target port,
// scans exactly its LUN, and watches sysfs, /dev and the by-path links until
// the devices are there. Without multipath it stops at the first device and
// scans one path after another; with multipath it scans every path and
// waits until each path whose port is visible has its device or has shown
// that the LUN is not there. Target ports not (yet) logged in are waited
// for only while no device exists at all. SCSI.DeviceTimeout bounds it all;
// with multipath, what was found by then is used (N of M paths).
func (c *Connector) discover(ctx context.Context, info *Info, hbas []HBA, paths []*route, all bool) ([]*route, error) {
	wctx, cancel := context.WithTimeout(ctx, c.opts.SCSI.DeviceTimeout)
	defer cancel()
	d := &discovery{c: c, ctx: wctx, info: info, hbas: hbas, paths: paths, all: all}
	err := c.h.FS.WaitFor(wctx, []string{"/dev", byPathDir}, c.opts.SCSI.Backoff, d.check)
	var found []*route
	for _, p := range paths {
		if p.hasDev {
			found = append(found, p)
		}
	}
	if err != nil && len(found) == 0 {
		return nil, c.explainNothingFound(paths, info, err, d.scanErrs)
	}
	if err != nil {
		c.log.Warn("fc: not every path brought up its device in time; going on with those that did", "found", len(found), "paths", len(paths))
	}
	if err != nil && ctx.Err() != nil {
		return nil, err
	}
	return found, nil
}

// discovery is one discover call: its paths and what it did so far.
type discovery struct {
	c            *Connector
	ctx          context.Context
	info         *Info
	hbas         []HBA
	paths        []*route
	all          bool // multipath: every path, else the first device will do
	wildcardDone bool
	scanErrs     []error
}

// round is what one pass over the paths saw.
type round struct {
	resolved bool // a target port is visible
	found    bool // a path has its device
	pending  bool // a path is past its scan, its device still coming
}

// check makes one pass over the paths and reports whether discovery is
// done: a device found, and with multipath no path still pending.
func (d *discovery) check() (bool, error) {
	var r round
	for _, p := range d.paths {
		if err := d.visit(p, &r); err != nil {
			return false, err
		}
	}
	if !r.resolved && !r.found && d.info.WildcardScan && !d.wildcardDone {
		d.wildcardDone = true
		d.c.wildcardScan(d.ctx, d.info, d.hbas)
		return false, nil
	}
	if !r.found {
		return false, nil
	}
	return !d.all || !r.pending, nil
}

// visit moves one path on: find its port, take a device its by-path link
// names, else scan its LUN and look for the device.
func (d *discovery) visit(p *route, r *round) error {
	if p.hasDev {
		r.found = true
		return nil
	}
	d.resolve(p)
	if d.byLink(p) {
		r.found = true
		return nil
	}
	if !p.resolved {
		return nil
	}
	r.resolved = true
	if !d.all && (r.found || r.pending) {
		// One path at a time without multipath: no second device of
		// the same LUN nobody will use.
		return nil
	}
	if err := d.scan(p, r.found); err != nil {
		return err
	}
	if p.hasDev {
		r.found = true
	} else if !p.empty {
		r.pending = true
	}
	return nil
}

// resolve looks for the path's target port until it shows up.
func (d *discovery) resolve(p *route) {
	if p.resolved {
		return
	}
	p.port, p.resolved = findRemotePort(d.c.h.FS, p.hba.Host, p.target.WWPN)
	if p.resolved {
		d.c.log.Debug("fc: target port found", "path", p.String(), "channel", p.port.Channel, "target", p.port.Target, "from", p.port.Source)
	}
}

// byLink takes the disk the path's by-path link names, when udev made one.
func (d *discovery) byLink(p *route) bool {
	l := p.linkPath()
	if l == "" {
		return false
	}
	disk := diskOfLink(d.c.h.FS, l)
	if disk == "" {
		return false
	}
	a, err := d.c.scsi.HCTLOf(disk)
	if err != nil {
		return false
	}
	p.disk, p.hctl, p.link, p.hasDev = disk, a, l, true
	return true
}

// scan looks for the device at the path's address, scanning the LUN first
// when the kernel has no device there: once, and again after
// RescanInterval while no path has a device (anyFound false).
func (d *discovery) scan(p *route, anyFound bool) error {
	a := p.addr()
	names, err := d.c.scsi.Find(a)
	if err != nil {
		return err
	}
	if len(names) == 0 && !d.c.deviceKnown(a) && (!p.scanned || !anyFound && time.Since(p.lastScan) >= d.c.opts.RescanInterval) {
		if err := d.c.scsi.Scan(d.ctx, a); err != nil {
			d.c.log.Warn("fc: scan failed", "path", p.String(), "err", err.Error())
			d.scanErrs = append(d.scanErrs, fmt.Errorf("%s: %w", p, err))
		}
		p.scanned, p.created, p.lastScan = true, true, time.Now()
		if names, err = d.c.scsi.Find(a); err != nil {
			return err
		}
	}
	// The kernel's scan is synchronous, but a device it is still adding
	// must not be taken for a LUN that is not there.
	p.empty = len(names) == 0 && !d.c.deviceKnown(a) && time.Since(p.lastScan) >= scanSettle
	for _, n := range names {
		if d.c.h.FS.Exists(scsi.DevPath(n)) {
			p.disk, p.hctl, p.hasDev = n, a, true
			if l := p.linkPath(); l != "" && diskOfLink(d.c.h.FS, l) == n {
				p.link = l
			}
			return nil
		}
	}
	return nil
}

// scanSettle is how long after its scan a path without a SCSI device
// counts as having no LUN.
const scanSettle = 500 * time.Millisecond

// deviceKnown reports whether the kernel has a SCSI device at a, with or
// without its block device yet.
func (c *Connector) deviceKnown(a scsi.HCTL) bool {
	return c.h.FS.Exists("/sys/class/scsi_device/" + a.String())
}

// wildcardScan probes the volume's LUNs on every channel and target of the
// HBAs: only when the info allows it and no target port could be found.
func (c *Connector) wildcardScan(ctx context.Context, info *Info, hbas []HBA) {
	for _, h := range hbas {
		luns := map[int]bool{}
		for _, t := range info.TargetsFor(h.PortName) {
			luns[t.LUN] = true
		}
		for lun := range luns {
			a := scsi.HCTL{Host: h.Host, Channel: scsi.Wildcard, Target: scsi.Wildcard, LUN: lun}
			c.log.Warn("fc: no target port in sysfs; wildcard scan allowed by enable_wildcard_scan", "host", h.Host, "lun", lun)
			if err := c.scsi.Scan(ctx, a); err != nil {
				c.log.Warn("fc: wildcard scan failed", "host", h.Host, "err", err.Error())
			}
		}
	}
}

func (c *Connector) explainNothingFound(paths []*route, info *Info, waitErr error, scanErrs []error) error {
	var resolved, unresolved []string
	for _, p := range paths {
		if p.resolved {
			resolved = append(resolved, p.String())
		} else {
			unresolved = append(unresolved, p.String())
		}
	}
	var b strings.Builder
	if len(resolved) == 0 {
		fmt.Fprintf(&b, "no requested target port (%s) is logged in on a usable HBA", "0x"+strings.Join(info.WWPNs(), ", 0x"))
		if !info.WildcardScan {
			b.WriteString(" (check zoning and port state; brick does no wildcard scan unless enable_wildcard_scan is true)")
		}
	} else {
		fmt.Fprintf(&b, "scanned %s, but no device appeared (is the LUN mapped to this host's initiators?)", strings.Join(resolved, "; "))
	}
	if err := errors.Join(scanErrs...); err != nil {
		return fmt.Errorf("%w: %s: %w (%w)", ErrNoDevice, b.String(), waitErr, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrNoDevice, b.String(), waitErr)
}

// verify reads every path's WWID and keeps the paths that show the same LUN
// as the first, behind a requested target port; a path that shows another
// LUN is taken back when brick's scan created it.
func (c *Connector) verify(ctx context.Context, found []*route) ([]*route, error) {
	var errs []error
	var ok []*route
	for _, p := range found {
		if port, err := targetPortOf(c.h.FS, p.hctl); err != nil || port != p.target.WWPN {
			c.log.Warn("fc: device is not behind the requested target port; leaving it out", "disk", p.disk, "path", p.String(), "port", port)
			continue
		}
		id, err := c.scsi.Identify(p.disk, p.hctl)
		if err != nil {
			errs = append(errs, fmt.Errorf("verify %s (%s): %w", p.disk, p, err))
			continue
		}
		p.id, p.wwid = id, id.WWID
		ok = append(ok, p)
	}
	if len(ok) == 0 {
		c.undo(context.WithoutCancel(ctx), found)
		if len(errs) == 0 {
			errs = append(errs, errors.New("no device sits behind a requested target port"))
		}
		return nil, fmt.Errorf("%w: %w", ErrNoDevice, errors.Join(errs...))
	}
	// Without a WWID, paths match by unit serial; with neither, nothing
	// shows two paths reach one LUN and only the first is kept.
	want := ok[0].id
	var out, other []*route
	for i, p := range ok {
		if i > 0 && !p.id.Same(want) {
			c.log.Warn("fc: path shows a different LUN, or one brick cannot match; leaving it out", "disk", p.disk, "path", p.String(), "id", p.id.String(), "want", want.String())
			other = append(other, p)
			continue
		}
		out = append(out, p)
	}
	c.undo(context.WithoutCancel(ctx), other)
	return out, nil
}

// undo deletes the devices brick's own scans brought in.
func (c *Connector) undo(ctx context.Context, paths []*route) {
	var names []string
	for _, p := range paths {
		if p.created && p.disk != "" {
			names = append(names, p.disk)
		}
	}
	if len(names) == 0 {
		return
	}
	if err := c.scsi.DeleteAndWait(ctx, names...); err != nil {
		c.log.Warn("fc: undo: could not delete devices", "disks", strings.Join(names, ","), "err", err.Error())
	}
}
