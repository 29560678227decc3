package nvmeof

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/md"
)

// Options configure the connector; every zero field takes its default.
type Options struct {
	// PortalTimeout bounds each portal: the TCP probe and the kernel's
	// connect together (default 10s). Portals run in parallel.
	PortalTimeout time.Duration
	// DeviceTimeout bounds the wait for the namespace's block device after
	// the controllers are up (default 30s).
	DeviceTimeout time.Duration
	// DeleteTimeout bounds the wait for deleted controllers to go (default 30s).
	DeleteTimeout time.Duration
	// FlushTimeout bounds the flush before a disconnect (default 30s): a
	// namespace whose paths are all dead must not hang the detach.
	FlushTimeout time.Duration
	// SettleTimeout bounds an extend's wait for the rescan to change the
	// size when the new size is not known (default 3s): a size unchanged
	// by then means the namespace was already at its size.
	SettleTimeout time.Duration
	// StateDir holds the record of the namespaces attached per subsystem
	// (default DefaultStateDir).
	StateDir string
	// LegIOFailTimeout is fast_io_fail_tmo of a replicated volume's legs
	// (default 5s): I/O to a leg whose target vanished fails after it,
	// so md fails the leg and goes on with the others instead of
	// queueing writes until the kernel gives the controller up.
	LegIOFailTimeout time.Duration
	// MD tunes mdadm for replicated volumes.
	MD md.Options
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.PortalTimeout, 10*time.Second)
	def(&o.DeviceTimeout, 30*time.Second)
	def(&o.DeleteTimeout, 30*time.Second)
	def(&o.FlushTimeout, 30*time.Second)
	def(&o.SettleTimeout, 3*time.Second)
	def(&o.LegIOFailTimeout, 5*time.Second)
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir
	}
	return o
}

// fabrics creates controllers; the kernel's /dev/nvme-fabrics in
// production, a fake that builds a sysfs fixture in tests.
type fabrics interface {
	// Connect asks for a controller with the kernel's option string and
	// returns its name (nvme3).
	Connect(ctx context.Context, options string) (string, error)
	// Delete deletes controller name (nvme3); one already gone is not an error.
	Delete(name string) error
}

// What the connector offers, checked at compile time.
var (
	_ connector.Connector  = (*Connector)(nil)
	_ connector.Extender   = (*Connector)(nil)
	_ connector.Planner    = (*Connector)(nil)
	_ connector.HostFacter = (*Connector)(nil)
)

// Connector attaches and detaches NVMe-oF namespaces on one host.
type Connector struct {
	h     *host.Host
	opts  Options
	fab   fabrics
	md    *md.MD
	state states
}

// New returns a connector using h.
func New(h *host.Host, opts Options) *Connector {
	o := opts.withDefaults()
	return &Connector{h: h, opts: o, fab: devFabrics{fsys: h.FS}, md: md.New(h, o.MD), state: states{fs: h.FS, dir: o.StateDir}}
}

// Extra keys of the Device this connector returns.
const (
	ExtraNQN         = "nqn"
	ExtraControllers = "controllers"
	ExtraWWID        = "wwid"
	ExtraNSID        = "nsid"
	ExtraReadOnly    = "read_only"
)

// ErrNoPortal marks a connect where no portal gave a controller.
var ErrNoPortal = errors.New("no portal connected")

// lockName serialises brick processes working on one subsystem, so a
// detach deleting its controllers never races an attach reusing them.
func lockName(nqn string) string {
	sum := sha256.Sum256([]byte(nqn))
	return "nvmeof-" + hex.EncodeToString(sum[:8])
}

// Connect makes (or reuses) one controller per portal, proceeds when at
// least one is up, and returns the namespace's device: the native
// multipath head when nvme_core runs with multipath on. A replicated
// volume's legs are connected alike and mirrored by an md RAID1.
func (c *Connector) Connect(ctx context.Context, info connector.ConnectionInfo) (*connector.Device, error) {
	req, err := c.parseRequest(info)
	if err != nil {
		return nil, err
	}
	if req.Replicated {
		return replicated{c, req}.connect(ctx)
	}
	return c.connectTarget(ctx, req.Legs[0], "")
}

// connectTarget attaches one target's namespace under its subsystem's
// lock and records it; extra is appended to each new controller's options.
func (c *Connector) connectTarget(ctx context.Context, v Volume, extra string) (*connector.Device, error) {
	hostNQN, hostID, err := c.hostIdentity(v)
	if err != nil {
		return nil, fmt.Errorf("nvmeof connect %s: %w", v.NQN, err)
	}
	unlock, err := c.h.Locks.Lock(ctx, lockName(v.NQN))
	if err != nil {
		return nil, fmt.Errorf("nvmeof connect %s: %w", v.NQN, err)
	}
	defer unlock()

	ctrls, created, err := c.connectPortals(ctx, v, hostNQN, hostID, extra)
	if err != nil {
		return nil, err
	}
	dev, err := c.waitDevice(ctx, v)
	if err != nil {
		c.undoControllers(v, created)
		return nil, err
	}
	if err := c.state.record(v.NQN, nsKey(readNS(c.h.FS, path.Base(dev.Path))), true); err != nil {
		return nil, fmt.Errorf("nvmeof connect %s: %w", v.NQN, err)
	}
	sort.Strings(ctrls)
	dev.Extra[ExtraControllers] = strings.Join(ctrls, ",")
	if v.ReadOnly {
		if err := c.h.Block.SetReadOnly(dev.Path); err != nil {
			return nil, fmt.Errorf("nvmeof connect %s: %w", v.NQN, err)
		}
		dev.Extra[ExtraReadOnly] = "true"
	}
	return dev, nil
}

// undoControllers deletes the controllers a failed connect created,
// unless another namespace of the subsystem needs them.
func (c *Connector) undoControllers(v Volume, created []string) {
	if len(created) == 0 {
		return
	}
	st, err := c.state.read(v.NQN)
	if err != nil || len(st.Namespaces) > 0 {
		return
	}
	for _, name := range created {
		if err := c.fab.Delete(name); err != nil {
			c.h.Log.Warn("nvmeof: delete a controller of a failed connect", "controller", name, "err", err)
		}
	}
}

// waitDevice waits for the namespace's block device and its /dev node.
func (c *Connector) waitDevice(ctx context.Context, v Volume) (*connector.Device, error) {
	wctx, cancel := context.WithTimeout(ctx, c.opts.DeviceTimeout)
	defer cancel()
	var name string
	err := c.h.FS.WaitFor(wctx, []string{"/dev"}, host.Backoff{}, func() (bool, error) {
		ctrls, err := controllers(c.h.FS, v.NQN)
		if err != nil {
			return false, err
		}
		name, _, err = findNamespace(c.h.FS, v, ctrls)
		return err == nil && name != "" && c.h.FS.Exists("/dev/"+name), err
	})
	if err != nil {
		return nil, fmt.Errorf("nvmeof connect %s: namespace %s: %w", v.NQN, v.idString(), err)
	}
	return c.device(v, name), nil
}

func (c *Connector) device(v Volume, name string) *connector.Device {
	id := readNS(c.h.FS, name)
	return &connector.Device{
		Path:     "/dev/" + name,
		Type:     connector.TypeBlock,
		Protocol: Protocol,
		Extra:    map[string]string{ExtraNQN: v.NQN, ExtraNSID: id.NSID, ExtraWWID: id.WWID},
	}
}

// idString names the identifier the namespace is looked up by.
func (v Volume) idString() string {
	switch {
	case v.UUID != "":
		return "uuid " + v.UUID
	case v.NGUID != "":
		return "nguid " + v.NGUID
	case v.NSID != 0:
		return fmt.Sprintf("nsid %d", v.NSID)
	}
	return "(the subsystem's only one)"
}

// DevicePaths returns the namespace's device when it is present.
func (c *Connector) DevicePaths(ctx context.Context, info connector.ConnectionInfo) ([]string, error) {
	req, err := c.parseRequest(info)
	if err != nil {
		return nil, err
	}
	if req.Replicated {
		return replicated{c, req}.paths()
	}
	v := req.Legs[0]
	ctrls, err := controllers(c.h.FS, v.NQN)
	if err != nil {
		return nil, fmt.Errorf("nvmeof %s: %w", v.NQN, err)
	}
	name, _, err := findNamespace(c.h.FS, v, ctrls)
	if err != nil || name == "" {
		return nil, err
	}
	return []string{"/dev/" + name}, nil
}

// devFabrics talks to the kernel's fabrics control device.
type devFabrics struct{ fsys host.FS }

const fabricsDev = "/dev/nvme-fabrics"

func (d devFabrics) Connect(ctx context.Context, options string) (string, error) {
	type answer struct {
		name string
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		reply, err := d.fsys.WriteRead(fabricsDev, []byte(options))
		if err != nil {
			done <- answer{err: err}
			return
		}
		name, err := parseReply(reply)
		done <- answer{name, err}
	}()
	select {
	case a := <-done:
		return a.name, a.err
	case <-ctx.Done():
		// The kernel cannot be interrupted: a controller it makes after
		// the deadline is deleted as soon as it is known.
		go func() {
			if a := <-done; a.err == nil {
				_ = d.Delete(a.name)
			}
		}()
		return "", ctx.Err()
	}
}

// Delete writes the controller's delete_controller attribute, which
// returns once the kernel has torn it down.
func (d devFabrics) Delete(name string) error {
	err := d.fsys.WriteFile(path.Join(classNVMe, name, "delete_controller"), []byte("1"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// parseReply reads "instance=3,cntlid=1" into "nvme3".
func parseReply(reply []byte) (string, error) {
	for _, kv := range strings.Split(strings.TrimSpace(string(reply)), ",") {
		if k, val, _ := strings.Cut(kv, "="); k == "instance" {
			name := "nvme" + val
			if ctrlRE().MatchString(name) {
				return name, nil
			}
		}
	}
	return "", fmt.Errorf("unexpected reply from %s: %s", fabricsDev, connector.Quote(string(reply)))
}
