// Package iscsi attaches Cinder volumes over iSCSI, single path or through
// dm-multipath, with open-iscsi's iscsiadm for sessions and sysfs for
// everything it can read instead (sessions, devices, maps).
//
// CHAP passwords never reach a command line: brick creates the node record
// with "iscsiadm -m node -o new" and then writes the auth settings (and its
// other per-node settings) into the record file itself, which iscsiadm reads
// at login. See record.go.
package iscsi

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/scsi"
	"github.com/brick-storage/brick/secret"
)

// DefaultPort is the iSCSI port used when a portal names none.
const DefaultPort = 3260

// Portal is an iSCSI target portal address.
type Portal struct {
	// Host is an IPv4 or IPv6 address, without brackets, or (before the
	// connector resolves it) a host name, lowercase.
	Host string
	Port int
}

// String renders the portal as iscsiadm's -p takes it: "10.0.0.1:3260",
// "[fd00::1]:3260".
func (p Portal) String() string {
	if strings.Contains(p.Host, ":") {
		return "[" + p.Host + "]:" + strconv.Itoa(p.Port)
	}
	return p.Host + ":" + strconv.Itoa(p.Port)
}

// IsName reports whether the portal names its host rather than giving an
// address; the connector resolves it before any session or record work.
func (p Portal) IsName() bool {
	_, err := netip.ParseAddr(p.Host)
	return err != nil
}

// recordName is how open-iscsi names the portal in its node database:
// "<address>,<port>".
func (p Portal) recordName() string { return p.Host + "," + strconv.Itoa(p.Port) }

var (
	zoneRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]{1,15}$`) })
)

// ParsePortal parses "host:port", "[v6]:port", "[v6]" or a bare IPv6
// address, where host is an address or a DNS host name. The port defaults
// to 3260. An unbracketed IPv6 address is all address, as iscsiadm reads
// it: "fd00::1:3260" is the address fd00::1:3260 on port 3260
// (docs/scsi-multipath.md, "Portals").
func ParsePortal(s string) (Portal, error) {
	if s == "" {
		return Portal{}, fmt.Errorf("empty portal")
	}
	if len(s) > 300 {
		return Portal{}, fmt.Errorf("portal longer than 300 bytes")
	}
	host, portStr, hasPort, err := splitPortal(s)
	if err != nil {
		return Portal{}, err
	}
	port := DefaultPort
	if hasPort {
		n, err := strconv.Atoi(portStr)
		if err != nil || n < 1 || n > 65535 || strings.HasPrefix(portStr, "+") || strings.HasPrefix(portStr, "0") {
			return Portal{}, fmt.Errorf("portal %s: port must be 1..65535", connector.Quote(s))
		}
		port = n
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if z := addr.Zone(); z != "" && !zoneRE().MatchString(z) {
			return Portal{}, fmt.Errorf("portal %s: bad IPv6 zone", connector.Quote(s))
		}
		if addr.Is4In6() {
			addr = addr.Unmap()
		}
		return Portal{Host: addr.String(), Port: port}, nil
	}
	// A name is resolved by the connector (Connector.resolve): open-iscsi
	// files node records and the kernel reports sessions by address.
	if connector.HostName(host) {
		return Portal{Host: strings.ToLower(strings.TrimSuffix(host, ".")), Port: port}, nil
	}
	return Portal{}, fmt.Errorf("portal %s: host must be an IP address or a DNS host name", connector.Quote(s))
}

// splitPortal cuts a portal into host and port text.
func splitPortal(s string) (host, port string, hasPort bool, err error) {
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.Index(s, "]")
		if end < 0 {
			return "", "", false, fmt.Errorf("portal %s: missing ]", connector.Quote(s))
		}
		host = s[1:end]
		rest := s[end+1:]
		if rest != "" {
			if !strings.HasPrefix(rest, ":") {
				return "", "", false, fmt.Errorf("portal %s: junk after ]", connector.Quote(s))
			}
			port, hasPort = rest[1:], true
		}
		if _, err := netip.ParseAddr(host); err != nil || !strings.Contains(host, ":") {
			return "", "", false, fmt.Errorf("portal %s: not an IPv6 address in brackets", connector.Quote(s))
		}
		return host, port, hasPort, nil
	case strings.Count(s, ":") > 1: // bare IPv6, no port
		if _, err := netip.ParseAddr(s); err != nil {
			return "", "", false, fmt.Errorf("portal %s: not an address", connector.Quote(s))
		}
		return s, "", false, nil
	case strings.Contains(s, ":"):
		host, port, _ = strings.Cut(s, ":")
		return host, port, true, nil
	}
	return s, "", false, nil
}

// ambiguousV6 reports an unbracketed IPv6 portal whose last group reads
// like the iSCSI port, which its writer most likely meant as one.
func ambiguousV6(s string) bool {
	return !strings.HasPrefix(s, "[") && strings.Count(s, ":") > 1 && strings.HasSuffix(s, ":3260")
}

// Target is one path to the volume: a portal, the target's name there and
// the volume's LUN.
type Target struct {
	Portal Portal
	IQN    string
	// LUN is the LUN as the kernel numbers it (after addressing_mode).
	LUN int
}

func (t Target) String() string { return fmt.Sprintf("%s@%s lun %d", t.IQN, t.Portal, t.LUN) }

// CHAP holds CHAP credentials. Password is a secret.
type CHAP struct {
	Username string
	Password secret.Value
}

// open-iscsi interface names: "default" is iSCSI over TCP (iscsi_tcp),
// "iser" its built-in iSER interface (ib_iser, over RDMA).
const (
	IfaceTCP  = "default"
	IfaceISER = "iser"
)

// Info is validated iSCSI connection info.
type Info struct {
	// Targets lists every path Cinder gave, the singular keys' target first.
	Targets []Target
	// Iface is the open-iscsi interface every path logs in through:
	// IfaceTCP, or IfaceISER for driver_volume_type "iser" (Cinder's LIO
	// and tgt targets with target_protocol iser) or a transport_name or
	// iscsi_interface of "iser".
	Iface string
	// Auth is the session CHAP, nil for none.
	Auth *CHAP
	// DiscoveryAuth is the SendTargets discovery CHAP, nil for none.
	DiscoveryAuth *CHAP
	// ReadOnly is access_mode "ro".
	ReadOnly bool
	// TargetDiscovered says Cinder found the target by discovery; brick
	// creates the node record either way (so a bad value is ignored).
	TargetDiscovered bool
	// Encrypted says Nova would layer an encryptor on the device; brick
	// hands out the raw device and warns.
	Encrypted bool
	// VolumeID is Cinder's volume UUID, when given as one (it only labels
	// log lines, so anything else is ignored).
	VolumeID string
	// Plural reports whether the info carried target_portals (a multipath
	// export); with a single portal brick may discover the others.
	Plural bool
	// Warnings are things brick accepted but the user should know.
	Warnings []string
}

// Secrets returns the passwords, for a Redactor.
func (i *Info) Secrets() []string {
	var out []string
	for _, c := range []*CHAP{i.Auth, i.DiscoveryAuth} {
		if c != nil && !c.Password.IsZero() {
			out = append(out, c.Password.Reveal())
		}
	}
	return out
}

// IQNs returns the distinct target names, sorted as given.
func (i *Info) IQNs() []string { return iqnsOf(i.Targets) }

// ParseInfo validates iSCSI connection info. Every rejection names the key.
func ParseInfo(ci connector.ConnectionInfo) (*Info, error) {
	iface, err := ifaceOf(ci)
	if err != nil {
		return nil, err
	}
	info := &Info{Iface: iface}
	mode, err := addressingMode(ci)
	if err != nil {
		return nil, err
	}
	plural, err := pluralTargets(ci, mode)
	if err != nil {
		return nil, err
	}
	single, hasSingle, err := singularTarget(ci, mode, completeLists(ci))
	if err != nil {
		return nil, err
	}
	switch {
	case len(plural) > 0:
		info.Plural = true
		if hasSingle {
			info.Targets = append(info.Targets, single)
		}
		for _, t := range plural {
			if !hasSingle || t != single {
				info.Targets = append(info.Targets, t)
			}
		}
	case hasSingle:
		info.Targets = []Target{single}
	default:
		return nil, connector.Invalid("target_portal", "missing (neither target_portal nor target_portals given)")
	}
	if info.Auth, err = chap(ci, "auth_method", "auth_username", "auth_password"); err != nil {
		return nil, err
	}
	if info.DiscoveryAuth, err = chap(ci, "discovery_auth_method", "discovery_auth_username", "discovery_auth_password"); err != nil {
		return nil, err
	}
	if info.ReadOnly, err = ci.ReadOnly(); err != nil {
		return nil, err
	}
	if info.Encrypted, _, err = ci.Bool("encrypted"); err != nil {
		return nil, err
	}
	// Keys brick reads for nothing but a label: a value it cannot read is
	// ignored rather than failing an attach that does not depend on it.
	info.TargetDiscovered, _, _ = ci.Bool("target_discovered")
	info.VolumeID, _ = ci.VolumeID()
	info.Warnings = portalWarnings(ci)
	return info, nil
}

// ifaceOf picks the open-iscsi interface from driver_volume_type and the
// transport keys some drivers send. Offload transports (bnx2i, cxgb4i,
// qla4xxx, ...) need an iface record per NIC, which brick does not make.
func ifaceOf(ci connector.ConnectionInfo) (string, error) {
	iface := IfaceTCP
	switch strings.ToLower(ci.DriverVolumeType) {
	case "", "iscsi":
	case "iser":
		iface = IfaceISER
	default:
		return "", connector.Invalid("driver_volume_type", "want iscsi or iser, got %s", connector.Quote(ci.DriverVolumeType))
	}
	for _, key := range []string{"transport_name", "iscsi_interface"} {
		v, ok, err := ci.String(key)
		if err != nil {
			return "", err
		}
		if !ok || v == "" {
			continue
		}
		switch strings.ToLower(v) {
		case "iser":
			iface = IfaceISER
		case "default", "tcp", "iscsi_tcp":
			if iface == IfaceISER {
				return "", connector.Invalid(key, "says %s, but the volume is iser", connector.Quote(v))
			}
		default:
			return "", connector.Invalid(key, "brick speaks iSCSI over TCP (default) and iser, got %s", connector.Quote(v))
		}
	}
	return iface, nil
}

// portalWarnings names each unbracketed IPv6 portal ending in ":3260":
// brick reads it as iscsiadm does (all address, port 3260), which is not
// what a driver that meant 3260 as the port wanted.
func portalWarnings(ci connector.ConnectionInfo) []string {
	var out []string
	single, _, _ := ci.String("target_portal")
	list, _, _ := ci.Strings("target_portals")
	for _, s := range append([]string{single}, list...) {
		if ambiguousV6(s) && !slices.Contains(out, s) {
			p, _ := ParsePortal(s)
			out = append(out, fmt.Sprintf("portal %s has no brackets: read as address %s port %d, as iscsiadm reads it; write [address]:port if the last group was meant as the port", connector.Quote(s), p.Host, p.Port))
		}
	}
	return out
}

// addressingMode reads addressing_mode, which says how the target encodes
// its LUNs (see scsi.KernelLUN).
func addressingMode(ci connector.ConnectionInfo) (string, error) {
	mode, _, err := ci.String("addressing_mode")
	if err != nil {
		return "", err
	}
	if err := scsi.CheckAddressingMode(mode); err != nil {
		return "", connector.Invalid("addressing_mode", "%v", err)
	}
	return mode, nil
}

// completeLists reports whether the info carries target_portals and
// target_iqns: os-brick then takes its paths from the lists alone.
func completeLists(ci connector.ConnectionInfo) bool {
	return ci.Has("target_portals") && ci.Has("target_iqns")
}

// singularTarget reads target_portal, target_iqn and target_lun. With
// complete lists, a singular target without target_iqn is no target (the
// lists name every path); otherwise target_iqn is required.
func singularTarget(ci connector.ConnectionInfo, mode string, lists bool) (Target, bool, error) {
	ps, hasPortal, err := ci.String("target_portal")
	if err != nil {
		return Target{}, false, err
	}
	if !hasPortal || ps == "" {
		return Target{}, false, nil
	}
	if lists && !ci.Has("target_iqn") {
		return Target{}, false, nil
	}
	p, err := ParsePortal(ps)
	if err != nil {
		return Target{}, false, connector.Invalid("target_portal", "%v", err)
	}
	iqn, err := ci.RequiredString("target_iqn")
	if err != nil {
		return Target{}, false, err
	}
	if err := checkIQN("target_iqn", iqn); err != nil {
		return Target{}, false, err
	}
	// Without target_lun the volume is LUN 0, as os-brick assumes.
	lun, _, err := ci.Int("target_lun")
	if err != nil {
		return Target{}, false, err
	}
	klun, err := kernelLUN("target_lun", lun, mode)
	if err != nil {
		return Target{}, false, err
	}
	return Target{Portal: p, IQN: iqn, LUN: klun}, true, nil
}

// pluralTargets zips target_portals with target_iqns and target_luns; a
// single target_iqn or target_lun applies to every portal, as some drivers
// send it.
func pluralTargets(ci connector.ConnectionInfo, mode string) ([]Target, error) {
	portals, ok, err := ci.Strings("target_portals")
	if err != nil || !ok || len(portals) == 0 {
		return nil, err
	}
	iqns, iqnKey, err := pluralIQNs(ci, len(portals))
	if err != nil {
		return nil, err
	}
	luns, lunKey, err := pluralLUNs(ci, len(portals))
	if err != nil {
		return nil, err
	}
	out := make([]Target, 0, len(portals))
	seen := map[Target]bool{}
	for i, ps := range portals {
		p, err := ParsePortal(ps)
		if err != nil {
			return nil, connector.Invalid(fmt.Sprintf("target_portals[%d]", i), "%v", err)
		}
		if err := checkIQN(entryKey(iqnKey, "target_iqns", i), iqns[i]); err != nil {
			return nil, err
		}
		lun, err := kernelLUN(entryKey(lunKey, "target_luns", i), luns[i], mode)
		if err != nil {
			return nil, err
		}
		t := Target{Portal: p, IQN: iqns[i], LUN: lun}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// entryKey names entry i of a list key ("target_iqns[2]"); a singular key
// that stands for every entry is named as it is.
func entryKey(key, listKey string, i int) string {
	if key != listKey {
		return key
	}
	return fmt.Sprintf("%s[%d]", key, i)
}

// pluralIQNs reads target_iqns, else target_iqn for every one of n
// portals, and says which key they came from.
func pluralIQNs(ci connector.ConnectionInfo, n int) ([]string, string, error) {
	iqns, ok, err := ci.Strings("target_iqns")
	if err != nil {
		return nil, "", err
	}
	key := "target_iqns"
	if !ok {
		iqn, err := ci.RequiredString("target_iqn")
		if err != nil {
			return nil, "", connector.Invalid("target_iqns", "missing (target_portals needs target_iqns or target_iqn)")
		}
		iqns, key = repeat(iqn, n), "target_iqn"
	}
	if len(iqns) != n {
		return nil, "", connector.Invalid(key, "has %d entries for %d target_portals", len(iqns), n)
	}
	return iqns, key, nil
}

// pluralLUNs reads target_luns, else target_lun for every one of n
// portals, and says which key they came from.
func pluralLUNs(ci connector.ConnectionInfo, n int) ([]int64, string, error) {
	luns, ok, err := ci.Ints("target_luns")
	if err != nil {
		return nil, "", err
	}
	key := "target_luns"
	if !ok {
		lun, ok, err := ci.Int("target_lun")
		if err != nil {
			return nil, "", err
		}
		if !ok {
			return nil, "", connector.Invalid("target_luns", "missing (target_portals needs target_luns or target_lun)")
		}
		luns, key = make([]int64, n), "target_lun"
		for i := range luns {
			luns[i] = lun
		}
	}
	if len(luns) != n {
		return nil, "", connector.Invalid(key, "has %d entries for %d target_portals", len(luns), n)
	}
	return luns, key, nil
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func checkIQN(key, iqn string) error {
	if !ident.IQN(iqn) || strings.ContainsAny(iqn, "/[],\n\r") {
		return connector.Invalid(key, "not an iSCSI name (iqn./eui./naa.), got %s", connector.Quote(iqn))
	}
	return nil
}

// kernelLUN checks the LUN under key and returns the kernel's number for it.
func kernelLUN(key string, lun int64, mode string) (int, error) {
	n, err := scsi.KernelLUN(lun, mode)
	if err != nil {
		return 0, connector.Invalid(key, "%v", err)
	}
	return n, nil
}

// maxCHAPLen is open-iscsi's AUTH_STR_MAX_LEN.
const maxCHAPLen = 256

func chap(ci connector.ConnectionInfo, methodKey, userKey, passKey string) (*CHAP, error) {
	method, ok, err := ci.String(methodKey)
	if err != nil {
		return nil, err
	}
	if !ok || method == "" || strings.EqualFold(method, "none") {
		return nil, nil
	}
	if !strings.EqualFold(method, "CHAP") {
		return nil, connector.Invalid(methodKey, "must be CHAP or None, got %s", connector.Quote(method))
	}
	user, err := ci.RequiredString(userKey)
	if err != nil {
		return nil, err
	}
	if err := checkCHAPValue(userKey, user, false); err != nil {
		return nil, err
	}
	pass, err := ci.RequiredString(passKey)
	if err != nil {
		return nil, err
	}
	if err := checkCHAPValue(passKey, pass, true); err != nil {
		return nil, err
	}
	return &CHAP{Username: user, Password: secret.New(pass)}, nil
}

// checkCHAPValue keeps credentials to what the node record file can hold
// on one line. The reason never repeats a secret.
func checkCHAPValue(key, v string, secret bool) error {
	show := func() string {
		if secret {
			return ""
		}
		return ", got " + connector.Quote(v)
	}
	if len(v) > maxCHAPLen {
		return connector.Invalid(key, "longer than %d bytes", maxCHAPLen)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return connector.Invalid(key, "contains a control character%s", show())
		}
	}
	if strings.TrimSpace(v) != v {
		return connector.Invalid(key, "has leading or trailing white space%s", show())
	}
	return nil
}
