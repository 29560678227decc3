package fc

import (
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
