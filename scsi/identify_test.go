package scsi_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/scsi"
)

// TestIdentifyWithoutWWID: a disk without a page 0x83 designator is
// ErrNoWWID for WWID and is identified by its unit serial (VPD 0x80), or
// by nothing but its address; a missing disk stays ErrNotFound.
func TestIdentifyWithoutWWID(t *testing.T) {
	h, root := hosttest.New(t, nil)
	s := scsi.New(h, scsi.Options{})
	fixtureDisk(t, root, "2:0:0:1", "sdb", "naa.60000000000000000e00000000010001")
	fixtureDisk(t, root, "2:0:0:2", "sdc", "")
	hosttest.WriteFile(t, root, "/sys/block/sdc/device/vpd_pg80", string([]byte{0, 0x80, 0, 10, 'S', 'N', ' ', ' ', '0', '0', '4', '2', ' ', 0}))
	fixtureDisk(t, root, "2:0:0:3", "sdd", "")

	id, err := s.Identify("sdb", scsi.HCTL{Host: 2, LUN: 1})
	require.NoError(t, err)
	require.Equal(t, "360000000000000000e00000000010001", id.WWID)

	_, err = s.WWID("sdc")
	require.ErrorIs(t, err, scsi.ErrNoWWID)
	serial, err := s.Identify("sdc", scsi.HCTL{Host: 2, LUN: 2})
	require.NoError(t, err)
	require.Equal(t, scsi.Identity{Serial: "SN_0042", HCTL: scsi.HCTL{Host: 2, LUN: 2}}, serial)
	require.Equal(t, `unit serial "SN_0042" at 2:0:0:2`, serial.String())

	bare, err := s.Identify("sdd", scsi.HCTL{Host: 2, LUN: 3})
	require.NoError(t, err)
	require.Equal(t, "address 2:0:0:3", bare.String())

	_, err = s.Identify("sdz", scsi.HCTL{})
	require.ErrorIs(t, err, scsi.ErrNotFound)

	require.True(t, id.Same(scsi.Identity{WWID: id.WWID}))
	require.False(t, id.Same(serial))
	require.True(t, serial.Same(scsi.Identity{Serial: "SN_0042"}))
	require.False(t, bare.Same(bare), "two unidentified paths are never the same LUN")
}

func TestParseVPD80(t *testing.T) {
	for _, tc := range []struct {
		page []byte
		want string
	}{
		{[]byte{0, 0x80, 0, 4, 'a', 'b', 'c', 'd'}, "abcd"},
		{[]byte{0, 0x80, 0, 9, ' ', 'a', ' ', 'b', 0, 0, 0, 0, 0}, "a_b"},
		{[]byte{0, 0x80, 0, 40, 'x'}, "x"}, // length beyond the data
		{[]byte{0, 0x80, 0, 2, ' ', ' '}, ""},
		{[]byte{0, 0x83, 0, 1, 'a'}, ""},
		{[]byte{0, 0x80, 0, 2, 0xff, 'a'}, ""},
		{nil, ""},
	} {
		got, ok := scsi.ParseVPD80(tc.page)
		require.Equal(t, tc.want != "", ok, "%x", tc.page)
		require.Equal(t, tc.want, got)
	}
}

func FuzzParseVPD80(f *testing.F) {
	f.Add([]byte{0, 0x80, 0, 4, 'a', 'b', 'c', 'd'})
	f.Fuzz(func(t *testing.T, page []byte) {
		sn, ok := scsi.ParseVPD80(page)
		if !ok {
			return
		}
		for _, r := range sn {
			if r < 0x21 || r > 0x7e {
				t.Fatalf("serial %q has %q", sn, r)
			}
		}
	})
}

// TestShowsOther: a disk is another volume's when its WWID differs, when
// it lost or gained one, or (for LUNs without one) when its unit serial
// differs; an empty want never is.
func TestShowsOther(t *testing.T) {
	h, root := hosttest.New(t, nil)
	s := scsi.New(h, scsi.Options{})
	const w = "360000000000000000e00000000010001"
	fixtureDisk(t, root, "2:0:0:1", "sdb", "naa."+w[1:])
	fixtureDisk(t, root, "2:0:0:2", "sdc", "")
	hosttest.WriteFile(t, root, "/sys/block/sdc/device/vpd_pg80", string([]byte{0, 0x80, 0, 3, 'S', 'N', '1'}))
	for _, tc := range []struct {
		disk  string
		want  scsi.Identity
		other bool
	}{
		{"sdb", scsi.Identity{WWID: w}, false},
		{"sdb", scsi.Identity{WWID: "3600140500000000000000000000000ff"}, true},
		{"sdb", scsi.Identity{Serial: "SN1"}, true},
		{"sdb", scsi.Identity{}, false},
		{"sdc", scsi.Identity{Serial: "SN1"}, false},
		{"sdc", scsi.Identity{Serial: "SN2"}, true},
		{"sdc", scsi.Identity{WWID: w}, true},
		{"sdz", scsi.Identity{WWID: w}, false},
	} {
		require.Equal(t, tc.other, s.ShowsOther(tc.disk, tc.want), "%s %+v", tc.disk, tc.want)
	}
}
