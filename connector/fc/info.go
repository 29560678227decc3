package fc

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/scsi"
)

// Protocol is the driver_volume_type this package handles.
const Protocol = "fibre_channel"

// ParseWWN validates a World Wide Name as Cinder and sysfs spell it: 16 hex
// digits, optionally prefixed by "0x" and optionally written as eight
// colon-separated pairs ("21:00:00:24:ff:5a:7b:3c"). It returns the 16
// lowercase digits.
func ParseWWN(s string) (string, error) {
	orig := s
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		s = s[2:]
	}
	if strings.Contains(s, ":") {
		parts := strings.Split(s, ":")
		if len(parts) != 8 {
			return "", fmt.Errorf("WWN %s: colons must separate 8 pairs of hex digits", connector.Quote(orig))
		}
		for _, p := range parts {
			if len(p) != 2 {
				return "", fmt.Errorf("WWN %s: colons must separate 8 pairs of hex digits", connector.Quote(orig))
			}
		}
		s = strings.Join(parts, "")
	}
	if len(s) != 16 {
		return "", fmt.Errorf("WWN %s: want 16 hex digits", connector.Quote(orig))
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return "", fmt.Errorf("WWN %s: want 16 hex digits", connector.Quote(orig))
		}
	}
	return strings.ToLower(s), nil
}

// Target is one target port and the LUN the volume has behind it.
type Target struct {
	// WWPN is the target port's name, 16 lowercase hex digits.
	WWPN string
	// LUN is the LUN as the kernel numbers it (after addressing_mode).
	LUN int
}

func (t Target) String() string { return fmt.Sprintf("0x%s lun %d", t.WWPN, t.LUN) }

// Info is validated Fibre Channel connection info.
type Info struct {
	// Targets lists each (target port, LUN) pair once, in the order given.
	Targets []Target
	// InitiatorTargetMap maps an initiator WWPN to the target WWPNs it is
	// zoned to (all normalised); nil when the info carries no map. Only
	// HBAs it names are used, and each only towards its targets.
	InitiatorTargetMap map[string][]string
	// UnknownMapTargets are target WWPNs the map names that are not among
	// Targets (drivers do send those); they are ignored.
	UnknownMapTargets []string
	// ReadOnly is access_mode "ro".
	ReadOnly bool
	// WildcardScan is enable_wildcard_scan: when no target port can be
	// found in sysfs, scan "- - L" on the HBAs. Off unless the info says
	// true (see the package documentation for why).
	WildcardScan bool
	// Encrypted says Nova would layer an encryptor on the device; brick
	// hands out the raw device and warns.
	Encrypted bool
	// VolumeID is Cinder's volume UUID, when given as one (it only labels
	// log lines, so anything else is ignored).
	VolumeID string
}

// WWPNs returns the distinct target WWPNs, in the order given.
func (i *Info) WWPNs() []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range i.Targets {
		if !seen[t.WWPN] {
			seen[t.WWPN] = true
			out = append(out, t.WWPN)
		}
	}
	return out
}

// TargetsFor returns the targets an initiator may reach: all of them
// without a map, those the map lists for it otherwise (none when the map
// does not name it).
func (i *Info) TargetsFor(initiatorWWPN string) []Target {
	if i.InitiatorTargetMap == nil {
		return i.Targets
	}
	allowed := map[string]bool{}
	for _, w := range i.InitiatorTargetMap[initiatorWWPN] {
		allowed[w] = true
	}
	var out []Target
	for _, t := range i.Targets {
		if allowed[t.WWPN] {
			out = append(out, t)
		}
	}
	return out
}

// ParseInfo validates Fibre Channel connection info. Every rejection names
// the key; nothing here touches the host.
func ParseInfo(ci connector.ConnectionInfo) (*Info, error) {
	if ci.DriverVolumeType != "" && ci.DriverVolumeType != Protocol && ci.DriverVolumeType != "fc" {
		return nil, connector.Invalid("driver_volume_type", "want %s, got %s", Protocol, connector.Quote(ci.DriverVolumeType))
	}
	wwns, err := parseTargetWWNs(ci)
	if err != nil {
		return nil, err
	}
	luns, lunKey, err := parseLUNs(ci)
	if err != nil {
		return nil, err
	}
	info := &Info{}
	if info.Targets, err = pairTargets(wwns, luns, lunKey); err != nil {
		return nil, err
	}
	if err := parseInitiatorTargetMap(ci, info); err != nil {
		return nil, err
	}
	if err := parseOptions(ci, info); err != nil {
		return nil, err
	}
	return info, nil
}

// parseTargetWWNs reads target_wwns, else target_wwn (a string or a list),
// normalised.
func parseTargetWWNs(ci connector.ConnectionInfo) ([]string, error) {
	key := "target_wwns"
	wwns, ok, err := ci.Strings(key)
	if err != nil {
		return nil, err
	}
	if !ok || len(wwns) == 0 {
		key = "target_wwn"
		if wwns, _, err = ci.Strings(key); err != nil {
			return nil, err
		}
	}
	if len(wwns) == 0 {
		return nil, connector.Invalid("target_wwn", "missing (neither target_wwn nor target_wwns given)")
	}
	for i, w := range wwns {
		n, err := ParseWWN(w)
		if err != nil {
			return nil, connector.Invalid(fmt.Sprintf("%s[%d]", key, i), "%v", err)
		}
		wwns[i] = n
	}
	return wwns, nil
}

// parseLUNs reads target_luns, else target_lun, as kernel LUNs after
// addressing_mode, and says which key they came from.
func parseLUNs(ci connector.ConnectionInfo) (luns []int, key string, err error) {
	key = "target_luns"
	raw, ok, err := ci.Ints(key)
	if err != nil {
		return nil, "", err
	}
	if !ok || len(raw) == 0 {
		key = "target_lun"
		if raw, ok, err = ci.Ints(key); err != nil {
			return nil, "", err
		}
		if !ok || len(raw) == 0 {
			return nil, "", connector.Invalid("target_lun", "missing (neither target_lun nor target_luns given)")
		}
	}
	mode, _, err := ci.String("addressing_mode")
	if err != nil {
		return nil, "", err
	}
	// An unknown mode is the mode's fault, not the LUN's: name that key.
	if err := scsi.CheckAddressingMode(mode); err != nil {
		return nil, "", connector.Invalid("addressing_mode", "%v", err)
	}
	luns = make([]int, len(raw))
	for i, l := range raw {
		k := key
		if len(raw) > 1 {
			k = fmt.Sprintf("%s[%d]", key, i)
		}
		if luns[i], err = scsi.KernelLUN(l, mode); err != nil {
			return nil, "", connector.Invalid(k, "%v", err)
		}
	}
	return luns, key, nil
}

// pairTargets pairs each WWN with its LUN (one LUN per WWN, or the old form:
// one LUN behind every target port), each pair once.
func pairTargets(wwns []string, luns []int, lunKey string) ([]Target, error) {
	var pairs []Target
	switch {
	case len(luns) == len(wwns):
		for i := range wwns {
			pairs = append(pairs, Target{WWPN: wwns[i], LUN: luns[i]})
		}
	case len(luns) == 1:
		for _, w := range wwns {
			pairs = append(pairs, Target{WWPN: w, LUN: luns[0]})
		}
	default:
		return nil, connector.Invalid(lunKey, "%d LUNs for %d target WWNs (want one, or one per WWN)", len(luns), len(wwns))
	}
	var out []Target
	seen := map[Target]bool{}
	for _, t := range pairs {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// parseOptions reads access_mode, enable_wildcard_scan, encrypted and
// volume_id.
func parseOptions(ci connector.ConnectionInfo, info *Info) error {
	var err error
	if info.ReadOnly, err = ci.ReadOnly(); err != nil {
		return err
	}
	if info.WildcardScan, _, err = ci.Bool("enable_wildcard_scan"); err != nil {
		return err
	}
	if info.Encrypted, _, err = ci.Bool("encrypted"); err != nil {
		return err
	}
	// volume_id only labels log lines: one brick cannot read is ignored.
	info.VolumeID, _ = ci.VolumeID()
	return nil
}

// parseInitiatorTargetMap reads {"<initiator wwpn>": ["<target wwpn>", ...]}
// (a single string is a list of one).
func parseInitiatorTargetMap(ci connector.ConnectionInfo, info *Info) error {
	const key = "initiator_target_map"
	raw, ok, err := ci.Object(key)
	if err != nil || !ok {
		return err
	}
	if len(raw) > 256 {
		return connector.Invalid(key, "more than 256 initiators")
	}
	known := map[string]bool{}
	for _, t := range info.Targets {
		known[t.WWPN] = true
	}
	unknown := map[string]bool{}
	itmap := make(map[string][]string, len(raw))
	inits := make([]string, 0, len(raw))
	for k := range raw {
		inits = append(inits, k)
	}
	sort.Strings(inits)
	for _, k := range inits {
		ini, err := ParseWWN(k)
		if err != nil {
			return connector.Invalid(key, "initiator: %v", err)
		}
		sub := connector.ConnectionInfo{Data: map[string]any{k: raw[k]}}
		targets, _, err := sub.Strings(k)
		if err != nil {
			return connector.Invalid(key+"["+strconv.Quote(ini)+"]", "%v", unwrapInvalid(err))
		}
		for i, t := range targets {
			n, err := ParseWWN(t)
			if err != nil {
				return connector.Invalid(fmt.Sprintf("%s[%q][%d]", key, ini, i), "%v", err)
			}
			if !known[n] {
				unknown[n] = true
			}
			if !contains(itmap[ini], n) {
				itmap[ini] = append(itmap[ini], n)
			}
		}
		if _, ok := itmap[ini]; !ok {
			itmap[ini] = []string{}
		}
	}
	info.InitiatorTargetMap = itmap
	for w := range unknown {
		info.UnknownMapTargets = append(info.UnknownMapTargets, w)
	}
	sort.Strings(info.UnknownMapTargets)
	return nil
}

// unwrapInvalid keeps the reason of an *InvalidError built for a nested
// key, so the outer error names the key only once.
func unwrapInvalid(err error) string {
	if ie, ok := err.(*connector.InvalidError); ok {
		return ie.Reason
	}
	return err.Error()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
