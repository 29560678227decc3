package connector

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"
)

// Resolver looks host names up. *net.Resolver is one; tests use a fake.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// DefaultResolveTimeout bounds one host name lookup when the caller sets none.
const DefaultResolveTimeout = 5 * time.Second

// maxResolvedAddrs caps what one name may expand to: every address becomes
// a login carrying the CHAP secret, so DNS must not fan brick out at will.
const maxResolvedAddrs = 8

// ResolveHost looks name up within timeout and returns its addresses in the
// resolver's order, IPv4-mapped addresses unmapped, duplicates and
// unspecified, multicast or broadcast addresses left out.
func ResolveHost(ctx context.Context, r Resolver, name string, timeout time.Duration) ([]netip.Addr, error) {
	if r == nil {
		r = net.DefaultResolver
	}
	if timeout <= 0 {
		timeout = DefaultResolveTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", name)
	if err != nil {
		return nil, fmt.Errorf("resolve host name %s (within %s): %w", Quote(name), timeout, err)
	}
	broadcast := netip.AddrFrom4([4]byte{255, 255, 255, 255})
	var out []netip.Addr
	seen := map[netip.Addr]bool{}
	for _, a := range addrs {
		a = a.Unmap()
		if !a.IsValid() || a.IsUnspecified() || a.IsMulticast() || a == broadcast || seen[a] {
			continue
		}
		seen[a] = true
		out = append(out, a)
		if len(out) == maxResolvedAddrs {
			break
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("resolve host name %s: no usable address", Quote(name))
	}
	return out, nil
}

// HostName reports whether s is a DNS host name as RFC 1123 writes one:
// dot-separated labels of letters, digits and inner hyphens, at most 253
// bytes, and not all digits in the last label (so "1.2.3" is no name).
func HostName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if !hostLabel(l) {
			return false
		}
	}
	last := labels[len(labels)-1]
	return strings.Trim(last, "0123456789") != ""
}

func hostLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for _, r := range l {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}
