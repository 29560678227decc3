package reconcile

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/connector/rbd"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/scsi"
)

// Inventory is the storage the kernel holds on this host, read from sysfs
// and the mount table: no command runs, so it is cheap to take.
type Inventory struct {
	Sessions []iscsi.Session
	Disks    []Disk
	DM       []DMDevice
	NVMe     []NVMeController
	RBD      []rbd.Mapping // krbd only: rbd-nbd devices are plain nbd disks here
	Mounts   []host.Mount
}

// NFS returns the NFS mounts.
func (inv *Inventory) NFS() []host.Mount {
	var out []host.Mount
	for _, m := range inv.Mounts {
		if m.FSType == "nfs" || m.FSType == "nfs4" {
			out = append(out, m)
		}
	}
	return out
}

// Disk is a SCSI disk; Session is the iSCSI session it sits on (-1: none,
// e.g. a local or FC disk).
type Disk struct {
	Name    string    `json:"name"`
	HCTL    scsi.HCTL `json:"-"`
	WWID    string    `json:"wwid,omitempty"`
	Session int       `json:"session"`
}

// DMDevice is a device-mapper device: a multipath map (UUID "mpath-...")
// or a dm-crypt mapping ("CRYPT-...") among others.
type DMDevice struct {
	Name   string   `json:"name"`    // dm-N
	DMName string   `json:"dm_name"` // /dev/mapper/<DMName>
	UUID   string   `json:"uuid"`
	Slaves []string `json:"slaves"`
}

// Multipath reports whether d is a multipath map, and its WWID.
func (d DMDevice) Multipath() (string, bool) {
	id, ok := strings.CutPrefix(d.UUID, "mpath-")
	return id, ok
}

// Crypt reports whether d is a dm-crypt mapping.
func (d DMDevice) Crypt() bool { return strings.HasPrefix(d.UUID, "CRYPT-") }

// NVMeController is an NVMe-oF controller.
type NVMeController struct {
	Name      string `json:"name"`
	SubsysNQN string `json:"subsysnqn"`
	Address   string `json:"address"`
}

var (
	sessionInPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`/session([0-9]{1,9})/`) })
	sdName        = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sd[a-z]{1,4}$`) })
	dmName        = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^dm-[0-9]{1,6}$`) })
	nvmeCtrlName  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^nvme[0-9]{1,6}$`) })
)

// ReadInventory reads the host's storage objects. Objects that vanish
// while being read are skipped: the host is live.
func ReadInventory(h *host.Host) (*Inventory, error) {
	inv := &Inventory{}
	var err error
	if inv.Sessions, err = iscsi.ListSessions(h.FS); err != nil {
		return nil, err
	}
	blocks, err := readDirNames(h.FS, "/sys/block")
	if err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	for _, b := range blocks {
		switch {
		case sdName().MatchString(b):
			if d, ok := readDisk(h.FS, b); ok {
				inv.Disks = append(inv.Disks, d)
			}
		case dmName().MatchString(b):
			if d, ok := readDM(h.FS, b); ok {
				inv.DM = append(inv.DM, d)
			}
		}
	}
	inv.NVMe = readNVMe(h.FS)
	if inv.RBD, err = rbd.KernelMappings(h.FS); err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	if inv.Mounts, err = h.Sys.Mounts(); err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	return inv, nil
}

// readDirNames lists a directory; a missing one is empty.
func readDirNames(fsys host.FS, dir string) ([]string, error) {
	entries, err := fsys.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out, nil
}

// readDisk reads sdX: its address, the session it is on, its WWID.
func readDisk(fsys host.FS, name string) (Disk, bool) {
	real, err := fsys.EvalSymlinks("/sys/block/" + name + "/device")
	if err != nil {
		return Disk{}, false
	}
	addr, err := scsi.ParseHCTL(path.Base(real))
	if err != nil {
		return Disk{}, false
	}
	d := Disk{Name: name, HCTL: addr, Session: -1}
	if m := sessionInPath().FindStringSubmatch(real); m != nil {
		d.Session, _ = strconv.Atoi(m[1])
	}
	if raw, err := fsys.ReadString("/sys/block/" + name + "/device/wwid"); err == nil {
		if id, ok := scsi.ParseSysfsWWID(raw); ok {
			d.WWID = id
		}
	}
	return d, true
}

func readDM(fsys host.FS, name string) (DMDevice, bool) {
	base := "/sys/block/" + name
	uuid, err := fsys.ReadString(base + "/dm/uuid")
	if err != nil {
		return DMDevice{}, false
	}
	dmn, _ := fsys.ReadString(base + "/dm/name")
	slaves, _ := readDirNames(fsys, base+"/slaves")
	return DMDevice{Name: name, DMName: strings.TrimSpace(dmn), UUID: strings.TrimSpace(uuid), Slaves: slaves}, true
}

func readNVMe(fsys host.FS) []NVMeController {
	names, _ := readDirNames(fsys, "/sys/class/nvme")
	var out []NVMeController
	for _, n := range names {
		if !nvmeCtrlName().MatchString(n) {
			continue
		}
		nqn, err := fsys.ReadString("/sys/class/nvme/" + n + "/subsysnqn")
		if err != nil {
			continue
		}
		addr, _ := fsys.ReadString("/sys/class/nvme/" + n + "/address")
		out = append(out, NVMeController{Name: n, SubsysNQN: strings.TrimSpace(nqn), Address: strings.TrimSpace(addr)})
	}
	return out
}

type hostMount = host.Mount
