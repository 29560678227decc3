package scsi

import (
	"fmt"
	"path"
	"regexp"
	"sync"

	"github.com/brick-storage/brick/host"
)

// Disk is a SCSI disk as sysfs shows it.
type Disk struct {
	Name string // sdb
	HCTL HCTL
	// WWID is the kernel's wwid attribute in scsi_id's form, "" when it
	// has none brick can read.
	WWID string
	// Device is the disk's device path in sysfs, through its transport
	// (".../session3/target2:0:0/2:0:0:1" for iSCSI).
	Device string
}

var sdNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sd[a-z]{1,4}$`) })

// ListDisks lists the host's SCSI disks (sd*) in name order; one that goes
// while being read is left out.
func ListDisks(fsys host.FS) ([]Disk, error) {
	read := func(name string) (Disk, bool) { return readDisk(fsys, name) }
	disks, err := host.ReadEntries(fsys, "/sys/block", sdNameRE().MatchString, read)
	if err != nil {
		return nil, fmt.Errorf("list scsi disks: %w", err)
	}
	return disks, nil
}

// readDisk reads sdX: its address, its device path and its WWID.
func readDisk(fsys host.FS, name string) (Disk, bool) {
	real, err := fsys.EvalSymlinks("/sys/block/" + name + "/device")
	if err != nil {
		return Disk{}, false
	}
	addr, err := ParseHCTL(path.Base(real))
	if err != nil {
		return Disk{}, false
	}
	d := Disk{Name: name, HCTL: addr, Device: real}
	if raw, err := fsys.ReadString("/sys/block/" + name + "/device/wwid"); err == nil {
		if id, ok := ParseSysfsWWID(raw); ok {
			d.WWID = id
		}
	}
	return d, true
}
