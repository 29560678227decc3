package scsi

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"github.com/brick-storage/brick/ident"
)

// ErrNoWWID means the device reports no VPD page 0x83 designator: nothing
// tells it from another LUN but its unit serial and its address.
var ErrNoWWID = errors.New("device reports no identifier (no VPD page 0x83 designator)")

// WWID returns the disk's identifier in the form udev's scsi_id prints
// (ID_SERIAL) and dm-multipath uses as the map's WWID: a one-digit
// designator type followed by the identifier, "3" + hex for an NAA name
// ("36001405..."), "2" + hex for EUI-64, "8" + a SCSI name string, "1" + a
// T10 vendor ID with white space runs turned into "_". This is what
// os-brick reports as scsi_wwn, and "3" + hex is also what
// /dev/disk/by-id/wwn-0x<hex> carries after its "0x".
//
// It parses the device's VPD page 0x83 from sysfs with multipath-tools'
// order of preference (NAA IEEE registered extended, NAA IEEE registered,
// EUI-64 by length, other NAA, SCSI name, T10 vendor ID) and, when the page
// is not exposed, converts the kernel's own choice in
// /sys/block/<name>/device/wwid ("naa.6001405..."), which prefers the same
// designators for every array brick has met.
func (s *SCSI) WWID(name string) (string, error) {
	if !ident.DiskName(name) {
		return "", fmt.Errorf("wwid of %q: not a disk name", name)
	}
	dir := "/sys/block/" + name + "/device/"
	if page, err := s.fs.ReadFile(dir + "vpd_pg83"); err == nil {
		if id, ok := ParseVPD83(page); ok {
			return id, nil
		}
	}
	raw, err := s.fs.ReadString(dir + "wwid")
	if err != nil {
		// The kernel's wwid attribute fails with ENXIO when the device
		// has no page 0x83 designator.
		switch {
		case errors.Is(err, fs.ErrNotExist) && !s.fs.Exists(dir):
			return "", fmt.Errorf("wwid of %s: %w", name, ErrNotFound)
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENXIO):
			return "", fmt.Errorf("wwid of %s: %w", name, ErrNoWWID)
		}
		return "", fmt.Errorf("wwid of %s: %w", name, err)
	}
	id, ok := ParseSysfsWWID(raw)
	if !ok {
		return "", fmt.Errorf("wwid of %s: unrecognised identifier %q", name, ident.Clip(raw, 80))
	}
	return id, nil
}

// ParseSysfsWWID converts the kernel's wwid attribute ("naa.600140...",
// "eui.0025...", "t10.ATA     disk  ", "name.iqn...") to the scsi_id form
// WWID returns.
func ParseSysfsWWID(raw string) (string, bool) {
	raw = strings.TrimSpace(strings.TrimRight(raw, "\x00"))
	kind, id, ok := strings.Cut(raw, ".")
	if !ok || id == "" {
		return "", false
	}
	var prefix string
	switch kind {
	case "naa":
		prefix = "3"
	case "eui":
		prefix = "2"
	case "t10":
		prefix = "1"
	case "name":
		prefix = "8"
	default:
		return "", false
	}
	if kind == "naa" || kind == "eui" {
		if _, err := hex.DecodeString(id); err != nil {
			return "", false
		}
		return prefix + strings.ToLower(id), true
	}
	id = collapseSpace(id)
	if id == "" || !printable(id) {
		return "", false
	}
	return prefix + id, true
}

// ParseVPD83 picks the logical unit's preferred designator from a raw VPD
// page 0x83 (Device Identification) and renders it as WWID does.
func ParseVPD83(page []byte) (string, bool) {
	if len(page) < 4 || page[1] != 0x83 {
		return "", false
	}
	end := 4 + (int(page[2])<<8 | int(page[3]))
	if end > len(page) {
		end = len(page)
	}
	best, bestPrio := "", 0
	for off := 4; off+4 <= end; {
		codeSet := page[off] & 0x0f
		assoc := (page[off+1] >> 4) & 0x3
		dtype := page[off+1] & 0x0f
		n := int(page[off+3])
		d := page[off+4 : min(off+4+n, end)]
		off += 4 + n
		if assoc != 0 || len(d) != n { // only the LUN's own names count
			continue
		}
		id, prio := designator(dtype, codeSet, d)
		if prio > bestPrio {
			best, bestPrio = id, prio
		}
	}
	return best, bestPrio > 0
}

// designator renders one designator and ranks it; 0 means unusable.
func designator(dtype, codeSet byte, d []byte) (string, int) {
	switch dtype {
	case 0x3: // NAA
		if codeSet != 1 || len(d) == 0 {
			return "", 0
		}
		switch d[0] >> 4 {
		case 6:
			if len(d) == 16 {
				return "3" + hex.EncodeToString(d), 8
			}
		case 5:
			if len(d) == 8 {
				return "3" + hex.EncodeToString(d), 7
			}
		case 2, 3:
			if len(d) == 8 {
				return "3" + hex.EncodeToString(d), 3
			}
		}
	case 0x2: // EUI-64
		if codeSet != 1 {
			return "", 0
		}
		switch len(d) {
		case 16:
			return "2" + hex.EncodeToString(d), 6
		case 12:
			return "2" + hex.EncodeToString(d), 5
		case 8:
			return "2" + hex.EncodeToString(d), 4
		}
	case 0x8: // SCSI name string (UTF-8, NUL padded)
		if codeSet != 3 {
			return "", 0
		}
		s := strings.TrimRight(string(d), "\x00")
		if s == "" || !printable(s) {
			return "", 0
		}
		return "8" + s, 2
	case 0x1: // T10 vendor ID
		if codeSet != 2 {
			return "", 0
		}
		s := collapseSpace(string(d))
		if s == "" || !printable(s) {
			return "", 0
		}
		return "1" + s, 1
	}
	return "", 0
}

// collapseSpace trims and turns each run of white space into one "_", as
// udev's whitespace replacement does.
func collapseSpace(s string) string {
	return strings.Join(strings.Fields(strings.TrimRight(s, "\x00")), "_")
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x21 || r > 0x7e {
			return false
		}
	}
	return true
}

// ShowsOther reports whether the disk now shows a volume other than want,
// as when a LUN number was reused for another volume after a failed
// detach: such a disk is not the caller's to take away. want is the WWID,
// or for a LUN without one its unit serial; an empty want, or a disk that
// cannot be read, counts as the same volume.
func (s *SCSI) ShowsOther(disk string, want Identity) bool {
	if want.WWID == "" && want.Serial == "" {
		return false
	}
	got, err := s.Identify(disk, HCTL{})
	if err != nil {
		return false
	}
	same := got.WWID == want.WWID && (want.WWID != "" || got.Serial == want.Serial)
	if same {
		return false
	}
	s.log.Warn("scsi: LUN now shows another volume; leaving it alone", "disk", disk, "has", got.String(), "want", want.String())
	return true
}

// Identity is what identifies a disk: its WWID, or for a LUN without one
// its VPD page 0x80 unit serial (when it has one) and the address brick
// found it at.
type Identity struct {
	WWID   string
	Serial string
	HCTL   HCTL
}

// String names the identity for messages.
func (id Identity) String() string {
	switch {
	case id.WWID != "":
		return "WWID " + id.WWID
	case id.Serial != "":
		return fmt.Sprintf("unit serial %q at %s", id.Serial, id.HCTL)
	}
	return "address " + id.HCTL.String()
}

// Same reports whether two paths' identities show the same LUN as far as
// they can tell: equal WWIDs, else equal serials. Two paths with neither
// cannot be told apart from different LUNs, so they are not the same.
func (id Identity) Same(o Identity) bool {
	switch {
	case id.WWID != "" || o.WWID != "":
		return id.WWID == o.WWID
	case id.Serial != "" || o.Serial != "":
		return id.Serial == o.Serial
	}
	return false
}

// Identify returns the disk's WWID, or without one (ErrNoWWID) its unit
// serial and addr: what brick can still say about a LUN some targets and
// virtual arrays export without a page 0x83 designator.
func (s *SCSI) Identify(name string, addr HCTL) (Identity, error) {
	w, err := s.WWID(name)
	switch {
	case err == nil:
		return Identity{WWID: w, HCTL: addr}, nil
	case !errors.Is(err, ErrNoWWID):
		return Identity{}, err
	}
	id := Identity{HCTL: addr}
	if page, err := s.fs.ReadFile("/sys/block/" + name + "/device/vpd_pg80"); err == nil {
		id.Serial, _ = ParseVPD80(page)
	}
	return id, nil
}

// ParseVPD80 returns the unit serial number from a raw VPD page 0x80,
// white space runs turned into "_" as udev does.
func ParseVPD80(page []byte) (string, bool) {
	if len(page) < 4 || page[1] != 0x80 {
		return "", false
	}
	end := min(4+(int(page[2])<<8|int(page[3])), len(page))
	sn := collapseSpace(string(page[4:end]))
	if sn == "" || !printable(sn) || len(sn) > 252 {
		return "", false
	}
	return sn, true
}

// NoMultipath is the refusal to build a multipath map over a LUN without
// a WWID: multipathd would group its paths by whatever else udev read, so
// paths of different LUNs could end up in one map and mix their data.
func (id Identity) NoMultipath(what string) error {
	return fmt.Errorf("%s (%s) cannot go through dm-multipath: %w, so nothing proves its paths reach one LUN; attach it without --multipath (one path, with a warning)", what, id, ErrNoWWID)
}

// CheckNote says, for a LUN without a WWID, whether a disconnect can check
// that the LUN still shows the volume (by its unit serial) or cannot.
func (id Identity) CheckNote() string {
	if id.WWID != "" || id.Serial != "" {
		return ""
	}
	return "; a disconnect cannot check that the LUN still holds this volume"
}
