package ironicapi

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/brick-storage/brick/ident"
)

// Ironic stores whatever it is sent for a connector's type and ID and a
// target's volume_type, boot_index and volume_id: it is the client's job to
// refuse nonsense before it reaches the database (ironicclient checks only
// the connector type).

// Connector types Ironic's volume API knows.
const (
	ConnectorIQN       = "iqn"
	ConnectorIP        = "ip"
	ConnectorMAC       = "mac"
	ConnectorWWNN      = "wwnn"
	ConnectorWWPN      = "wwpn"
	ConnectorPort      = "port"
	ConnectorPortgroup = "portgroup"
)

// ConnectorTypes lists the connector types, in ironicclient's order.
var ConnectorTypes = []string{ConnectorIQN, ConnectorIP, ConnectorMAC, ConnectorWWNN, ConnectorWWPN, ConnectorPort, ConnectorPortgroup}

// VolumeTypes are the volume_type values brick accepts for a target:
// Cinder's driver_volume_type names for block and file storage.
var VolumeTypes = []string{"iscsi", "iser", "fibre_channel", "rbd", "nfs", "nvmeof", "glusterfs", "scaleio", "quobyte", "vzstorage", "local"}

var (
	// Ironic's logical names (RFC 3986 unreserved characters).
	nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._~-]{1,255}$`) })
	// Field names for fields= and sort_key=.
	fieldRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z_]{0,63}$`) })
)

// ValidNodeIdent reports whether s can name a node: a UUID or an Ironic
// logical name. It keeps path separators and query characters out of URLs.
func ValidNodeIdent(s string) bool { return ident.IsUUID(s) || nameRE().MatchString(s) }

// NormalizeConnectorID checks id against the format of connector type typ
// and returns the form brick stores: lowercase MAC with colons, WWNs as 16
// lowercase hex digits without colons or 0x (what Cinder's FC drivers
// compare), the canonical IP, a lowercase UUID. IQNs keep their case.
func NormalizeConnectorID(typ, id string) (string, error) {
	if !slices.Contains(ConnectorTypes, typ) {
		return "", fmt.Errorf("connector type %s is not one of %s", quote(typ), strings.Join(ConnectorTypes, ", "))
	}
	if err := checkConnectorIDText(id); err != nil {
		return "", err
	}
	bad := func(want string) (string, error) {
		return "", fmt.Errorf("connector ID %s is not %s (type %s)", quote(id), want, typ)
	}
	switch typ {
	case ConnectorIQN:
		if !ident.IQN(id) {
			return bad("an iSCSI name (iqn.YYYY-MM.domain[:id], eui.<16 hex> or naa.<16|32 hex>)")
		}
		return id, nil
	case ConnectorIP:
		a, err := netip.ParseAddr(id)
		if err != nil || a.Zone() != "" {
			return bad("an IPv4 or IPv6 address")
		}
		return a.String(), nil
	case ConnectorMAC:
		hw, err := net.ParseMAC(id)
		if err != nil || len(hw) != 6 {
			return bad("a MAC address (aa:bb:cc:dd:ee:ff)")
		}
		return hw.String(), nil
	case ConnectorWWNN, ConnectorWWPN:
		if w, ok := ident.NormalizeWWN(id); ok {
			return w, nil
		}
		return bad("a WWN (16 hex digits, colons allowed)")
	default: // port, portgroup: an Ironic port or portgroup UUID
		if !ident.IsUUID(id) {
			return bad("a " + typ + " UUID")
		}
		return strings.ToLower(id), nil
	}
}

// checkConnectorIDText is the check every connector ID passes, whatever its type.
func checkConnectorIDText(id string) error {
	if id == "" || len(id) > 255 || strings.HasPrefix(id, "-") || strings.ContainsFunc(id, ident.IsControl) {
		return fmt.Errorf("connector ID %s is empty, too long, starts with '-' or holds control characters", quote(id))
	}
	return nil
}

// ValidVolumeType reports whether t is a known volume_type.
func ValidVolumeType(t string) bool { return slices.Contains(VolumeTypes, t) }

// keyRE is what Ironic's JSON-patch schema allows in a path element
// (^(/[\w-]+)+$): a key outside it could be created but never changed or
// removed again, so brick refuses it up front.
var keyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,255}$`) })

// checkKV validates extra/properties keys.
func checkKV(field string, m map[string]any) error {
	for k := range m {
		if !keyRE().MatchString(k) {
			return fmt.Errorf("%s key %s must be 1-255 letters, digits, '_' or '-' (Ironic cannot patch other keys)", field, quote(k))
		}
	}
	return nil
}

// checkFields validates fields= names.
func checkFields(fields []string, allowed []string) error {
	for _, f := range fields {
		if !slices.Contains(allowed, f) {
			return fmt.Errorf("field %s is not one of %s", quote(f), strings.Join(allowed, ", "))
		}
	}
	return nil
}

func checkSort(key, dir string) error {
	if key != "" && !fieldRE().MatchString(key) {
		return fmt.Errorf("sort key %s is not a field name", quote(key))
	}
	if dir != "" && dir != "asc" && dir != "desc" {
		return fmt.Errorf("sort direction %s is not asc or desc", quote(dir))
	}
	return nil
}

// ConnectorFields and TargetFields are the fields Ironic returns and
// accepts in fields=.
var (
	ConnectorFields = []string{"uuid", "node_uuid", "type", "connector_id", "extra", "created_at", "updated_at"}
	TargetFields    = []string{"uuid", "node_uuid", "volume_type", "properties", "boot_index", "volume_id", "extra", "created_at", "updated_at"}
)

// pathRE is Ironic's own rule for JSON-patch paths.
var pathRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(/[A-Za-z0-9_-]+)+$`) })

func patchPath(prefix, key string) string { return prefix + "/" + key }
