package ident

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIQN(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"iqn.1993-08.org.debian:01:abc", true},
		{"IQN.2010-10.Org.OpenStack:volume-1", true},
		{"eui.02004567A425678D", true},
		{"naa.52004567BA64678D", true},
		{"naa.52004567BA64678D52004567BA64678D", true},
		{"iqn.2010-10.org.openstack:vol;rm", false},
		{"iqn.2010-10.org openstack", false},
		{"iqn.10-10.org.x", false},
		{"eui.123", false},
		{"", false},
		{"iqn.2010-10.org.x:" + string(make([]byte, 230)), false},
	} {
		require.Equal(t, tc.ok, IQN(tc.in), tc.in)
	}
}

func TestUUIDs(t *testing.T) {
	require.True(t, IsUUID("0b0c1a2e-3f4a-4b5c-8d9e-0f1a2b3c4d5e"))
	require.False(t, IsUUID("0b0c1a2e3f4a4b5c8d9e0f1a2b3c4d5e"))
	require.True(t, IsUUIDLoose("0b0c1a2e3f4a4b5c8d9e0f1a2b3c4d5e"))
	require.False(t, IsUUID("0b0c1a2e-3f4a-4b5c-8d9e-0f1a2b3c4d5"))
	u, ok := ParseUUID(" 0B0C1A2E-3F4A-4B5C-8D9E-0F1A2B3C4D5E\n")
	require.True(t, ok)
	require.Equal(t, "0b0c1a2e-3f4a-4b5c-8d9e-0f1a2b3c4d5e", u)
}

func TestNormalizeWWN(t *testing.T) {
	for in, want := range map[string]string{
		"0x21:00:00:24:FF:5A:7B:3C": "21000024ff5a7b3c",
		"21000024ff5a7b3c":          "21000024ff5a7b3c",
		"0x21000024FF5A7B3C\n":      "21000024ff5a7b3c",
		"2100":                      "",
		"21000024ff5a7b3g":          "",
	} {
		got, ok := NormalizeWWN(in)
		require.Equal(t, want != "", ok, in)
		require.Equal(t, want, got, in)
	}
}

func TestNamesAndWWID(t *testing.T) {
	require.True(t, NQN("nqn.2014-08.org.nvmexpress:uuid:1"))
	require.False(t, NQN("nqn.x"))
	require.True(t, WWID("36001405abcdef"))
	require.False(t, WWID("-x"))
	require.False(t, WWID("a/b"))
	require.True(t, DiskName("sdb"))
	require.True(t, DiskName("nvme0n1"))
	require.False(t, DiskName("dm-3"))
	require.False(t, DiskName("../sda"))
	require.True(t, DMName("dm-3"))
	require.False(t, DMName("dm-"))
}

func FuzzIdentifiers(f *testing.F) {
	for _, s := range []string{"iqn.1993-08.org.debian:01:abc", "0x21:00:00:24:ff:5a:7b:3c", "dm-1", "sdb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if IQN(s) && len(s) > 223 {
			t.Fatalf("long IQN accepted: %q", s)
		}
		if w, ok := NormalizeWWN(s); ok && len(w) != 16 {
			t.Fatalf("WWN %q of %d digits", w, len(w))
		}
		if DiskName(s) && DMName(s) {
			t.Fatalf("%q is both a disk and a dm name", s)
		}
	})
}

func TestSubsystemNQN(t *testing.T) {
	for s, want := range map[string]bool{
		"nqn.2014-08.org.nvmexpress:uuid:1":                         true,
		"nqn.nvme-subsystem-1-11111111-2222-4333-8444-555555555555": true,
		"nqn.":                            false,
		"iqn.2010-10.x":                   false,
		"nqn.a,traddr=1":                  false,
		"nqn.a=b":                         false,
		"nqn.a b":                         false,
		"nqn.a\nb":                        false,
		"nqn." + strings.Repeat("a", 220): false,
	} {
		require.Equal(t, want, SubsystemNQN(s), s)
	}
}
