package connector

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/ident"
)

// fcHost writes one /sys/class/fc_host entry.
func fcHost(t *testing.T, root, name, state, wwpn, wwnn string) {
	dir := "/sys/class/fc_host/" + name
	if state != "" {
		hosttest.WriteFile(t, root, dir+"/port_state", state+"\n")
	}
	if wwpn != "" {
		hosttest.WriteFile(t, root, dir+"/port_name", wwpn+"\n")
	}
	if wwnn != "" {
		hosttest.WriteFile(t, root, dir+"/node_name", wwnn+"\n")
	}
}

func TestGather(t *testing.T) {
	tests := []struct {
		name      string
		fixture   func(t *testing.T, root string)
		opts      GatherOptions
		check     func(t *testing.T, p Properties)
		warnFiles []string
		wantErr   error
	}{
		{
			name:    "empty host",
			fixture: func(t *testing.T, root string) {},
			opts:    GatherOptions{Hostname: "h"},
			check: func(t *testing.T, p Properties) {
				require.Equal(t, Properties{Platform: machineName(runtime.GOARCH), OSType: runtime.GOOS, IP: "127.0.0.1", Host: "h", DoLocalAttach: true}, p)
			},
		},
		{
			name: "initiator with comments and CRLF",
			fixture: func(t *testing.T, root string) {
				hosttest.WriteFile(t, root, "/etc/iscsi/initiatorname.iscsi", "## DO NOT EDIT\r\n\r\n# InitiatorName=iqn.2000-01.com.example:commented\r\nInitiatorName=iqn.1993-08.org.debian:01:abc123\r\nInitiatorName=iqn.1993-08.org.debian:01:second\r\n")
			},
			check: func(t *testing.T, p Properties) { require.Equal(t, "iqn.1993-08.org.debian:01:abc123", p.Initiator) },
		},
		{
			name: "initiator file without name warns",
			fixture: func(t *testing.T, root string) {
				hosttest.WriteFile(t, root, "/etc/iscsi/initiatorname.iscsi", "# only a comment\n")
			},
			check:     func(t *testing.T, p Properties) { require.Empty(t, p.Initiator) },
			warnFiles: []string{initiatorNameFile},
		},
		{
			name: "fc hosts are connector/fc's",
			fixture: func(t *testing.T, root string) {
				fcHost(t, root, "host3", "Online", "0x21000024FF5A7B3C", "0x20000024ff5a7b3c")
			},
			check: func(t *testing.T, p Properties) { require.Empty(t, p.WWPNs); require.Empty(t, p.WWNNs) },
		},
		{
			name: "dmi and hostname (NVMe's keys are connector/nvmeof's)",
			fixture: func(t *testing.T, root string) {
				hosttest.WriteFile(t, root, "/sys/class/dmi/id/product_uuid", "4C4C4544-0051-3510-8052-B4C04F4B4E32\n")
				hosttest.WriteFile(t, root, "/etc/nvme/hostnqn", "nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0051-3510-8052-b4c04f4b4e32\n")
				hosttest.WriteFile(t, root, "/etc/nvme/hostid", "4c4c4544-0051-3510-8052-b4c04f4b4e32\n")
				hosttest.WriteFile(t, root, "/sys/module/nvme_core/parameters/multipath", "Y\n")
				hosttest.WriteFile(t, root, "/proc/sys/kernel/hostname", "node-7\n")
			},
			check: func(t *testing.T, p Properties) {
				require.Equal(t, "4c4c4544-0051-3510-8052-b4c04f4b4e32", p.SystemUUID)
				require.Empty(t, p.NQN, "connector.Gather alone reads no NVMe file")
				require.Nil(t, p.NVMeNativeMultipath)
				require.Equal(t, "node-7", p.Host)
			},
		},
		{
			name: "malformed dmi uuid warns",
			fixture: func(t *testing.T, root string) {
				hosttest.WriteFile(t, root, "/sys/class/dmi/id/product_uuid", "Not Settable\n")
			},
			check:     func(t *testing.T, p Properties) { require.Empty(t, p.SystemUUID) },
			warnFiles: []string{productUUIDFile},
		},
		{
			name: "root filesystem uuid through by-uuid links",
			fixture: func(t *testing.T, root string) {
				hosttest.WriteFile(t, root, "/proc/self/mountinfo", "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n")
				hosttest.WriteFile(t, root, "/dev/sda1", "")
				hosttest.WriteFile(t, root, "/dev/sda2", "")
				hosttest.Symlink(t, root, "/dev/disk/by-uuid/1111-2222", "../../sda2")
				hosttest.Symlink(t, root, "/dev/disk/by-uuid/9f0e3b5c-aaaa-bbbb-cccc-000000000001", "../../sda1")
			},
			check: func(t *testing.T, p Properties) { require.Equal(t, "9f0e3b5c-aaaa-bbbb-cccc-000000000001", p.UUID) },
		},
		{
			name: "multipath requested and multipathd running",
			fixture: func(t *testing.T, root string) {
				hosttest.WriteFile(t, root, "/proc/1/comm", "systemd\n")
				hosttest.WriteFile(t, root, "/proc/812/comm", "multipathd\n")
			},
			opts:  GatherOptions{Multipath: true, EnforceMultipath: true},
			check: func(t *testing.T, p Properties) { require.True(t, p.Multipath); require.True(t, p.EnforceMultipath) },
		},
		{
			name:      "multipath requested without multipathd warns",
			fixture:   func(t *testing.T, root string) { hosttest.WriteFile(t, root, "/proc/1/comm", "systemd\n") },
			opts:      GatherOptions{Multipath: true},
			check:     func(t *testing.T, p Properties) { require.False(t, p.Multipath) },
			warnFiles: []string{"multipathd"},
		},
		{
			name:    "multipath enforced without multipathd fails",
			fixture: func(t *testing.T, root string) {},
			opts:    GatherOptions{EnforceMultipath: true},
			wantErr: ErrMultipathdNotRunning,
		},
		{
			name:    "explicit ip",
			fixture: func(t *testing.T, root string) {},
			opts:    GatherOptions{IP: "2001:db8::1"},
			check:   func(t *testing.T, p Properties) { require.Equal(t, "2001:db8::1", p.IP) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tt.fixture(t, root)
			p, warns, err := Gather(host.NewFS(root), tt.opts)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, p)
			var files []string
			for _, w := range warns {
				files = append(files, w.File)
			}
			require.ElementsMatch(t, tt.warnFiles, files)
		})
	}
}

func TestGatherIPSelection(t *testing.T) {
	root := t.TempDir()
	hosttest.WriteFile(t, root, "/proc/1/net/route", "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n"+
		"eth1\t00000000\t0103000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"+
		"eth0\t0002000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"+
		"eth1\t0003000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n")
	hosttest.WriteFile(t, root, "/proc/1/net/fib_trie", "Local:\n  |-- 10.0.2.15\n     /32 host LOCAL\n  |-- 10.0.3.15\n     /32 host LOCAL\n")
	hosttest.WriteFile(t, root, "/proc/1/net/if_inet6", "20010db8000000000000000000000007 04 40 00 00 eth2\nfe800000000000000000000000000007 04 40 20 80 eth3\n")
	fsys := host.NewFS(root)

	p, _, err := Gather(fsys, GatherOptions{})
	require.NoError(t, err)
	require.Equal(t, "10.0.3.15", p.IP, "the default route is on eth1")

	p, _, err = Gather(fsys, GatherOptions{NIC: "eth0"})
	require.NoError(t, err)
	require.Equal(t, "10.0.2.15", p.IP)

	p, _, err = Gather(fsys, GatherOptions{NIC: "eth2"})
	require.NoError(t, err)
	require.Equal(t, "2001:db8::7", p.IP)

	_, _, err = Gather(fsys, GatherOptions{NIC: "eth3"})
	require.ErrorContains(t, err, "eth3 has no usable IP address")

	_, _, err = Gather(fsys, GatherOptions{IP: "not-an-ip"})
	require.ErrorContains(t, err, "not an IP address")
}

// TestPickIPShortcut checks that the default route's IPv4 address, read
// from two files, is what the walk over every address would pick.
func TestPickIPShortcut(t *testing.T) {
	const head = "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n"
	const def1 = "eth1\t00000000\t0103000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
	const net0 = "eth0\t0002000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
	const net1 = "eth1\t0003000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
	const trie = "Local:\n  |-- 10.0.2.15\n     /32 host LOCAL\n  |-- 10.0.3.15\n     /32 host LOCAL\n  |-- 10.0.3.16\n     /32 host LOCAL\n"
	const lo = "Local:\n  |-- 127.0.0.1\n     /32 host LOCAL\n"
	const inet6 = "20010db8000000000000000000000007 04 40 00 00 eth1\n20010db8000000000000000000000008 05 40 00 00 eth2\n"
	const route6 = "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000000 00000000 00000003 eth2\n"
	for _, tc := range []struct {
		name                       string
		route, trie, inet6, route6 string
		want                       string
	}{
		{"default route's interface", head + net0 + def1 + net1, trie, inet6, route6, "10.0.3.15"},
		{"IPv6 default route only", head + net0 + net1, trie, inet6, route6, "2001:db8::8"},
		{"no default route", head + net0 + net1, trie, inet6, "", "10.0.2.15"},
		{"default route, no IPv4 there", head + net0 + def1, trie, inet6, route6, "2001:db8::7"},
		{"IPv6 default, no IPv4 routes", head + net0, trie, inet6, route6, "2001:db8::8"},
		{"loopback only", head + def1, lo, "", "", "127.0.0.1"},
		{"no route file", "", trie, inet6, route6, "2001:db8::8"},
		{"nothing", "", "", "", "", "127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for name, data := range map[string]string{"route": tc.route, "fib_trie": tc.trie, "if_inet6": tc.inet6, "ipv6_route": tc.route6} {
				if data != "" {
					hosttest.WriteFile(t, root, "/proc/1/net/"+name, data)
				}
			}
			fsys := host.NewFS(root)
			got, err := pickIP(fsys, GatherOptions{})
			require.NoError(t, err)
			walked, err := walkIP(fsys, GatherOptions{})
			require.NoError(t, err)
			require.Equal(t, walked, got)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestValidators(t *testing.T) {
	for _, s := range []string{"iqn.2010-10.org.openstack:volume-8d5f", "iqn.1993-08.org.debian:01:abc", "eui.02004567A425678D", "naa.52004567BA64678D", "iqn.2001-04.com.example"} {
		require.True(t, ident.IQN(s), s)
	}
	for _, s := range []string{"", "iqn", "iqn.2010-10.org.openstack:vol;rm -rf", "-iqn.2010-10.org.x", "iqn.20100-10.org.x", "eui.123", "iqn.2010-10.org.x:a b", "iqn.2010-10.org.x:$(id)"} {
		require.False(t, ident.IQN(s), s)
	}
	for in, want := range map[string]string{"0x21000024FF5A7B3C": "21000024ff5a7b3c", "21:00:00:24:ff:5a:7b:3c": "21000024ff5a7b3c", " 21000024ff5a7b3c\n": "21000024ff5a7b3c"} {
		got, ok := ident.NormalizeWWN(in)
		require.True(t, ok, in)
		require.Equal(t, want, got)
	}
	for _, in := range []string{"", "0x", "21000024ff5a7b3", "21000024ff5a7b3cc", "g1000024ff5a7b3c"} {
		_, ok := ident.NormalizeWWN(in)
		require.False(t, ok, in)
	}
}

func FuzzParseInitiatorName(f *testing.F) {
	f.Add([]byte("InitiatorName=iqn.1993-08.org.debian:01:abc\n"))
	f.Add([]byte("# c\r\nInitiatorName = iqn.2004-10.com.ubuntu:01:x\r\n"))
	f.Add([]byte("InitiatorName=\n=\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		iqn, ok := ParseInitiatorName(data)
		if ok && !ident.IQN(iqn) {
			t.Fatalf("returned invalid IQN %q", iqn)
		}
	})
}

func FuzzSysfsValues(f *testing.F) {
	f.Add("0x21000024ff5a7b3c", "4C4C4544-0051-3510-8052-B4C04F4B4E32")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, wwn, uuid string) {
		if w, ok := ident.NormalizeWWN(wwn); ok && len(w) != 16 {
			t.Fatalf("bad normalised WWN %q", w)
		}
		if u, ok := ident.ParseUUID(uuid); ok && len(u) != 36 {
			t.Fatalf("bad UUID %q", u)
		}
	})
}

func BenchmarkGather(b *testing.B) {
	root := b.TempDir()
	hosttest.WriteFile(b, root, "/etc/iscsi/initiatorname.iscsi", "InitiatorName=iqn.1993-08.org.debian:01:abc123\n")
	for i, state := range []string{"Online", "Online", "Linkdown"} {
		dir := "/sys/class/fc_host/host" + string(rune('0'+i))
		hosttest.WriteFile(b, root, dir+"/port_state", state)
		hosttest.WriteFile(b, root, dir+"/port_name", "0x21000024ff5a7b3c")
		hosttest.WriteFile(b, root, dir+"/node_name", "0x20000024ff5a7b3c")
	}
	hosttest.WriteFile(b, root, "/sys/class/dmi/id/product_uuid", "4C4C4544-0051-3510-8052-B4C04F4B4E32")
	fsys := host.NewFS(root)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Gather(fsys, GatherOptions{Hostname: "h"}); err != nil {
			b.Fatal(err)
		}
	}
}
