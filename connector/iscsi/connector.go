package iscsi

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/multipath"
	"github.com/brick-storage/brick/scsi"
)

// Options configure the iSCSI connector; the zero value means the defaults.
type Options struct {
	// Multipath attaches through dm-multipath over every portal.
	Multipath bool
	// EnforceMultipath fails instead of falling back to a single path when
	// multipathd is not running or builds no map.
	EnforceMultipath bool
	// LoginTimeout bounds one portal's login (node.conn[0].timeo.login_timeout,
	// one attempt). Default 15 s, open-iscsi's own default.
	LoginTimeout time.Duration
	// CommandTimeout bounds other iscsiadm runs. Default 30 s.
	CommandTimeout time.Duration
	// LockTimeout bounds the wait for another brick process working on the
	// same target. Default 5 min.
	LockTimeout time.Duration
	// PortalCheck is asked, before each login, whether the portal accepts
	// TCP connections, retried until LoginTimeout ends, so a dead portal
	// costs the login timeout and no more (docs/scsi-multipath.md). nil:
	// host.ProbeTCP when brick sees the host's own root (and so shares
	// iscsid's network), none otherwise.
	PortalCheck func(ctx context.Context, addr string) error
	// NoPortalCheck turns the check off.
	NoPortalCheck bool
	// Resolver looks up portals given as host names; nil: the system's.
	Resolver connector.Resolver
	// ResolveTimeout bounds one host name lookup. Default 5 s.
	ResolveTimeout time.Duration
	// SCSI and MultipathOptions tune device and map handling.
	SCSI             scsi.Options
	MultipathOptions multipath.Options
}

// withDefaults puts the default in place of every zero or negative value.
func (o Options) withDefaults() Options {
	o.LoginTimeout = cmp.Or(max(o.LoginTimeout, 0), 15*time.Second)
	o.CommandTimeout = cmp.Or(max(o.CommandTimeout, 0), 30*time.Second)
	o.LockTimeout = cmp.Or(max(o.LockTimeout, 0), 5*time.Minute)
	o.ResolveTimeout = cmp.Or(max(o.ResolveTimeout, 0), connector.DefaultResolveTimeout)
	o.MultipathOptions.CommandTimeout = cmp.Or(max(o.MultipathOptions.CommandTimeout, 0), o.CommandTimeout)
	return o
}

// What the connector offers, checked at compile time.
var (
	_ connector.Connector = (*Connector)(nil)
	_ connector.Extender  = (*Connector)(nil)
	_ connector.Planner   = (*Connector)(nil)
)

// Connector attaches iSCSI volumes. It implements connector.Connector.
type Connector struct {
	h     *host.Host
	log   *slog.Logger
	opts  Options
	scsi  *scsi.SCSI
	mp    *multipath.Multipath
	adm   iscsiadm
	nodes nodes
	probe portalProbe
}

// New returns an iSCSI connector working on h.
func New(h *host.Host, opts Options) *Connector {
	opts = opts.withDefaults()
	switch {
	case opts.NoPortalCheck:
		opts.PortalCheck = nil
	case opts.PortalCheck == nil && h.FS.Root() == "/":
		opts.PortalCheck = host.ProbeTCP
	}
	log := h.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	adm := iscsiadm{runner: h.Runner, fs: h.FS, locks: h.Locks, commandTimeout: opts.CommandTimeout, loginTimeout: opts.LoginTimeout}
	return &Connector{
		h: h, log: log, opts: opts,
		scsi:  scsi.New(h, opts.SCSI),
		mp:    multipath.New(h, opts.MultipathOptions),
		adm:   adm,
		nodes: nodes{h: h, log: log, adm: adm, loginTimeout: opts.LoginTimeout},
		probe: portalProbe{check: opts.PortalCheck, fs: h.FS, loginTimeout: opts.LoginTimeout},
	}
}

// Device.Extra keys the iSCSI connector sets.
const (
	ExtraTargetIQN    = "target_iqn"
	ExtraTargetPortal = "target_portal"
	ExtraTargetLUN    = "target_lun"
	ExtraMultipathDev = connector.ExtraMultipathByID
	ExtraDMName       = connector.ExtraDMName
	ExtraReadOnly     = "read_only"
)

func (c *Connector) parse(ci connector.ConnectionInfo) (*Info, error) {
	// Register secrets first: even a rejection must not echo them.
	c.h.Redactor.Add(ci.Secrets()...)
	info, err := ParseInfo(ci)
	if err != nil {
		return nil, err
	}
	c.h.Redactor.Add(info.Secrets()...)
	for _, w := range info.Warnings {
		c.log.Warn("iscsi: " + w)
	}
	return info, nil
}

var lockSafeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._:-]{1,180}$`) })

// lockTargets serialises brick processes working on the same targets: the
// decision to log out (no LUN left) must not race with another process
// that has just logged in to scan its own LUN.
func (c *Connector) lockTargets(ctx context.Context, iqns []string) (func(), error) {
	names := make([]string, 0, len(iqns))
	for _, iqn := range iqns {
		name := "iscsi-" + iqn
		if !lockSafeRE().MatchString(iqn) {
			sum := sha256.Sum256([]byte(iqn))
			name = "iscsi-" + hex.EncodeToString(sum[:16])
		}
		names = append(names, name)
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.LockTimeout)
	defer cancel()
	return c.h.Locks.LockAll(ctx, names...)
}

// Connect logs in, scans the volume's LUN, waits for its device, verifies
// it and returns it: /dev/sdX on a single path, /dev/dm-N with multipath.
func (c *Connector) Connect(ctx context.Context, ci connector.ConnectionInfo) (*connector.Device, error) {
	info, err := c.parse(ci)
	if err != nil {
		return nil, err
	}
	if info.Encrypted {
		c.log.Debug("iscsi: volume is encrypted: the device holds ciphertext (local-attach opens it with dm-crypt)", "volume_id", info.VolumeID)
	}
	d, err := c.decideConnect(ctx, info)
	if err != nil {
		return nil, err
	}
	if d.warning != "" {
		c.log.Warn("iscsi: " + d.warning)
	}
	targets := info.Targets
	if d.discover {
		targets = c.discoverPaths(ctx, info)
	}
	iqns := iqnsOf(targets)
	unlock, err := c.lockTargets(ctx, iqns)
	if err != nil {
		return nil, fmt.Errorf("iscsi connect: %w", err)
	}
	defer unlock()
	if !d.multipath {
		return c.connectSingle(ctx, info, targets)
	}
	return c.connectMultipath(ctx, info, targets)
}

// connectDecision is what Connect does with a volume, decided once: the
// same value drives Connect and PlanConnect's dry run.
type connectDecision struct {
	// multipath: attach through dm-multipath over every path.
	multipath bool
	// discover: ask the one portal given for the target's others
	// (SendTargets) before logging in.
	discover bool
	// warning is a fallback the user should hear of ("" for none).
	warning string
}

// decideConnect resolves portal names in info (in place) and decides how
// to attach it: multipath when asked for and multipathd runs, and
// discovery when a multipath attach got a single portal and no list.
func (c *Connector) decideConnect(ctx context.Context, info *Info) (connectDecision, error) {
	if err := c.resolve(ctx, info); err != nil {
		return connectDecision{}, fmt.Errorf("iscsi connect: %w", err)
	}
	useMP, warning, err := c.mp.Choose(c.opts.Multipath, c.opts.EnforceMultipath)
	if err != nil {
		return connectDecision{}, fmt.Errorf("iscsi connect: %w", err)
	}
	return connectDecision{
		multipath: useMP,
		discover:  useMP && len(info.Targets) == 1 && !info.Plural,
		warning:   warning,
	}, nil
}

func iqnsOf(targets []Target) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range targets {
		if !seen[t.IQN] {
			seen[t.IQN] = true
			out = append(out, t.IQN)
		}
	}
	return out
}

// pathResult is one path brought up by attachPath.
type pathResult struct {
	index   int // in the connection info's list of targets
	target  Target
	iface   string // open-iscsi interface (Info.Iface)
	session Session
	disk    string
	hctl    scsi.HCTL
	wwid    string
	id      scsi.Identity // wwid, or what stands in for one
	// What this call created, so a failure can take exactly that back.
	createdRecord, createdSession, scanned bool
	// recordReady: the node record was made before the logins began.
	recordReady bool
}

// attachPath brings up one path: node record, login, targeted scan, device.
// res carries what was done for the path already (at least its target).
func (c *Connector) attachPath(ctx context.Context, info *Info, path *pathResult) (res *pathResult, err error) {
	res = path
	res.iface = info.Iface
	defer func() {
		if err != nil {
			c.undoPath(context.WithoutCancel(ctx), res)
			res = nil
		}
	}()
	if res.session, err = c.ensureSession(ctx, info, res); err != nil {
		return res, err
	}
	if err := c.pathDevice(ctx, res); err != nil {
		return res, err
	}
	c.log.Debug("iscsi: path up", "target", res.target.String(), "disk", res.disk)
	return res, nil
}

// ensureSession returns the session to the path's target, logging in (with
// its node record prepared) when there is none.
func (c *Connector) ensureSession(ctx context.Context, info *Info, res *pathResult) (Session, error) {
	t := res.target
	sessions, err := ListSessions(c.h.FS)
	if err != nil {
		return Session{}, err
	}
	if sess, ok := findSession(sessions, t.IQN, t.Portal); ok {
		return sess, nil
	}
	// A ready record was made after the portal answered a probe
	// (prepareRecords): no second probe.
	if !res.recordReady {
		if err := c.probe.wait(ctx, t, info.Iface); err != nil {
			return Session{}, err
		}
		created, err := c.nodes.prepare(ctx, info, t)
		res.createdRecord = res.createdRecord || created
		if err != nil {
			return Session{}, err
		}
	}
	// From here a session to t is this call's (it holds the target lock),
	// even when the login reports failure: iscsid may finish a login
	// iscsiadm gave up on, and the undo must log that session out.
	res.createdSession = true
	existed, err := c.adm.login(ctx, t.IQN, t.Portal, info.Iface)
	if err != nil {
		return Session{}, err
	}
	res.createdSession = !existed
	if sessions, err = ListSessions(c.h.FS); err != nil {
		return Session{}, err
	}
	sess, ok := findSession(sessions, t.IQN, t.Portal)
	if !ok {
		return Session{}, fmt.Errorf("iscsi login %s: logged in, but no session in /sys/class/iscsi_session", t)
	}
	if res.createdSession {
		c.dropDuplicateSessions(ctx, t, sess, sessions)
	}
	return sess, nil
}

// pathDevice scans the path's LUN on its session unless the kernel knows it
// already, waits for the disk and reads its address and WWID.
func (c *Connector) pathDevice(ctx context.Context, res *pathResult) error {
	t := res.target
	ch, tg := targetAddress(c.h.FS, res.session)
	addr := scsi.HCTL{Host: res.session.Host, Channel: ch, Target: tg, LUN: t.LUN}
	disks, err := c.scsi.Find(addr)
	if err != nil {
		return err
	}
	if len(disks) == 0 {
		if err := c.scsi.Scan(ctx, addr); err != nil {
			return fmt.Errorf("iscsi %s: %w", t, err)
		}
		res.scanned = true
	}
	disk, err := c.scsi.WaitForDevice(ctx, addr)
	if err != nil {
		return fmt.Errorf("iscsi %s: %w", t, err)
	}
	res.disk = disk
	if res.hctl, err = c.scsi.HCTLOf(disk); err != nil {
		return err
	}
	if res.id, err = c.scsi.Identify(disk, res.hctl); err != nil {
		return fmt.Errorf("iscsi %s: verify device %s: %w", t, disk, err)
	}
	res.wwid = res.id.WWID
	return nil
}

// dropDuplicateSessions logs out of every session to t but keep. It runs
// after this call's login to a target that had no session (under the
// target lock): any second session is a leak of racing logins.
func (c *Connector) dropDuplicateSessions(ctx context.Context, t Target, keep Session, sessions []Session) {
	for _, s := range sessions {
		if s.Target != t.IQN || s.Portal != t.Portal || s.ID == keep.ID {
			continue
		}
		c.log.Warn("iscsi: a second session to the target appeared with this login; logging it out", "target", t.String(), "session", s.ID, "kept", keep.ID)
		if err := c.adm.logoutSession(ctx, s.ID); err != nil {
			c.log.Warn("iscsi: could not log out the duplicate session", "target", t.String(), "session", s.ID, "err", err.Error())
		}
	}
}

// prepareRecords makes the node records of the targets without a session
// before any login starts: making one waits for logins holding the node
// database lock. Only portals that answer a first TCP probe get one; a
// record not made here is tried again, and its error reported, by
// attachPath.
func (c *Connector) prepareRecords(ctx context.Context, info *Info, targets []Target) []*pathResult {
	pre := make([]*pathResult, len(targets))
	sessions, _ := ListSessions(c.h.FS)
	answered := make([]bool, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		pre[i] = &pathResult{target: t, iface: info.Iface}
		if _, live := findSession(sessions, t.IQN, t.Portal); live {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			answered[i] = c.probe.once(ctx, t, info.Iface)
		}()
	}
	wg.Wait()
	for i, t := range targets {
		if !answered[i] {
			continue
		}
		created, err := c.nodes.prepare(ctx, info, t)
		pre[i].createdRecord = created
		if err != nil {
			c.log.Debug("iscsi: node record not made before the logins", "target", t.String(), "err", err.Error())
			continue
		}
		pre[i].recordReady = true
	}
	return pre
}

// undoPath takes back what a failed attachPath created: its device, its
// session if no other LUN uses it, its node record.
func (c *Connector) undoPath(ctx context.Context, res *pathResult) {
	if res == nil {
		return
	}
	if res.disk != "" && res.scanned {
		_ = c.scsi.DeleteAndWait(ctx, res.disk)
	}
	if res.createdSession {
		if sessions, err := ListSessions(c.h.FS); err == nil {
			if s, ok := findSession(sessions, res.target.IQN, res.target.Portal); ok {
				if disks, err := sessionDisks(c.h.FS, s); err == nil && len(disks) == 0 {
					if err := c.adm.logout(ctx, res.target.IQN, res.target.Portal, res.iface); err != nil {
						c.log.Warn("iscsi: undo login", "target", res.target.String(), "err", err.Error())
					}
				}
			}
		}
	}
	if res.createdRecord {
		if err := c.nodes.delete(ctx, res.target.IQN, res.target.Portal, res.iface); err != nil {
			c.log.Warn("iscsi: undo node record", "target", res.target.String(), "err", err.Error())
		}
	}
}

func (c *Connector) connectSingle(ctx context.Context, info *Info, targets []Target) (*connector.Device, error) {
	var errs []error
	// os-brick's order: the singular target first, then the others, until one works.
	for _, t := range targets {
		res, err := c.attachPath(ctx, info, &pathResult{target: t})
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		dev, err := c.singleDevice(ctx, info, res)
		if err != nil {
			c.undoPath(context.WithoutCancel(ctx), res)
			return nil, err
		}
		return dev, nil
	}
	return nil, fmt.Errorf("iscsi connect: no path came up: %w", errors.Join(errs...))
}

// singleDevice is the device of a volume attached over the one path res:
// its disk, or the map multipathd built over it on its own (Claimed).
func (c *Connector) singleDevice(ctx context.Context, info *Info, res *pathResult) (*connector.Device, error) {
	if res.wwid == "" {
		c.log.Warn("iscsi: LUN has no WWID (no VPD page 0x83); attached over one path, identified by "+res.id.String()+res.id.CheckNote(), "target", res.target.String(), "disk", res.disk)
	}
	dev := &connector.Device{
		Path:     scsi.DevPath(res.disk),
		Type:     connector.TypeBlock,
		Protocol: "iscsi",
		WWN:      res.wwid,
		Paths:    []string{scsi.DevPath(res.disk)},
		Extra:    targetExtra(info, res.target),
	}
	if res.wwid == "" && res.id.Serial != "" {
		dev.Extra[connector.ExtraUnitSerial] = res.id.Serial
	}
	mp, err := c.mp.Claimed(ctx, res.wwid, !info.ReadOnly, res.disk)
	if err != nil {
		return nil, fmt.Errorf("iscsi connect: %w", err)
	}
	if mp != nil {
		dev.OnMap(mp.DevPath(), mp.WWID, mp.ByIDPath(), mp.Name)
	}
	if info.ReadOnly {
		if err := c.setReadOnly(ctx, strings.TrimPrefix(dev.Path, "/dev/")); err != nil {
			return nil, err
		}
	}
	return dev, nil
}

func targetExtra(info *Info, t Target) map[string]string {
	e := map[string]string{
		ExtraTargetIQN:    t.IQN,
		ExtraTargetPortal: t.Portal.String(),
		ExtraTargetLUN:    strconv.Itoa(t.LUN),
	}
	if info.ReadOnly {
		e[ExtraReadOnly] = "true"
	}
	return e
}

func (c *Connector) setReadOnly(ctx context.Context, disk string) error {
	if _, err := c.h.Runner.Run(ctx, host.Command{Name: "blockdev", Args: []string{"--setro", scsi.DevPath(disk)}, Timeout: c.opts.CommandTimeout}); err != nil {
		return fmt.Errorf("iscsi: set %s read-only (access_mode ro): %w", disk, err)
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

// discoverPaths asks the one portal given for every portal of the target
// (SendTargets, with discovery CHAP when given). Discovery failing is no
// reason to fail: the given portal is still tried.
func (c *Connector) discoverPaths(ctx context.Context, info *Info) []Target {
	given := info.Targets[0]
	found, err := c.nodes.discover(ctx, given.Portal, info.Iface, info.DiscoveryAuth)
	if err != nil {
		c.log.Warn("iscsi: discovery failed; using the given portal only", "portal", given.Portal.String(), "err", err.Error())
		return info.Targets
	}
	out, skipped := followDiscovered(given, found)
	if len(skipped) > 0 {
		c.log.Warn("iscsi: discovered portals not followed", "portal", given.Portal.String(), "skipped", skipped)
	}
	c.log.Debug("iscsi: discovered portals", "count", len(out))
	return out
}

// maxDiscoveredPaths caps the paths one SendTargets answer adds: each login
// carries the session CHAP, so a target must not fan brick out at will.
const maxDiscoveredPaths = 16

// followDiscovered picks, from what SendTargets found, the other portals
// of the given target. It keeps only the given portal's address family
// (a target cannot steer logins from an IPv4 SAN onto another network
// family) and at most maxDiscoveredPaths paths; skipped names the rest.
func followDiscovered(given Target, found []DiscoveredTarget) (out []Target, skipped []string) {
	out = []Target{given}
	fam := addrFamily(given.Portal.Host)
	for _, d := range found {
		if d.IQN != given.IQN || d.Portal == given.Portal {
			continue
		}
		t := Target{Portal: d.Portal, IQN: d.IQN, LUN: given.LUN}
		switch {
		case containsTarget(out, t):
		case fam == "" || addrFamily(d.Portal.Host) != fam:
			skipped = append(skipped, d.Portal.String()+" (other address family)")
		case len(out) >= maxDiscoveredPaths:
			skipped = append(skipped, d.Portal.String()+" (over the cap)")
		default:
			out = append(out, t)
		}
	}
	return out, skipped
}

// addrFamily is "ipv4" or "ipv6" for an address, "" for anything else.
func addrFamily(host string) string {
	a, err := netip.ParseAddr(host)
	switch {
	case err != nil:
		return ""
	case a.Unmap().Is4():
		return "ipv4"
	default:
		return "ipv6"
	}
}

func containsTarget(list []Target, t Target) bool {
	for _, x := range list {
		if x == t {
			return true
		}
	}
	return false
}
