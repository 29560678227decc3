package scsi_test

import (
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/scsi"
)

func TestParseSysfsWWID(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"naa.60000000000000000e00000000010001", "360000000000000000e00000000010001"},
		{"naa.6001405ABCDEF0000000000000000001\n", "36001405abcdef0000000000000000001"},
		{"eui.0025385b71b04e4a", "20025385b71b04e4a"},
		{"t10.IET     VIRTUAL-DISK    beaf11  ", "1IET_VIRTUAL-DISK_beaf11"},
		{"name.iqn.2010-10.org.openstack:volume-1,lun,1", "8iqn.2010-10.org.openstack:volume-1,lun,1"},
		{"naa.xyz", ""},
		{"foo.123", ""},
		{"naa.", ""},
		{"", ""},
	} {
		got, ok := scsi.ParseSysfsWWID(tc.in)
		require.Equal(t, tc.want != "", ok, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

// tgtPage83 is the VPD page 0x83 tgtd returns for LUN 1 of its first target
// (a T10 vendor ID, then an NAA IEEE registered extended name).
func tgtPage83(t *testing.T) []byte {
	b, err := hex.DecodeString("0083003c" +
		"02010020" + "4945542020202020" + "3030303130303031" + "00000000000000000000000000000000" +
		"01030010" + "60000000000000000e00000000010001" +
		"")
	require.NoError(t, err)
	// Fix the page length to what follows the header.
	n := len(b) - 4
	b[2], b[3] = byte(n>>8), byte(n)
	return b
}

func TestParseVPD83(t *testing.T) {
	got, ok := scsi.ParseVPD83(tgtPage83(t))
	require.True(t, ok)
	require.Equal(t, "360000000000000000e00000000010001", got)

	// Only a T10 vendor ID: spaces collapse to "_".
	t10 := []byte{0x00, 0x83, 0x00, 0x10, 0x02, 0x01, 0x00, 0x0c, 'L', 'I', 'O', ' ', ' ', 'd', 'i', 's', 'k', ' ', 'x', ' '}
	got, ok = scsi.ParseVPD83(t10)
	require.True(t, ok)
	require.Equal(t, "1LIO_disk_x", got)

	// A target-port NAA (association 1) is not the LUN's name.
	port := []byte{0x00, 0x83, 0x00, 0x0c, 0x01, 0x13, 0x00, 0x08, 0x50, 1, 2, 3, 4, 5, 6, 7}
	_, ok = scsi.ParseVPD83(port)
	require.False(t, ok)

	for _, bad := range [][]byte{nil, {0, 0x80, 0, 0}, {0, 0x83, 0, 0}, {0, 0x83, 0, 8, 1, 3, 0, 16, 0x60}} {
		_, ok := scsi.ParseVPD83(bad)
		require.False(t, ok)
	}
}

func FuzzParseVPD83(f *testing.F) {
	f.Add([]byte{0x00, 0x83, 0x00, 0x0c, 0x01, 0x03, 0x00, 0x08, 0x50, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{0x00, 0x83, 0x00, 0x10, 0x02, 0x01, 0x00, 0x0c, 'L', 'I', 'O', ' ', ' ', 'd', 'i', 's', 'k', ' ', 'x', ' '})
	f.Fuzz(func(t *testing.T, page []byte) {
		id, ok := scsi.ParseVPD83(page)
		if ok && (len(id) < 2 || !printableASCII(id)) {
			t.Fatalf("bad id %q", id)
		}
	})
}

func FuzzParseSysfsWWID(f *testing.F) {
	for _, s := range []string{"naa.600a", "t10.A  B", "eui.00", "name.x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, ok := scsi.ParseSysfsWWID(s)
		if ok && (len(id) < 2 || !printableASCII(id)) {
			t.Fatalf("bad id %q", id)
		}
	})
}

func FuzzParseHCTL(f *testing.F) {
	f.Add("2:0:0:1")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := scsi.ParseHCTL(s)
		if err == nil && a.String() != s {
			t.Fatalf("round trip %q -> %q", s, a.String())
		}
	})
}

func printableASCII(s string) bool {
	for _, r := range s {
		if r < 0x21 || r > 0x7e {
			return false
		}
	}
	return true
}
