package fc

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
	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/scsi"
)

// HBA is one FC port of this host, as /sys/class/fc_host shows it.
type HBA struct {
	// Host is the SCSI host number (6 for host6).
	Host int
	// PortName and NodeName are the WWPN and WWNN, 16 lowercase hex digits.
	PortName, NodeName string
	// PortState is "Online", "Linkdown", "Offline", ...
	PortState string
	// PCI is the PCI address of the adapter ("0000:05:00.3"), the part
	// udev's by-path names carry; "" when the port sits on no PCI device
	// (software FCoE on a virtual interface).
	PCI string
	// Platform is the platform device in front of the PCI bus on some
	// non-x86 machines ("platform-<name>"), as udev prefixes by-path names.
	Platform string
	// Unreadable are the names (port_name, node_name) that could not be
	// read or parsed; their fields are "".
	Unreadable []AttrError
}

// Online reports whether the port is logged in to its fabric.
func (h HBA) Online() bool { return h.PortState == "Online" }

const fcHostDir = "/sys/class/fc_host"

var pciRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`) })

// hostDir reports whether name is a SCSI host's sysfs name: "host" and a
// number of at most nine digits. Checked byte by byte: get-connector lists
// fc_host on every host, and compiling a regexp there would grow its stack.
func hostDir(name string) bool {
	n, ok := strings.CutPrefix(name, "host")
	if !ok || n == "" || len(n) > 9 {
		return false
	}
	for i := range len(n) {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	return true
}

// AttrError is an attribute of an FC port that could not be read or
// parsed: File is its sysfs path.
type AttrError struct {
	File string
	Err  error
}

func (e *AttrError) Error() string { return e.File + ": " + e.Err.Error() }

func (e *AttrError) Unwrap() error { return e.Err }

var errNotWWN = errors.New("not a WWN")

// ListHBAs reads every FC port of the host, by SCSI host number. A host
// without FC support has none. A port whose state cannot be read is
// skipped (an *AttrError in skipped); one whose WWPN or WWNN cannot be
// read or parsed is kept with that name "" and the reason in Unreadable.
func ListHBAs(fsys host.FS) (hbas []HBA, skipped []error, err error) {
	ports, err := readPorts(fsys)
	if err != nil {
		return nil, nil, fmt.Errorf("list FC HBAs: %w", err)
	}
	for _, p := range ports {
		if p.err != nil {
			skipped = append(skipped, p.err)
			continue
		}
		hbas = append(hbas, p.hba)
	}
	sort.Slice(hbas, func(i, j int) bool { return hbas[i].Host < hbas[j].Host })
	return hbas, skipped, nil
}

// port is one fc_host entry as read: the HBA, or why it was skipped.
type port struct {
	hba HBA
	err *AttrError
}

// readPorts reads the fc_host entries in their listing's (name) order.
func readPorts(fsys host.FS) ([]port, error) {
	read := func(name string) (port, bool) {
		n, _ := strconv.Atoi(strings.TrimPrefix(name, "host"))
		h, err := readHBA(fsys, n)
		return port{hba: h, err: err}, true
	}
	return host.ReadEntries(fsys, fcHostDir, hostDir, read)
}

func readHBA(fsys host.FS, n int) (HBA, *AttrError) {
	dir := fmt.Sprintf("%s/host%d", fcHostDir, n)
	h := HBA{Host: n}
	state, err := fsys.ReadString(dir + "/port_state")
	if err != nil {
		return h, &AttrError{File: dir + "/port_state", Err: err}
	}
	h.PortState = state
	for _, a := range []struct {
		attr string
		dst  *string
	}{{"port_name", &h.PortName}, {"node_name", &h.NodeName}} {
		file := dir + "/" + a.attr
		raw, err := fsys.ReadString(file)
		if err == nil {
			if *a.dst, err = ParseWWN(raw); err != nil {
				err = errNotWWN
			}
		}
		if err != nil {
			h.Unreadable = append(h.Unreadable, AttrError{File: file, Err: err})
		}
	}
	if real, err := fsys.EvalSymlinks(dir); err == nil {
		h.Platform, h.PCI = pciOf(real)
	}
	return h, nil
}

// pciOf picks the adapter's PCI address out of the fc_host's device path:
// the element before "hostN" (an HBA) or before "net" (FCoE on a NIC):
//
//	/sys/devices/pci0000:00/0000:00:03.0/0000:05:00.3/host2/fc_host/host2
//	/sys/devices/pci0000:20/0000:20:03.0/0000:21:00.2/net/ens2f2/ctlr_2/host3/fc_host/host3
//	/sys/devices/platform/smb/smb:motherboard/80040000000.peu0-c0/pci0000:00/0000:00:03.0/0000:05:00.3/host2/fc_host/host2
func pciOf(devPath string) (platform, pci string) {
	parts := strings.Split(strings.Trim(devPath, "/"), "/")
	hasPlatform := len(parts) > 2 && parts[2] == "platform"
	for i, p := range parts {
		if hasPlatform && strings.HasPrefix(p, "pci") && i > 0 && platform == "" {
			platform = "platform-" + parts[i-1]
		}
		if (p == "net" || hostDir(p)) && i > 0 {
			if pciRE().MatchString(parts[i-1]) {
				return platform, parts[i-1]
			}
			return "", ""
		}
	}
	return "", ""
}

// remotePort is where one target port sits on one HBA: the SCSI channel
// and target number the kernel gave it.
type remotePort struct {
	Channel, Target int
	// Source says which sysfs class told us ("fc_transport" or "fc_remote_ports").
	Source string
}

var (
	transportRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^target([0-9]{1,9}):([0-9]{1,9}):([0-9]{1,9})$`) })
	rportRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^rport-([0-9]{1,9}):([0-9]{1,9})-([0-9]{1,9})$`) })
)

// findRemotePort looks up target port wwpn behind SCSI host h: first the
// SCSI targets the FC transport created (fc_transport/targetH:C:T, present
// once anything on that port was scanned), then the remote ports the HBA
// logged in to (fc_remote_ports/rport-H:C-N with its scsi_target_id, present
// as soon as the fabric login is done). ok is false when the port is not
// (yet) visible on this HBA.
func findRemotePort(fsys host.FS, h int, wwpn string) (remotePort, bool) {
	if matches, err := fsys.Glob(fmt.Sprintf("/sys/class/fc_transport/target%d:*", h)); err == nil {
		for _, m := range matches {
			sm := transportRE().FindStringSubmatch(path.Base(m))
			if sm == nil || sm[1] != strconv.Itoa(h) {
				continue
			}
			if w, err := readWWN(fsys, m+"/port_name"); err != nil || w != wwpn {
				continue
			}
			c, _ := strconv.Atoi(sm[2])
			t, _ := strconv.Atoi(sm[3])
			return remotePort{Channel: c, Target: t, Source: "fc_transport"}, true
		}
	}
	if matches, err := fsys.Glob(fmt.Sprintf("/sys/class/fc_remote_ports/rport-%d:*", h)); err == nil {
		for _, m := range matches {
			sm := rportRE().FindStringSubmatch(path.Base(m))
			if sm == nil || sm[1] != strconv.Itoa(h) {
				continue
			}
			if w, err := readWWN(fsys, m+"/port_name"); err != nil || w != wwpn {
				continue
			}
			// -1 means the port is not (or no longer) an FCP target.
			raw, err := fsys.ReadString(m + "/scsi_target_id")
			if err != nil {
				continue
			}
			t, err := strconv.Atoi(raw)
			if err != nil || t < 0 {
				continue
			}
			c, _ := strconv.Atoi(sm[2])
			return remotePort{Channel: c, Target: t, Source: "fc_remote_ports"}, true
		}
	}
	return remotePort{}, false
}

func readWWN(fsys host.FS, file string) (string, error) {
	raw, err := fsys.ReadString(file)
	if err != nil {
		return "", err
	}
	return ParseWWN(raw)
}

// targetPortOf returns the WWPN of the FC target port a SCSI disk sits
// behind (fc_transport/targetH:C:T/port_name), so a device found by
// address or by a link is proven to come from a requested port.
func targetPortOf(fsys host.FS, a scsi.HCTL) (string, error) {
	return readWWN(fsys, fmt.Sprintf("/sys/class/fc_transport/target%d:%d:%d/port_name", a.Host, a.Channel, a.Target))
}

// ByPathName is the name udev gives the LUN behind target port wwpn on the
// adapter at pci: "pci-0000:05:00.3-fc-0x500601609020318d-lun-1", with
// LUNs from 256 up written in udev's 64-bit form (lun-0x012c000000000000
// for 300), and the platform prefix where udev puts one.
func ByPathName(platform, pci, wwpn string, lun int) string {
	name := fmt.Sprintf("pci-%s-fc-0x%s-lun-%s", pci, wwpn, lunString(lun))
	if platform != "" {
		name = platform + "-" + name
	}
	return name
}

func lunString(lun int) string {
	if lun < 256 {
		return strconv.Itoa(lun)
	}
	return fmt.Sprintf("0x%04x%04x00000000", lun&0xffff, (lun>>16)&0xffff)
}

const byPathDir = "/dev/disk/by-path"

// diskOfLink resolves a /dev/disk/by-path link to the disk name it names,
// or "" when the link does not exist (yet) or names no plain disk.
func diskOfLink(fsys host.FS, link string) string {
	target, err := fsys.EvalSymlinks(link)
	if err != nil {
		return ""
	}
	name := strings.TrimPrefix(target, "/dev/")
	if name == target || !ident.DiskName(name) {
		return ""
	}
	return name
}
