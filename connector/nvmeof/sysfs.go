package nvmeof

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/brick-storage/brick/host"
)

// sysfs places this package reads.
const (
	classNVMe      = "/sys/class/nvme"
	classSubsystem = "/sys/class/nvme-subsystem"
	sysBlock       = "/sys/block"
)

var (
	ctrlRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^nvme[0-9]{1,6}$`) })
	// nsRE matches a head (nvme1n2) or a namespace of a controller without
	// native multipath; per-path nodes (nvme1c2n3) do not match.
	nsRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^nvme[0-9]{1,6}n[0-9]{1,10}$`) })
)

// Controller is one NVMe controller as /sys/class/nvme shows it.
type Controller struct {
	Name      string // nvme3
	NQN       string
	Transport string
	Address   string // traddr
	Port      string // trsvcid
	State     string
}

// readController reads /sys/class/nvme/<name>; ok is false when it is gone
// or is not a fabrics controller brick can describe.
func readController(fsys host.FS, name string) (Controller, bool) {
	dir := path.Join(classNVMe, name)
	c := Controller{Name: name}
	var err error
	if c.NQN, err = fsys.ReadString(dir + "/subsysnqn"); err != nil {
		return c, false
	}
	c.Transport, _ = fsys.ReadString(dir + "/transport")
	c.State, _ = fsys.ReadString(dir + "/state")
	addr, _ := fsys.ReadString(dir + "/address")
	for _, kv := range strings.Split(addr, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		switch k {
		case "traddr":
			c.Address = v
		case "trsvcid":
			c.Port = v
		}
	}
	return c, true
}

// ListControllers lists the host's NVMe controllers, fabrics and local,
// sorted by name; one that vanishes while being read is left out.
func ListControllers(fsys host.FS) ([]Controller, error) {
	read := func(name string) (Controller, bool) { return readController(fsys, name) }
	return host.ReadEntries(fsys, classNVMe, ctrlRE().MatchString, read)
}

// controllers lists the controllers of subsystem nqn, sorted by name.
func controllers(fsys host.FS, nqn string) ([]Controller, error) {
	all, err := ListControllers(fsys)
	var out []Controller
	for _, c := range all {
		if c.NQN == nqn {
			out = append(out, c)
		}
	}
	return out, err
}

// matches reports whether c is a controller for portal p.
func (c Controller) matches(p Portal) bool {
	return c.Transport == p.Transport && c.Address == p.Address && c.Port == portString(p.Port) && c.State != "deleting" && c.State != "dead"
}

// namespaces lists the block devices of subsystem nqn: the heads in its
// nvme-subsystem directory (native multipath), else the namespaces under
// each of its controllers.
func namespaces(fsys host.FS, nqn string, ctrls []Controller) []string {
	seen := map[string]bool{}
	var out []string
	add := func(dir string) {
		entries, err := fsys.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if nsRE().MatchString(e.Name()) && !seen[e.Name()] {
				seen[e.Name()] = true
				out = append(out, e.Name())
			}
		}
	}
	if sub, ok := subsystemDir(fsys, nqn); ok {
		add(sub)
	}
	for _, c := range ctrls {
		add(path.Join(classNVMe, c.Name))
	}
	sort.Strings(out)
	return out
}

// subsystemDir finds /sys/class/nvme-subsystem/nvme-subsysN for nqn.
func subsystemDir(fsys host.FS, nqn string) (string, bool) {
	entries, err := fsys.ReadDir(classSubsystem)
	if err != nil {
		return "", false
	}
	for _, e := range entries {
		dir := path.Join(classSubsystem, e.Name())
		if got, err := fsys.ReadString(dir + "/subsysnqn"); err == nil && got == nqn {
			return dir, true
		}
	}
	return "", false
}

// nsIDs are what sysfs says about one namespace block device.
type nsIDs struct {
	UUID, NGUID, WWID string
	NSID              string
}

func readNS(fsys host.FS, name string) nsIDs {
	dir := path.Join(sysBlock, name)
	var id nsIDs
	if s, err := fsys.ReadString(dir + "/uuid"); err == nil {
		id.UUID = strings.ToLower(s)
	}
	if s, err := fsys.ReadString(dir + "/nguid"); err == nil {
		id.NGUID, _ = ParseNGUID(s)
	}
	id.NSID, _ = fsys.ReadString(dir + "/nsid")
	id.WWID, _ = fsys.ReadString(dir + "/wwid")
	return id
}

// zeroNGUID is what sysfs shows for a namespace without an NGUID.
const zeroNGUID = "00000000000000000000000000000000"

// identifies reports whether the namespace is the volume's, by the first
// identifier the volume carries: UUID, then NGUID, then NSID. A vol_uuid
// sent as 32 hex digits also matches the namespace's NGUID.
func (v Volume) identifies(id nsIDs) bool {
	switch {
	case v.UUID != "":
		return id.UUID == v.UUID || v.UUIDHex && id.NGUID == strings.ReplaceAll(v.UUID, "-", "")
	case v.NGUID != "":
		return id.NGUID == v.NGUID && id.NGUID != zeroNGUID
	default:
		return id.NSID == strconv.FormatInt(v.NSID, 10)
	}
}

// ErrAmbiguousNamespace marks connection info that names no namespace for
// a subsystem that shows several: brick will not guess which is the volume.
var ErrAmbiguousNamespace = errors.New("the connection info names no namespace (no vol_uuid, volume_nguid or ns_id) and the subsystem has several")

// findNamespace returns the volume's block device name among the
// subsystem's namespaces, and the names of the others. Info without an ID
// takes the subsystem's only namespace, and is refused when it has several.
func findNamespace(fsys host.FS, v Volume, ctrls []Controller) (mine string, others []string, err error) {
	all := namespaces(fsys, v.NQN, ctrls)
	if !v.hasID() {
		if len(all) > 1 {
			return "", nil, fmt.Errorf("%w (%s): ask the driver's vendor for ns_id or vol_uuid", ErrAmbiguousNamespace, strings.Join(all, ", "))
		}
		if len(all) == 1 {
			mine = all[0]
		}
		return mine, nil, nil
	}
	for _, name := range all {
		switch {
		case !v.identifies(readNS(fsys, name)):
			others = append(others, name)
		case mine == "":
			mine = name
		}
	}
	return mine, others, nil
}
