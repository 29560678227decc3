package rbd

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/secret"
)

// Volume is an RBD connection info, validated: every field is safe to put
// on a command line or into a Ceph config file.
type Volume struct {
	Pool      string
	Namespace string // "" for the default namespace
	Image     string
	// Monitors are "host:port" (IPv6 bracketed) addresses in Cinder's
	// order; empty means the host's Ceph config names them.
	Monitors []string
	// User is the cephx id without "client." ("" lets Ceph pick admin).
	User string
	// Cluster names /etc/ceph/<Cluster>.conf and its keyrings.
	Cluster string
	// Key is the cephx secret from the connection info's keyring, or "".
	// It is a secret: never log or store it.
	Key secret.Value
	// Keyring is the raw keyring value (a secret too), kept only so it can
	// be registered with a Redactor.
	Keyring  secret.Value
	ReadOnly bool
	// Discard, SecretUUID, SecretType and QoS are Cinder's and are passed
	// through for callers; mapping does not use them.
	Discard     *bool
	SecretUUID  string
	SecretType  string
	QoS         map[string]any
	AuthEnabled *bool
	VolumeID    string
	// Ignored names the pass-through keys whose values could not be read
	// ("key: reason"); they are left out, not refused, since mapping does
	// not depend on them.
	Ignored []string
}

// Spec is the image spec rbd takes: pool/image or pool/namespace/image.
func (v Volume) Spec() string {
	if v.Namespace != "" {
		return v.Pool + "/" + v.Namespace + "/" + v.Image
	}
	return v.Pool + "/" + v.Image
}

// Secrets are the values a Redactor must mask once this volume is known.
func (v Volume) Secrets() []string {
	var out []string
	for _, s := range []secret.Value{v.Keyring, v.Key} {
		if !s.IsZero() {
			out = append(out, s.Reveal())
		}
	}
	return out
}

const (
	defaultCluster = "ceph"
	maxNameLen     = 128
	maxUserLen     = 64
	maxClusterLen  = 64
	maxMonitors    = 16
	maxKeyringLen  = 4096
)

// Ceph accepts more in pool and image names than this, but Cinder creates
// "volumes"/"volume-<uuid>"; a strict charset keeps option and path
// injection out (no "/", "@", whitespace, leading "-" or ".").
var (
	nameRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`) })
	clusterRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`) })
	// A hostname: RFC 1123 labels.
	hostnameRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)
	})
)

// ParseVolume validates an RBD connection info. Errors name the key and
// never repeat the keyring.
func ParseVolume(info connector.ConnectionInfo) (Volume, error) {
	var v Volume
	name, err := info.RequiredString("name")
	if err != nil {
		return v, err
	}
	if v.Pool, v.Namespace, v.Image, err = parseName(name); err != nil {
		return v, err
	}
	if v.Monitors, err = parseMonitors(info); err != nil {
		return v, err
	}
	if v.User, err = parseUser(info); err != nil {
		return v, err
	}
	if v.Cluster, err = parseCluster(info); err != nil {
		return v, err
	}
	keyring, _, err := info.String("keyring")
	if err != nil {
		return v, err
	}
	if keyring == secret.Mask {
		// A record stores the connection info masked; unmapping needs no
		// key, and anything else falls back to the host's keyring.
		v.Ignored = append(v.Ignored, "keyring: masked (a stored record); the host's keyring is used")
		keyring = ""
	}
	if keyring != "" {
		var key string
		if v.User, key, err = keyFromKeyring(keyring, v.User); err != nil {
			return v, err
		}
		v.Keyring, v.Key = secret.New(keyring), secret.New(key)
	}
	if v.ReadOnly, err = info.ReadOnly(); err != nil {
		return v, err
	}
	v.passThrough(info)
	return v, nil
}

// passThrough reads the keys brick hands on but never acts on (Nova's
// libvirt secret reference, discard, QoS, labels). A value it cannot read
// is noted in Ignored instead of failing an attach that does not need it,
// as os-brick, which never looks at them, would attach.
func (v *Volume) passThrough(info connector.ConnectionInfo) {
	note := func(err error) {
		if err != nil {
			v.Ignored = append(v.Ignored, err.Error())
		}
	}
	var err error
	v.Discard, err = optionalBool(info, "discard")
	note(err)
	v.AuthEnabled, err = optionalBool(info, "auth_enabled")
	note(err)
	v.SecretType, v.SecretUUID, err = parseSecretRef(info)
	note(err)
	v.VolumeID, err = info.VolumeID()
	note(err)
	v.QoS, _, err = info.Object("qos_specs")
	note(err)
}

// parseCluster returns cluster_name, defaultCluster when absent.
func parseCluster(info connector.ConnectionInfo) (string, error) {
	cluster, _, err := info.String("cluster_name")
	if err != nil {
		return "", err
	}
	if cluster == "" {
		return defaultCluster, nil
	}
	if len(cluster) > maxClusterLen || !clusterRE().MatchString(cluster) {
		return "", connector.Invalid("cluster_name", "must be letters, digits, '-' and '_' (at most %d), got %s", maxClusterLen, connector.Quote(cluster))
	}
	return cluster, nil
}

// optionalBool returns the boolean key, nil when absent.
func optionalBool(info connector.ConnectionInfo, key string) (*bool, error) {
	b, ok, err := info.Bool(key)
	if err != nil || !ok {
		return nil, err
	}
	return &b, nil
}

// parseSecretRef returns secret_type and secret_uuid (Nova's libvirt
// secret reference; brick only checks them).
func parseSecretRef(info connector.ConnectionInfo) (string, string, error) {
	typ, _, err := info.String("secret_type")
	if err != nil {
		return "", "", err
	}
	if len(typ) > 64 {
		return "", "", connector.Invalid("secret_type", "longer than 64 bytes")
	}
	s, _, err := info.String("secret_uuid")
	if err != nil || s == "" {
		return typ, "", err
	}
	u, ok := ident.ParseUUID(s)
	if !ok {
		return "", "", connector.Invalid("secret_uuid", "must be a UUID, got %s", connector.Quote(s))
	}
	return typ, u, nil
}

// parseName splits "pool/image" or "pool/namespace/image".
func parseName(name string) (pool, ns, image string, err error) {
	parts := strings.Split(name, "/")
	switch len(parts) {
	case 2:
		pool, image = parts[0], parts[1]
	case 3:
		pool, ns, image = parts[0], parts[1], parts[2]
	default:
		return "", "", "", connector.Invalid("name", "must be \"pool/image\" or \"pool/namespace/image\", got %s", connector.Quote(name))
	}
	for _, p := range []struct{ what, val string }{{"pool", pool}, {"namespace", ns}, {"image", image}} {
		if p.what == "namespace" && len(parts) == 2 {
			continue
		}
		if err := checkName(p.val); err != nil {
			return "", "", "", connector.Invalid("name", "%s %s: %s", p.what, connector.Quote(p.val), err)
		}
	}
	return pool, ns, image, nil
}

func checkName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty")
	case len(s) > maxNameLen:
		return fmt.Errorf("longer than %d bytes", maxNameLen)
	case !nameRE().MatchString(s):
		return fmt.Errorf("may hold only letters, digits, '.', '_' and '-' and must start with a letter, digit or '_'")
	}
	return nil
}

// parseMonitors pairs hosts with ports. Cinder sends both as lists of
// strings; ports may also be numbers. A host without a port keeps Ceph's
// default (msgr v1 6789 or v2 3300, decided by Ceph).
func parseMonitors(info connector.ConnectionInfo) ([]string, error) {
	hosts, _, err := info.Strings("hosts")
	if err != nil {
		return nil, err
	}
	ports, hasPorts, err := info.Ints("ports")
	if err != nil {
		return nil, err
	}
	if len(hosts) > maxMonitors {
		return nil, connector.Invalid("hosts", "more than %d monitors", maxMonitors)
	}
	if hasPorts && len(ports) != len(hosts) {
		return nil, connector.Invalid("ports", "has %d entries for %d hosts", len(ports), len(hosts))
	}
	out := make([]string, 0, len(hosts))
	for i, h := range hosts {
		key := fmt.Sprintf("hosts[%d]", i)
		addr, err := normalizeHost(h)
		if err != nil {
			return nil, connector.Invalid(key, "%s: %s", connector.Quote(h), err)
		}
		if hasPorts {
			p := ports[i]
			if p < 1 || p > 65535 {
				return nil, connector.Invalid(fmt.Sprintf("ports[%d]", i), "must be 1..65535, got %d", p)
			}
			addr += ":" + strconv.FormatInt(p, 10)
		}
		out = append(out, addr)
	}
	return out, nil
}

// normalizeHost returns an IPv4 address, a bracketed IPv6 address or a
// hostname, as Ceph's mon_host wants them.
func normalizeHost(h string) (string, error) {
	if h == "" {
		return "", fmt.Errorf("empty")
	}
	bare := h
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		bare = h[1 : len(h)-1]
	}
	if a, err := netip.ParseAddr(bare); err == nil {
		if a.Zone() != "" {
			return "", fmt.Errorf("zoned IPv6 addresses are not supported")
		}
		if a.Is4() {
			return a.String(), nil
		}
		return "[" + a.String() + "]", nil
	}
	if bare != h {
		return "", fmt.Errorf("not an IPv6 address inside brackets")
	}
	if len(h) > 253 || !hostnameRE().MatchString(h) {
		return "", fmt.Errorf("not an IP address or host name")
	}
	return h, nil
}

func parseUser(info connector.ConnectionInfo) (string, error) {
	user, _, err := info.String("auth_username")
	if err != nil {
		return "", err
	}
	// Some tools write the full entity name.
	user = strings.TrimPrefix(user, "client.")
	if user == "" {
		return "", nil
	}
	if len(user) > maxUserLen || !nameRE().MatchString(user) {
		return "", connector.Invalid("auth_username", "must be letters, digits, '.', '_' and '-' (at most %d), got %s", maxUserLen, connector.Quote(user))
	}
	return user, nil
}

// keyFromKeyring takes the cephx key out of a keyring value. Cinder (with
// rbd_keyring_conf) and cinderlib send a keyring file's contents:
//
//	[client.cinder]
//		key = AQD...==
//		caps mon = "profile rbd"
//
// A bare base64 key is accepted too. Only the key for client.<user> is
// used (the only section, when user is "", which then names the user),
// and brick writes its own
// keyring from it, so nothing else in the value reaches Ceph.
func keyFromKeyring(keyring, user string) (entity, key string, err error) {
	if len(keyring) > maxKeyringLen {
		return "", "", connector.Invalid("keyring", "longer than %d bytes", maxKeyringLen)
	}
	trimmed := strings.TrimSpace(keyring)
	if !strings.Contains(trimmed, "[") {
		if !validKey(trimmed) {
			return "", "", connector.Invalid("keyring", "is neither a keyring nor a base64 cephx key")
		}
		return user, trimmed, nil
	}
	keys := map[string]string{}
	var order []string
	section := ""
	for n, line := range strings.Split(keyring, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasPrefix(line, "[") {
			if !strings.HasSuffix(line, "]") {
				return "", "", connector.Invalid("keyring", "line %d: unterminated section header", n+1)
			}
			section = strings.TrimSpace(line[1 : len(line)-1])
			continue
		}
		k, val, ok := strings.Cut(line, "=")
		if !ok {
			return "", "", connector.Invalid("keyring", "line %d: not \"name = value\"", n+1)
		}
		if strings.TrimSpace(k) != "key" {
			continue // caps and the like: Ceph's business, not the client's
		}
		if section == "" {
			return "", "", connector.Invalid("keyring", "line %d: key outside a [client.NAME] section", n+1)
		}
		val = strings.TrimSpace(val)
		if !validKey(val) {
			return "", "", connector.Invalid("keyring", "line %d: key of [%s] is not a base64 cephx key", n+1, connector.Quote(section))
		}
		if _, dup := keys[section]; !dup {
			order = append(order, section)
		}
		keys[section] = val
	}
	if user != "" {
		if k, ok := keys["client."+user]; ok {
			return user, k, nil
		}
		return "", "", connector.Invalid("keyring", "has no key for client.%s", user)
	}
	if len(order) == 1 {
		id, ok := strings.CutPrefix(order[0], "client.")
		if !ok || len(id) > maxUserLen || !nameRE().MatchString(id) {
			return "", "", connector.Invalid("keyring", "section %s is not a valid [client.NAME]", connector.Quote(order[0]))
		}
		return id, keys[order[0]], nil
	}
	return "", "", connector.Invalid("keyring", "holds %d keys and auth_username does not say which to use", len(order))
}

// validKey accepts a cephx secret as Ceph encodes it: base64 of a
// little-endian u16 type (0 none, 1 AES), an 8-byte creation time, a u16
// length and that many secret bytes. Ceph rejects anything else with an
// error that quotes the key, so it is refused here first.
func validKey(s string) bool {
	if len(s) < 16 || len(s) > 512 {
		return false
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) < 12 {
		return false
	}
	typ := binary.LittleEndian.Uint16(b[0:2])
	n := binary.LittleEndian.Uint16(b[10:12])
	return typ <= 1 && n > 0 && int(n) == len(b)-12
}
