// Package md runs Linux software RAID (md) arrays through mdadm: create a
// RAID1 over given devices, assemble it again (degraded when a member is
// missing), re-add a member that came back, grow it, stop it, and read
// what sysfs says about it. brick mirrors replicated NVMe volumes (KIOXIA
// KumoScale) this way.
//
//	m := md.New(h, md.Options{})
//	err := m.Create(ctx, "vol1", []string{"/dev/nvme1n1", "/dev/nvme2n1"}, false)
//	a, ok, err := m.Find("vol1", nil) // a.Device == "md127"
package md

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brick-storage/brick/host"
)

// Options tune mdadm; zero fields take their defaults.
type Options struct {
	// CommandTimeout bounds each mdadm command (default 60s: a create
	// writes a superblock and a bitmap on every member).
	CommandTimeout time.Duration
	// DeviceTimeout bounds the wait for /dev/md/<name> after an assemble
	// or a create (default 30s).
	DeviceTimeout time.Duration
}

// MD runs mdadm through a host.
type MD struct {
	h    *host.Host
	opts Options
}

// New returns an MD working through h.
func New(h *host.Host, o Options) *MD {
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = time.Minute
	}
	if o.DeviceTimeout <= 0 {
		o.DeviceTimeout = 30 * time.Second
	}
	return &MD{h: h, opts: o}
}

// nameRE is an array name brick creates: mdadm keeps 32 bytes of it, and
// it is a file name under /dev/md.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,31}$`) })

// ValidName reports whether name can name an array.
func ValidName(name string) bool { return nameRE().MatchString(name) }

// Path is the array's stable path, /dev/md/<name>.
func Path(name string) string { return "/dev/md/" + name }

func (m *MD) run(ctx context.Context, args ...string) (host.Result, error) {
	return m.h.Runner.Run(ctx, host.Command{Name: "mdadm", Args: args, Timeout: m.opts.CommandTimeout})
}

// Create makes a RAID1 named name over devs, all present and blank or in
// sync (--assume-clean: new volumes of a replicating array hold the same
// bytes), with an internal bitmap (a member that comes back resyncs only
// what changed) and failfast members (a dead leg fails at once instead
// of stalling writes). It waits for /dev/md/<name>.
func (m *MD) Create(ctx context.Context, name string, devs []string, readOnly bool) error {
	if !ValidName(name) {
		return fmt.Errorf("md create: invalid array name %q", name)
	}
	args := []string{"--create", Path(name), "--run", "--level=1", "--metadata=1.2",
		"--raid-devices=" + strconv.Itoa(len(devs)), "--bitmap=internal", "--homehost=any",
		"--name=" + name, "--failfast", "--assume-clean"}
	if readOnly {
		args = append(args, "--readonly")
	}
	if err := m.dropStaleLink(name); err != nil {
		return fmt.Errorf("md create %s: %w", name, err)
	}
	if _, err := m.run(ctx, append(args, devs...)...); err != nil {
		return fmt.Errorf("md create %s over %s: %w", name, strings.Join(devs, " "), err)
	}
	return m.waitPath(ctx, name)
}

// Assemble starts array name from whichever of devs carry its superblock,
// degraded when one is missing (--run).
func (m *MD) Assemble(ctx context.Context, name string, devs []string, readOnly bool) error {
	args := []string{"--assemble", Path(name), "--run"}
	if readOnly {
		args = append(args, "--readonly")
	}
	if err := m.dropStaleLink(name); err != nil {
		return fmt.Errorf("md assemble %s: %w", name, err)
	}
	if _, err := m.run(ctx, append(args, devs...)...); err != nil {
		return fmt.Errorf("md assemble %s from %s: %w", name, strings.Join(devs, " "), err)
	}
	return m.waitPath(ctx, name)
}

// ReAdd puts dev back into array name: --re-add (the bitmap resyncs what
// changed while it was away), else --add (a full resync).
func (m *MD) ReAdd(ctx context.Context, name, dev string) error {
	_, err := m.run(ctx, "--manage", Path(name), "--re-add", dev)
	if err == nil {
		return nil
	}
	if _, err2 := m.run(ctx, "--manage", Path(name), "--add", dev); err2 != nil {
		return fmt.Errorf("md %s: add %s back: %w", name, dev, errors.Join(err, err2))
	}
	return nil
}

// Grow grows array name to its smallest member's size.
func (m *MD) Grow(ctx context.Context, name string) error {
	if _, err := m.run(ctx, "--grow", Path(name), "--size=max"); err != nil {
		return fmt.Errorf("md grow %s: %w", name, err)
	}
	return nil
}

// Stop stops array device (md127 or a path); one already gone is success.
func (m *MD) Stop(ctx context.Context, device string) error {
	if !strings.HasPrefix(device, "/") {
		device = "/dev/" + device
	}
	if !m.h.FS.Exists(device) {
		return nil
	}
	if _, err := m.run(ctx, "--stop", device); err != nil {
		return fmt.Errorf("md stop %s: %w", device, err)
	}
	return m.dropLinksTo(path.Base(device))
}

// dropLinksTo removes the /dev/md links to a stopped array: without udev
// nobody else does, and a later assemble would follow a stale one.
func (m *MD) dropLinksTo(device string) error {
	entries, _ := m.h.FS.ReadDir(linkDir)
	for _, e := range entries {
		if target, err := m.h.FS.Readlink(linkDir + "/" + e.Name()); err == nil && path.Base(target) == device {
			if err := m.h.FS.Remove(linkDir + "/" + e.Name()); err != nil {
				return fmt.Errorf("md: remove the stale link %s: %w", linkDir+"/"+e.Name(), err)
			}
		}
	}
	return nil
}

// dropStaleLink removes /dev/md/<name> when it names no running array.
func (m *MD) dropStaleLink(name string) error {
	target, err := m.h.FS.Readlink(Path(name))
	if err != nil || m.h.FS.Exists("/sys/block/"+path.Base(target)+"/md/array_state") {
		return nil
	}
	return m.h.FS.Remove(Path(name))
}

const linkDir = "/dev/md"

// waitPath waits for /dev/md/<name> (mdadm or udev makes it).
func (m *MD) waitPath(ctx context.Context, name string) error {
	wctx, cancel := context.WithTimeout(ctx, m.opts.DeviceTimeout)
	defer cancel()
	err := m.h.FS.WaitFor(wctx, []string{"/dev/md"}, host.Backoff{}, func() (bool, error) {
		return m.h.FS.Exists(Path(name)), nil
	})
	if err != nil {
		return fmt.Errorf("md %s: %s did not appear: %w", name, Path(name), err)
	}
	return nil
}

// Examine reads dev's md superblock: ok is false when it has none.
func (m *MD) Examine(ctx context.Context, dev string) (Superblock, bool, error) {
	res, err := m.run(ctx, "--examine", "--export", dev)
	if err != nil {
		var ee *host.ExitError
		if errors.As(err, &ee) && strings.Contains(string(ee.Stderr), "No md superblock") {
			return Superblock{}, false, nil
		}
		return Superblock{}, false, fmt.Errorf("md examine %s: %w", dev, err)
	}
	sb := ParseExport(string(res.Stdout))
	return sb, sb.UUID != "", nil
}

// Superblock is what mdadm --examine --export says about a member.
type Superblock struct {
	UUID   string // MD_UUID: the array's
	Name   string // MD_NAME, without a homehost prefix
	Level  string // MD_LEVEL
	Events int64  // MD_EVENTS
}

// ParseExport reads mdadm's KEY=VALUE --export lines; unknown keys and
// malformed lines are skipped.
func ParseExport(out string) Superblock {
	var sb Superblock
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		switch k {
		case "MD_UUID":
			sb.UUID = v
		case "MD_NAME":
			_, sb.Name, _ = strings.Cut(v, ":")
			if !strings.Contains(v, ":") {
				sb.Name = v
			}
		case "MD_LEVEL":
			sb.Level = v
		case "MD_EVENTS":
			sb.Events, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return sb
}

// Array is a running (or inactive) md array as sysfs shows it.
type Array struct {
	Device  string   // md127
	State   string   // array_state: clean, active, inactive, ...
	Members []string // component devices (nvme1n1), sorted
	// InSync are the members whose state says in_sync.
	InSync   []string
	Degraded int // missing or failed members
}

// Find returns array name: the one /dev/md/<name> points at, else the
// array holding any of members (an array udev assembled on its own under
// another name). ok is false when there is none.
func (m *MD) Find(name string, members []string) (Array, bool, error) {
	if target, err := m.h.FS.EvalSymlinks(Path(name)); err == nil && strings.HasPrefix(path.Base(target), "md") {
		if a, err := m.Read(path.Base(target)); err == nil {
			return a, true, nil
		}
	}
	for _, dev := range members {
		holders, _ := m.h.FS.ReadDir("/sys/block/" + path.Base(dev) + "/holders")
		for _, hd := range holders {
			if strings.HasPrefix(hd.Name(), "md") {
				a, err := m.Read(hd.Name())
				return a, err == nil, err
			}
		}
	}
	return Array{}, false, nil
}

// Read reads array device (md127) from sysfs.
func (m *MD) Read(device string) (Array, error) {
	dir := "/sys/block/" + device + "/md"
	a := Array{Device: device}
	var err error
	if a.State, err = m.h.FS.ReadString(dir + "/array_state"); err != nil {
		return a, fmt.Errorf("md %s: %w", device, err)
	}
	if s, err := m.h.FS.ReadString(dir + "/degraded"); err == nil {
		a.Degraded, _ = strconv.Atoi(s)
	}
	slaves, _ := m.h.FS.ReadDir("/sys/block/" + device + "/slaves")
	for _, s := range slaves {
		a.Members = append(a.Members, s.Name())
		st, _ := m.h.FS.ReadString(dir + "/dev-" + s.Name() + "/state")
		if strings.Contains(st, "in_sync") {
			a.InSync = append(a.InSync, s.Name())
		}
	}
	return a, nil
}
