package nfs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strings"

	"github.com/brick-storage/brick/connector"
)

// Export is an NFS share as mount(8) names it: server:/path.
type Export struct {
	// Host is a DNS name, an IPv4 address or an IPv6 address (without
	// brackets; a zone, if any, kept as "%zone").
	Host string
	// Path is the absolute, cleaned path on the server.
	Path string
}

// String is the mount source: host:/path, or [v6]:/path.
func (e Export) String() string {
	if strings.Contains(e.Host, ":") {
		return "[" + e.Host + "]:" + e.Path
	}
	return e.Host + ":" + e.Path
}

// ID names the export in mount point and state file names: the first 128
// bits of the SHA-256 of its canonical form, so two spellings that clean to
// the same export share one mount and nothing from the (untrusted) export
// string ends up in a path.
func (e Export) ID() string {
	sum := sha256.Sum256([]byte(e.String()))
	return hex.EncodeToString(sum[:16])
}

// Limits far above real exports, far below what could hurt.
const (
	maxExportLen    = 1024
	maxHostLen      = 253
	maxNameLen      = 1024
	maxComponentLen = 255
	maxNameDepth    = 16
)

// ParseExport validates an export given as host:/path or [IPv6]:/path.
// The host must be a DNS name or an IP address, the path absolute with no
// "." or ".." component and only characters from a conservative set, plus
// spaces, raw (as Cinder's remotefs hands out a share it read as \040) or
// written \040 (mount gets them inside one argv element); the result can
// never be read as an option by mount or name a second source. Repeated and trailing slashes are cleaned away.
func ParseExport(s string) (Export, error) {
	const key = "export"
	if s == "" {
		return Export{}, connector.Invalid(key, "missing")
	}
	if len(s) > maxExportLen {
		return Export{}, connector.Invalid(key, "longer than %d bytes", maxExportLen)
	}
	var host, path string
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return Export{}, connector.Invalid(key, "%s: unterminated [IPv6] address", connector.Quote(s))
		}
		host = s[1:end]
		rest := s[end+1:]
		if !strings.HasPrefix(rest, ":") {
			return Export{}, connector.Invalid(key, "%s: want [IPv6]:/path", connector.Quote(s))
		}
		path = rest[1:]
		addr, err := netip.ParseAddr(host)
		if err != nil || !addr.Is6() {
			return Export{}, connector.Invalid(key, "%s: %s is not an IPv6 address", connector.Quote(s), connector.Quote(host))
		}
		if z := addr.Zone(); z != "" && !validZone(z) {
			return Export{}, connector.Invalid(key, "%s: bad IPv6 zone %s", connector.Quote(s), connector.Quote(z))
		}
		host = addr.String()
	} else {
		var ok bool
		host, path, ok = strings.Cut(s, ":")
		if !ok {
			return Export{}, connector.Invalid(key, "%s: want host:/path", connector.Quote(s))
		}
		if !strings.HasPrefix(path, "/") && strings.Contains(path, ":") {
			return Export{}, connector.Invalid(key, "%s: an IPv6 address must be in brackets: [addr]:/path", connector.Quote(s))
		}
		if err := validHost(host); err != nil {
			return Export{}, connector.Invalid(key, "%s: host %s", connector.Quote(s), err)
		}
		if addr, err := netip.ParseAddr(host); err == nil {
			host = addr.String()
		} else {
			host = strings.ToLower(host)
		}
	}
	clean, err := cleanServerPath(path)
	if err != nil {
		return Export{}, connector.Invalid(key, "%s: path %s", connector.Quote(s), err)
	}
	return Export{Host: host, Path: clean}, nil
}

// validHost accepts an IPv4 address or an RFC 1123 host name.
func validHost(h string) error {
	if h == "" {
		return fmt.Errorf("is empty")
	}
	if len(h) > maxHostLen {
		return fmt.Errorf("is longer than %d bytes", maxHostLen)
	}
	if addr, err := netip.ParseAddr(h); err == nil {
		if !addr.Is4() {
			return fmt.Errorf("%s: an IPv6 address must be in brackets", connector.Quote(h))
		}
		return nil
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("%s is not a host name", connector.Quote(h))
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("%s is not a host name (label starts or ends with '-')", connector.Quote(h))
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(isAlnum(c) || c == '-') {
				return fmt.Errorf("%s is not a host name (character %q)", connector.Quote(h), c)
			}
		}
	}
	return nil
}

func validZone(z string) bool {
	if len(z) > 64 {
		return false
	}
	for i := 0; i < len(z); i++ {
		c := z[i]
		if !(isAlnum(c) || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return z[0] != '-'
}

// cleanServerPath checks an export path and removes repeated and trailing
// slashes; "." and ".." components are refused rather than resolved.
func cleanServerPath(p string) (string, error) {
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("must be absolute")
	}
	var parts []string
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "":
			continue
		case ".", "..":
			return "", fmt.Errorf("has a %q component", c)
		}
		dec, err := decodeComponent(c)
		if err != nil {
			return "", err
		}
		if len(dec) > maxComponentLen {
			return "", fmt.Errorf("has a component longer than %d bytes", maxComponentLen)
		}
		parts = append(parts, dec)
	}
	return "/" + strings.Join(parts, "/"), nil
}

// spaceEscape is how Cinder's remotefs shares config (and mountinfo) spell
// a space in an export, since white space separates fields there.
const spaceEscape = `\040`

// decodeComponent turns each \040 into a space and refuses any other
// character outside pathChar, backslashes and white space other than a
// space included.
func decodeComponent(c string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(c); i++ {
		switch {
		case strings.HasPrefix(c[i:], spaceEscape):
			b.WriteByte(' ')
			i += len(spaceEscape) - 1
		case pathChar(c[i]):
			b.WriteByte(c[i])
		default:
			return "", fmt.Errorf("has character %q, not allowed", c[i])
		}
	}
	return b.String(), nil
}

// pathChar is the set allowed in server paths: what real exports use, and
// nothing that is a quote, a backslash, a glob or white space but a space.
func pathChar(c byte) bool {
	return isAlnum(c) || strings.IndexByte("._-+~@%=,: ", c) >= 0
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// ParseName validates the volume file's name: a relative path of at most
// maxNameDepth components, each of letters, digits and . _ + @ - and not
// starting with '.' or '-' (so no "..", no hidden files, nothing a command
// would take for an option). Cinder sends "volume-<uuid>" and, for
// snapshots, "volume-<uuid>.<snapshot-uuid>".
func ParseName(s string) (string, error) {
	const key = "name"
	switch {
	case s == "":
		return "", connector.Invalid(key, "missing")
	case len(s) > maxNameLen:
		return "", connector.Invalid(key, "longer than %d bytes", maxNameLen)
	case strings.HasPrefix(s, "/"):
		return "", connector.Invalid(key, "%s: must be relative to the export", connector.Quote(s))
	}
	parts := strings.Split(s, "/")
	if len(parts) > maxNameDepth {
		return "", connector.Invalid(key, "%s: more than %d components", connector.Quote(s), maxNameDepth)
	}
	for _, c := range parts {
		switch {
		case c == "":
			return "", connector.Invalid(key, "%s: empty component", connector.Quote(s))
		case c == "." || c == "..":
			return "", connector.Invalid(key, "%s: has a %q component", connector.Quote(s), c)
		case c[0] == '.' || c[0] == '-':
			return "", connector.Invalid(key, "%s: component starts with %q", connector.Quote(s), c[0])
		case len(c) > maxComponentLen:
			return "", connector.Invalid(key, "%s: component longer than %d bytes", connector.Quote(s), maxComponentLen)
		}
		for i := 0; i < len(c); i++ {
			if !(isAlnum(c[i]) || strings.IndexByte("._+@-", c[i]) >= 0) {
				return "", connector.Invalid(key, "%s: character %q not allowed", connector.Quote(s), c[i])
			}
		}
	}
	return s, nil
}
