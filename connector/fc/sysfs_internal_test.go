package fc

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPCIOf(t *testing.T) {
	for _, tc := range []struct{ in, platform, pci string }{
		{"/sys/devices/pci0000:00/0000:00:03.0/0000:05:00.3/host2/fc_host/host2", "", "0000:05:00.3"},
		{"/sys/devices/pci0000:20/0000:20:03.0/0000:21:00.2/net/ens2f2/ctlr_2/host3/fc_host/host3", "", "0000:21:00.2"},
		{"/sys/devices/platform/smb/smb:motherboard/80040000000.peu0-c0/pci0000:00/0000:00:03.0/0000:05:00.3/host2/fc_host/host2", "platform-80040000000.peu0-c0", "0000:05:00.3"},
		{"/sys/devices/virtual/net/fc0/ctlr_0/host0/fc_host/host0", "", ""},
		{"/sys/devices/css0/0.0.0010/0.0.1900/host0/fc_host/host0", "", ""},
		{"", "", ""},
	} {
		platform, pci := pciOf(tc.in)
		require.Equal(t, tc.pci, pci, tc.in)
		if pci != "" {
			require.Equal(t, tc.platform, platform, tc.in)
		}
	}
}

// FuzzPCIOf: any device path yields nothing or a well-formed PCI address
// (it ends up in a /dev/disk/by-path name).
func FuzzPCIOf(f *testing.F) {
	f.Add("/sys/devices/pci0000:00/0000:00:03.0/0000:05:00.3/host2/fc_host/host2")
	f.Add("/sys/devices/virtual/net/fc0/ctlr_0/host0/fc_host/host0")
	f.Add("/sys/devices/platform/a/pci0000:00/0000:05:00.3/net/x/ctlr_1/host3/fc_host/host3")
	f.Fuzz(func(t *testing.T, p string) {
		platform, pci := pciOf(p)
		if pci != "" && !pciRE().MatchString(pci) {
			t.Fatalf("pciOf(%q) = %q", p, pci)
		}
		if pci == "" && platform != "" {
			t.Fatalf("platform %q without a PCI address", platform)
		}
	})
}

// hostDirPattern is what hostDir checks, as a regexp.
var hostDirPattern = regexp.MustCompile(`^host([0-9]{1,9})$`)

func TestHostDir(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"host0", true}, {"host123456789", true}, {"host", false}, {"host1234567890", false},
		{"hostx", false}, {"host-1", false}, {"Host1", false}, {"rport-0:0-1", false}, {"host1 ", false}, {"", false},
	} {
		require.Equal(t, tc.want, hostDir(tc.in), tc.in)
	}
}

// FuzzHostDir: hostDir agrees with the pattern it stands for.
func FuzzHostDir(f *testing.F) {
	for _, s := range []string{"host0", "host12", "host", "hostx1", "host1234567890", "host\x001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := hostDir(s), hostDirPattern.MatchString(s); got != want {
			t.Fatalf("hostDir(%q) = %v, want %v", s, got, want)
		}
	})
}
