package rbd

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
)

// The kernel's view of the mappings, read without starting a process: each
// `rbd device list` costs seconds on a slow host, and the kernel holds the
// same facts.
//
// krbd: /sys/bus/rbd/devices/<dev-id>/ (Documentation/ABI/testing/
// sysfs-bus-rbd) has pool, name, current_snap ("-" for the image itself)
// and, since Linux 4.19, pool_ns ("" for the default namespace); the disk
// is rbd<dev-id>, as `rbd device list` reports it.
//
// nbd: /sys/block/nbdN/pid exists while a client serves the device; it
// names the rbd-nbd process, whose command line holds the image spec. This
// is how rbd-nbd's own list-mapped finds its mappings.

const (
	sysRBDDevices = "/sys/bus/rbd/devices"
	sysBlock      = "/sys/block"
	// maxAttr bounds what one sysfs attribute or command line may hold.
	maxAttr = 64 << 10
)

var (
	krbdIDRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{1,6}$`) })
	nbdNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^nbd[0-9]{1,6}$`) })
)

// KernelMappings lists krbd's mappings from sysfs. No rbd module means
// none. A device removed while it is read is skipped.
func KernelMappings(fsys host.FS) ([]Mapping, error) {
	entries, err := fsys.ReadDir(sysRBDDevices)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read krbd mappings: %w", err)
	}
	var out []Mapping
	for _, e := range entries {
		m, err := readKRBDDevice(fsys, e.Name())
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read krbd mappings: %w", err)
		}
		out = append(out, m)
	}
	return out, nil
}

// readKRBDDevice reads one /sys/bus/rbd/devices/<id>; pool_ns may be
// missing (kernels before 4.19 have no namespaces).
func readKRBDDevice(fsys host.FS, id string) (Mapping, error) {
	if !krbdIDRE().MatchString(id) {
		return Mapping{}, fmt.Errorf("krbd device id %q is not a number", ident.Clip(id, 16))
	}
	attr := map[string]string{}
	for _, name := range []string{"pool", "pool_ns", "name", "current_snap"} {
		b, err := fsys.ReadFile(path.Join(sysRBDDevices, id, name))
		if errors.Is(err, fs.ErrNotExist) && name == "pool_ns" {
			continue
		}
		if err != nil {
			return Mapping{}, err
		}
		attr[name] = string(b)
	}
	return parseKRBDDevice(id, attr)
}

// parseKRBDDevice builds a Mapping from one device's attributes (values as
// read, with their newline).
func parseKRBDDevice(id string, attr map[string]string) (Mapping, error) {
	if !krbdIDRE().MatchString(id) {
		return Mapping{}, fmt.Errorf("krbd device id %q is not a number", ident.Clip(id, 16))
	}
	m := Mapping{ID: id, Device: "/dev/rbd" + id}
	for _, f := range []struct {
		key string
		dst *string
		opt bool
	}{{"pool", &m.Pool, false}, {"pool_ns", &m.Namespace, true}, {"name", &m.Image, false}, {"current_snap", &m.Snap, false}} {
		v, ok := attr[f.key]
		if !ok && !f.opt {
			return Mapping{}, fmt.Errorf("krbd device %s: no %s", id, f.key)
		}
		if len(v) > maxAttr || strings.ContainsAny(strings.TrimSuffix(v, "\n"), "\n\x00") {
			return Mapping{}, fmt.Errorf("krbd device %s: unreadable %s", id, f.key)
		}
		*f.dst = strings.TrimSuffix(v, "\n")
	}
	if m.Pool == "" || m.Image == "" || m.Snap == "" {
		return Mapping{}, fmt.Errorf("krbd device %s: empty pool, name or current_snap", id)
	}
	return m, nil
}

// nbdScan is what sysfs and /proc tell about nbd: the mappings whose
// rbd-nbd command line was read, and the served devices whose client could
// not be told (see nbdState).
type nbdScan struct {
	Mappings []Mapping
	Unknown  []string
}

// nbdState is what serves one nbd device.
type nbdState int

const (
	nbdFree       nbdState = iota // nothing serves it
	nbdRBD                        // rbd-nbd, with a command line brick read
	nbdOther                      // another client (qemu-nbd, nbd-client)
	nbdGone                       // its pid names no process (stale, or a re-attach pending)
	nbdUnreadable                 // rbd-nbd with arguments brick does not know
)

// readNBD lists the served nbd devices and reads each one's rbd-nbd
// command line. No nbd module means none.
func readNBD(fsys host.FS) (nbdScan, error) {
	var scan nbdScan
	entries, err := fsys.ReadDir(sysBlock)
	if errors.Is(err, fs.ErrNotExist) {
		return scan, nil
	}
	if err != nil {
		return scan, fmt.Errorf("read nbd mappings: %w", err)
	}
	for _, e := range entries {
		if !nbdNameRE().MatchString(e.Name()) {
			continue
		}
		switch m, state := readNBDDevice(fsys, e.Name()); state {
		case nbdRBD:
			scan.Mappings = append(scan.Mappings, m)
		case nbdGone, nbdUnreadable:
			scan.Unknown = append(scan.Unknown, "/dev/"+e.Name())
		}
	}
	return scan, nil
}

// readNBDDevice reads /sys/block/<name>/pid and that process's command
// line. Like rbd-nbd's list-mapped, it goes by argv[0], not comm: the pid
// is the task that started the device, which may be a thread.
func readNBDDevice(fsys host.FS, name string) (Mapping, nbdState) {
	pidText, err := fsys.ReadString(path.Join(sysBlock, name, "pid"))
	if errors.Is(err, fs.ErrNotExist) {
		return Mapping{}, nbdFree
	}
	pid, perr := strconv.Atoi(pidText)
	if err != nil || perr != nil || pid <= 0 {
		return Mapping{}, nbdGone
	}
	cmdline, err := fsys.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	argv0, _, _ := bytes.Cut(cmdline, []byte{0})
	switch {
	case err != nil || len(argv0) == 0:
		return Mapping{}, nbdGone // no such process, or a zombie
	case path.Base(string(argv0)) != "rbd-nbd":
		return Mapping{}, nbdOther
	}
	m, ok := parseNBDCmdline(cmdline)
	if !ok {
		return Mapping{}, nbdUnreadable
	}
	m.ID, m.Device = strconv.Itoa(pid), "/dev/"+name
	return m, nbdRBD
}
