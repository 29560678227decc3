package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	sampleRoute = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
		"eth0\t00000000\t0202000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n" +
		"eth0\t0002000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n" +
		"eth1\t0003000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
	sampleFibTrie = `Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 10.0.2.0/23 2 0 2
        +-- 10.0.2.0/24 2 0 2
           |-- 10.0.2.0
              /24 link UNICAST
           |-- 10.0.2.15
              /32 host LOCAL
        |-- 10.0.3.15
           /32 host LOCAL
     |-- 127.0.0.1
        /32 host LOCAL
Local:
  +-- 0.0.0.0/0 3 0 5
     |-- 10.0.2.15
        /32 host LOCAL
`
	sampleIfInet6 = "fd000000000000000000000000000002 02 40 00 00 eth0\n" +
		"fe80000000000000505400fffe123456 02 40 20 80 eth0\n" +
		"00000000000000000000000000000001 01 80 10 80 lo\n" +
		"20010db8000000000000000000000005 03 40 00 00 eth1\n"
	sampleIPv6Route = "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003 eth1\n"
)

func netFixture(t *testing.T) FS {
	root := t.TempDir()
	for name, content := range map[string]string{"route": sampleRoute, "fib_trie": sampleFibTrie, "if_inet6": sampleIfInet6, "ipv6_route": sampleIPv6Route} {
		p := filepath.Join(root, "proc/1/net", name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return NewFS(root)
}

func TestDefaultRouteAndAddrs(t *testing.T) {
	fsys := netFixture(t)
	v4, v6 := NewSystem(fsys).DefaultRouteInterfaces()
	require.Equal(t, "eth0", v4)
	require.Equal(t, "eth1", v6)

	addrs, err := NewSystem(fsys).InterfaceAddrs()
	require.NoError(t, err)
	got := map[string][]string{}
	for _, a := range addrs {
		got[a.Interface] = append(got[a.Interface], a.Addr.String())
	}
	require.Equal(t, []string{"10.0.2.15", "fd00::2", "fe80::5054:ff:fe12:3456"}, got["eth0"])
	require.Equal(t, []string{"10.0.3.15", "2001:db8::5"}, got["eth1"])
	require.NotContains(t, got, "lo")
}

func TestInterfaceAddrsMissingProc(t *testing.T) {
	_, err := NewSystem(NewFS(t.TempDir())).InterfaceAddrs()
	require.Error(t, err)
}

func FuzzNetParsers(f *testing.F) {
	f.Add([]byte(sampleRoute), []byte(sampleFibTrie), []byte(sampleIfInet6))
	f.Fuzz(func(t *testing.T, route, trie, inet6 []byte) {
		routes := parseRoutes4(route)
		for _, a := range parseLocalAddrs4(trie) {
			_ = interfaceFor(a, routes)
		}
		_ = parseIfInet6(inet6)
		_ = parseDefaultRoute6(inet6)
	})
}
