package host

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Network facts come from /proc files rather than netlink or a socket, so
// get-connector opens no socket and reads a fixture tree or a container's
// view of the host the same way. /proc/1/net is init's network namespace:
// the host's, when brick runs in a container that sees the host's /proc.

// IfAddr is an address configured on an interface.
type IfAddr struct {
	Interface string
	Addr      netip.Addr
	Global    bool // IPv6 global scope (IPv4 addresses are always true)
}

// DefaultRouteInterfaces returns the interfaces holding the IPv4 and IPv6
// default routes ("" when there is none).
func (s System) DefaultRouteInterfaces() (v4, v6 string) {
	if data, err := s.readNet("route"); err == nil {
		v4 = defaultIface4(parseRoutes4(data))
	}
	if data, err := s.readNet("ipv6_route"); err == nil {
		v6 = parseDefaultRoute6(data)
	}
	return v4, v6
}

// DefaultRouteIPv4 returns the first IPv4 address on the interface holding
// the IPv4 default route, from route and fib_trie alone: on most hosts the
// answer to "which address", without the three further files
// InterfaceAddrs and DefaultRouteInterfaces read.
func (s System) DefaultRouteIPv4() (netip.Addr, bool) {
	data, err := s.readNet("route")
	if err != nil {
		return netip.Addr{}, false
	}
	routes := parseRoutes4(data)
	def := defaultIface4(routes)
	if def == "" {
		return netip.Addr{}, false
	}
	trie, err := s.readNet("fib_trie")
	if err != nil {
		return netip.Addr{}, false
	}
	for _, a := range parseLocalAddrs4(trie) {
		if !a.IsLoopback() && interfaceFor(a, routes) == def {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// defaultIface4 is the interface of the first IPv4 default route.
func defaultIface4(routes []route4) string {
	for _, r := range routes {
		if r.prefix.Bits() == 0 {
			return r.iface
		}
	}
	return ""
}

// InterfaceAddrs lists IPv4 and IPv6 addresses per interface, loopback excluded.
func (s System) InterfaceAddrs() ([]IfAddr, error) {
	var out []IfAddr
	var firstErr error
	trie, err := s.readNet("fib_trie")
	if err == nil {
		var routes []route4
		if data, rerr := s.readNet("route"); rerr == nil {
			routes = parseRoutes4(data)
		}
		for _, a := range parseLocalAddrs4(trie) {
			if a.IsLoopback() {
				continue
			}
			out = append(out, IfAddr{Interface: interfaceFor(a, routes), Addr: a, Global: true})
		}
	} else {
		firstErr = err
	}
	if data, err := s.readNet("if_inet6"); err == nil {
		out = append(out, parseIfInet6(data)...)
	} else if firstErr == nil {
		firstErr = err
	}
	if len(out) == 0 && firstErr != nil {
		return nil, fmt.Errorf("read interface addresses: %w", firstErr)
	}
	return out, nil
}

func (s System) readNet(name string) ([]byte, error) {
	data, err := s.fs.ReadFile("/proc/1/net/" + name)
	if err != nil {
		data, err = s.fs.ReadFile("/proc/net/" + name)
	}
	return data, err
}

type route4 struct {
	iface   string
	prefix  netip.Prefix
	gateway bool
}

// parseRoutes4 reads /proc/net/route: hex little-endian destination and mask.
func parseRoutes4(data []byte) []route4 {
	var routes []route4
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 || fields[0] == "Iface" {
			continue
		}
		dst, ok1 := hexAddr4(fields[1])
		gw, ok2 := hexAddr4(fields[2])
		mask, ok3 := hexAddr4(fields[7])
		if !ok1 || !ok2 || !ok3 {
			continue
		}
		ones := 0
		m := binary.BigEndian.Uint32(mask.AsSlice())
		for m&0x80000000 != 0 {
			ones++
			m <<= 1
		}
		p, err := dst.Prefix(ones)
		if err != nil {
			continue
		}
		routes = append(routes, route4{iface: fields[0], prefix: p, gateway: !gw.IsUnspecified()})
	}
	return routes
}

func hexAddr4(s string) (netip.Addr, bool) {
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil || len(s) != 8 {
		return netip.Addr{}, false
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(v))
	return netip.AddrFrom4(b), true
}

// parseLocalAddrs4 picks the "/32 host LOCAL" leaves of /proc/net/fib_trie:
// the addresses configured on this host.
func parseLocalAddrs4(data []byte) []netip.Addr {
	var out []netip.Addr
	seen := map[netip.Addr]bool{}
	var last netip.Addr
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "|-- "); ok {
			last, _ = netip.ParseAddr(rest)
			continue
		}
		if strings.HasPrefix(line, "/32 host LOCAL") && last.IsValid() && !seen[last] {
			seen[last] = true
			out = append(out, last)
		}
	}
	return out
}

// interfaceFor finds the interface of a local address: the one whose
// directly connected route (no gateway) holds it, longest prefix first.
func interfaceFor(a netip.Addr, routes []route4) string {
	best, bits := "", -1
	for _, r := range routes {
		if !r.gateway && r.prefix.Contains(a) && r.prefix.Bits() > bits {
			best, bits = r.iface, r.prefix.Bits()
		}
	}
	return best
}

// parseIfInet6 reads /proc/net/if_inet6: address, index, prefix, scope, flags, name.
func parseIfInet6(data []byte) []IfAddr {
	var out []IfAddr
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue
		}
		raw, err := hex.DecodeString(fields[0])
		if err != nil || len(raw) != 16 {
			continue
		}
		a := netip.AddrFrom16([16]byte(raw))
		if a.IsLoopback() {
			continue
		}
		out = append(out, IfAddr{Interface: fields[5], Addr: a, Global: fields[3] == "00"})
	}
	return out
}

// parseDefaultRoute6 finds the interface of the ::/0 route in /proc/net/ipv6_route.
func parseDefaultRoute6(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 {
			continue
		}
		if fields[0] == strings.Repeat("0", 32) && fields[1] == "00" && fields[9] != "lo" {
			return fields[9]
		}
	}
	return ""
}
