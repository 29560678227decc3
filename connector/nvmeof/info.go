// Package nvmeof attaches Cinder volumes exported over NVMe over Fabrics
// (driver_volume_type "nvmeof") over TCP or RDMA (RoCEv2): one
// controller per portal through the kernel's /dev/nvme-fabrics (no nvme-cli
// process), the namespace found in sysfs by UUID, then NGUID, then NSID,
// and with native multipath the one head device nvmeXnY over every path.
//
//	c := nvmeof.New(h, nvmeof.Options{})
//	dev, err := c.Connect(ctx, info) // dev.Path == "/dev/nvme1n1"
package nvmeof

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
)

// Protocol is the driver_volume_type this connector handles.
const Protocol = "nvmeof"

// Transports as the kernel's transport= option names them.
const (
	TransportTCP  = "tcp"
	TransportRDMA = "rdma"
)

// Portal is one address of the subsystem.
type Portal struct {
	Address   string // an IP address, without brackets
	Port      int
	Transport string // TransportTCP or TransportRDMA
}

func (p Portal) String() string {
	return p.Transport + ":" + netip.AddrPortFrom(netip.MustParseAddr(p.Address), uint16(p.Port)).String()
}

// Volume is validated nvmeof connection info, in either of Cinder's formats.
type Volume struct {
	NQN     string // subsystem NQN
	Portals []Portal
	// NSID is the namespace ID (0: not given).
	NSID int64
	// UUID and NGUID identify the namespace: lowercase, UUID with dashes,
	// NGUID as 32 hex digits ("" when not given).
	UUID  string
	NGUID string
	// UUIDHex is true when vol_uuid came as 32 hex digits without dashes:
	// arrays that send their NGUID there are matched by either identifier.
	UUIDHex bool
	// HostNQN is the host NQN the target expects, when the driver named one.
	HostNQN  string
	ReadOnly bool
	// NewFormat is true for target_nqn/portals info, false for nqn/target_portal.
	NewFormat bool
}

// ParseVolume validates nvmeof connection info. The new format (target_nqn,
// portals, vol_uuid) and the old one (nqn, transport_type, target_portal,
// target_port) are both read; a document mixing them is refused.
func ParseVolume(ci connector.ConnectionInfo) (Volume, error) {
	if ci.DriverVolumeType != Protocol {
		return Volume{}, connector.Invalid("driver_volume_type", "must be %s, got %s", Protocol, connector.Quote(ci.DriverVolumeType))
	}
	if ci.Has("volume_replicas") {
		return Volume{}, connector.Invalid("volume_replicas", "a replicated volume: read it with ParseRequest")
	}
	var (
		v   Volume
		err error
	)
	switch {
	case ci.Has("target_nqn") && ci.Has("nqn"):
		return Volume{}, connector.Invalid("nqn", "given with target_nqn: old and new formats mixed")
	case ci.Has("target_nqn") || ci.Has("portals"):
		v, err = parseNew(ci)
	default:
		v, err = parseOld(ci)
	}
	if err != nil {
		return Volume{}, err
	}
	if err := parseIDs(ci, &v); err != nil {
		return Volume{}, err
	}
	if v.ReadOnly, err = ci.ReadOnly(); err != nil {
		return Volume{}, err
	}
	return v, nil
}

func parseNew(ci connector.ConnectionInfo) (Volume, error) {
	nqn, err := nqnValue(ci, "target_nqn")
	if err != nil {
		return Volume{}, err
	}
	raw, ok := ci.Data["portals"].([]any)
	if !ok {
		if !ci.Has("portals") {
			return Volume{}, connector.Invalid("portals", "missing")
		}
		return Volume{}, connector.Invalid("portals", "must be a list of [address, port, transport]")
	}
	if len(raw) == 0 || len(raw) > maxPortals {
		return Volume{}, connector.Invalid("portals", "must hold 1 to %d entries, got %d", maxPortals, len(raw))
	}
	v := Volume{NQN: nqn, NewFormat: true}
	for i, e := range raw {
		p, err := parsePortalTriple(fmt.Sprintf("portals[%d]", i), e)
		if err != nil {
			return Volume{}, err
		}
		v.Portals = appendPortal(v.Portals, p)
	}
	return v, nil
}

func parseOld(ci connector.ConnectionInfo) (Volume, error) {
	nqn, err := nqnValue(ci, "nqn")
	if err != nil {
		return Volume{}, err
	}
	addr, err := ci.RequiredString("target_portal")
	if err != nil {
		return Volume{}, err
	}
	tr, _, err := ci.String("transport_type")
	if err != nil {
		return Volume{}, err
	}
	port, ok, err := ci.Int("target_port")
	if err != nil {
		return Volume{}, err
	}
	if !ok {
		return Volume{}, connector.Invalid("target_port", "missing")
	}
	p, err := makePortal("target_portal", "target_port", "transport_type", addr, port, tr)
	if err != nil {
		return Volume{}, err
	}
	return Volume{NQN: nqn, Portals: []Portal{p}}, nil
}

var transportRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,31}$`) })

// maxPortals bounds the controllers one attach may create.
const maxPortals = 16

func nqnValue(ci connector.ConnectionInfo, key string) (string, error) {
	s, err := ci.RequiredString(key)
	if err != nil {
		return "", err
	}
	if !ident.SubsystemNQN(s) {
		return "", connector.Invalid(key, "must be an NVMe qualified name, got %s", connector.Quote(s))
	}
	return s, nil
}

// parsePortalTriple reads one [address, port, transport] entry of portals.
func parsePortalTriple(key string, e any) (Portal, error) {
	list, ok := e.([]any)
	if !ok || len(list) != 3 {
		return Portal{}, connector.Invalid(key, "must be [address, port, transport]")
	}
	one := connector.ConnectionInfo{Data: map[string]any{
		key + "[0]": list[0], key + "[1]": list[1], key + "[2]": list[2],
	}}
	addr, err := one.RequiredString(key + "[0]")
	if err != nil {
		return Portal{}, err
	}
	port, _, err := one.Int(key + "[1]")
	if err != nil {
		return Portal{}, err
	}
	tr, err := one.RequiredString(key + "[2]")
	if err != nil {
		return Portal{}, err
	}
	return makePortal(key+"[0]", key+"[1]", key+"[2]", addr, port, tr)
}

func makePortal(addrKey, portKey, trKey, addr string, port int64, transport string) (Portal, error) {
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"))
	if err != nil || a.Zone() != "" {
		return Portal{}, connector.Invalid(addrKey, "must be an IP address, got %s", connector.Quote(addr))
	}
	if port < 1 || port > 65535 {
		return Portal{}, connector.Invalid(portKey, "must be a port 1-65535, got %d", port)
	}
	tr, err := transportOf(trKey, transport)
	if err != nil {
		return Portal{}, err
	}
	return Portal{Address: a.Unmap().String(), Port: int(port), Transport: tr}, nil
}

// transportOf maps a Cinder transport name to the kernel's: RoCEv2 (and
// rdma) are rdma, every other plain name is tcp, as os-brick reads them.
func transportOf(key, s string) (string, error) {
	if s != "" && !transportRE().MatchString(s) {
		return "", connector.Invalid(key, "must be a transport name such as tcp or RoCEv2, got %s", connector.Quote(s))
	}
	if strings.EqualFold(s, "RoCEv2") || strings.EqualFold(s, "rdma") {
		return TransportRDMA, nil
	}
	return TransportTCP, nil
}

func appendPortal(list []Portal, p Portal) []Portal {
	for _, q := range list {
		if q == p {
			return list
		}
	}
	return append(list, p)
}

// parseIDs reads ns_id, vol_uuid and volume_nguid; at least one must be given.
func parseIDs(ci connector.ConnectionInfo, v *Volume) error {
	nsid, ok, err := ci.Int("ns_id")
	if err != nil {
		return err
	}
	if ok && (nsid < 1 || nsid > 0xFFFFFFFE) {
		return connector.Invalid("ns_id", "must be 1-4294967294, got %d", nsid)
	}
	v.NSID = nsid
	if s, ok, err := ci.String("vol_uuid"); err != nil {
		return err
	} else if ok && s != "" {
		u, hex, valid := parseVolUUID(s)
		if !valid {
			return connector.Invalid("vol_uuid", "must be a UUID (or 32 hex digits), got %s", connector.Quote(s))
		}
		v.UUID, v.UUIDHex = u, hex
	}
	if s, ok, err := ci.String("volume_nguid"); err != nil {
		return err
	} else if ok && s != "" {
		g, valid := ParseNGUID(s)
		if !valid {
			return connector.Invalid("volume_nguid", "must be 32 hex digits, got %s", connector.Quote(s))
		}
		v.NGUID = g
	}
	if s, ok, err := ci.String("host_nqn"); err != nil {
		return err
	} else if ok && s != "" {
		if !ident.NQN(s) || strings.ContainsAny(s, ",=") {
			return connector.Invalid("host_nqn", "must be an NVMe qualified name, got %s", connector.Quote(s))
		}
		v.HostNQN = s
	}
	return nil
}

// hasID reports whether the info names its namespace; without an ID the
// subsystem's only namespace is the volume's.
func (v Volume) hasID() bool { return v.NSID != 0 || v.UUID != "" || v.NGUID != "" }

// parseVolUUID reads vol_uuid: a UUID, or the same 128 bits as 32 hex
// digits without dashes (hex true), returned in the dashed form sysfs uses.
func parseVolUUID(s string) (uuid string, hex, ok bool) {
	if u, ok := ident.ParseUUID(s); ok {
		return u, false, true
	}
	g, ok := ParseNGUID(s)
	if !ok || strings.Contains(s, "-") {
		return "", false, false
	}
	return g[0:8] + "-" + g[8:12] + "-" + g[12:16] + "-" + g[16:20] + "-" + g[20:], true, true
}

// ParseNGUID normalises an NGUID as sysfs prints it or Cinder sends it
// (with or without dashes, any case) to 32 lowercase hex digits.
func ParseNGUID(s string) (string, bool) {
	g := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), "-", ""))
	if len(g) != 32 {
		return "", false
	}
	if _, err := hex.DecodeString(g); err != nil {
		return "", false
	}
	return g, true
}

// portString renders a port for the kernel's trsvcid option.
func portString(p int) string { return strconv.Itoa(p) }
