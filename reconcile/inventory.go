package reconcile

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/connector/nvmeof"
	"github.com/brick-storage/brick/connector/rbd"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/multipath"
	"github.com/brick-storage/brick/scsi"
)

// Inventory is the storage the kernel holds on this host, read from sysfs
// and the mount table: no command runs, so it is cheap to take.
type Inventory struct {
	Sessions []iscsi.Session
	Disks    []Disk
	DM       []multipath.DMDevice
	NVMe     []nvmeof.Controller
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

var sessionInPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`/session([0-9]{1,9})/`) })

// ReadInventory reads the host's storage objects. Objects that vanish
// while being read are skipped: the host is live.
func ReadInventory(h *host.Host) (*Inventory, error) {
	inv := &Inventory{}
	var err error
	if inv.Sessions, err = iscsi.ListSessions(h.FS); err != nil {
		return nil, err
	}
	disks, err := scsi.ListDisks(h.FS)
	if err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	for _, d := range disks {
		inv.Disks = append(inv.Disks, diskOf(d))
	}
	if inv.DM, err = multipath.NewMaps(h.FS).ListDM(); err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	if inv.NVMe, err = nvmeof.ListControllers(h.FS); err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	if inv.RBD, err = rbd.KernelMappings(h.FS); err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	if inv.Mounts, err = h.Sys.Mounts(); err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	return inv, nil
}

// diskOf is d with the iSCSI session its device path runs through.
func diskOf(d scsi.Disk) Disk {
	out := Disk{Name: d.Name, HCTL: d.HCTL, WWID: d.WWID, Session: -1}
	if m := sessionInPath().FindStringSubmatch(d.Device); m != nil {
		out.Session, _ = strconv.Atoi(m[1])
	}
	return out
}

type hostMount = host.Mount
