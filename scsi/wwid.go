package scsi

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/brick-storage/brick/ident"
)

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
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("wwid of %s: device reports no identifier (no vpd_pg83 or wwid): %w", name, ErrNotFound)
		}
		return "", fmt.Errorf("wwid of %s: %w", name, err)
	}
	id, ok := ParseSysfsWWID(raw)
	if !ok {
		return "", fmt.Errorf("wwid of %s: unrecognised identifier %q", name, truncate(raw, 80))
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

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// ShowsOther reports whether the disk now shows a volume other than the
// one with WWID want, as when a LUN number was reused for another volume
// after a failed detach: such a disk is not the caller's to take away. An
// empty want, or a WWID that cannot be read, counts as the same volume.
func (s *SCSI) ShowsOther(disk, want string) bool {
	if want == "" {
		return false
	}
	w, err := s.WWID(disk)
	if err != nil || w == want {
		return false
	}
	s.log.Warn("scsi: LUN now shows another volume; leaving it alone", "disk", disk, "wwid", w, "want", want)
	return true
}
