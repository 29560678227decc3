package ident

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

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

// The patterns the byte-by-byte checks replaced; each check must agree
// with its pattern on every input.
var (
	iqnRE  = regexp.MustCompile(`^iqn\.[0-9]{4}-[0-9]{2}\.[a-z0-9][a-z0-9.-]*(:[\x21-\x7e]+)?$`)
	euiRE  = regexp.MustCompile(`^eui\.[0-9A-Fa-f]{16}$`)
	naaRE  = regexp.MustCompile(`^naa\.[0-9A-Fa-f]{16}([0-9A-Fa-f]{16})?$`)
	uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)
	nqnRE  = regexp.MustCompile(`^nqn\.[0-9]{4}-[0-9]{2}\.[\x21-\x7e]+$`)
	wwnRE  = regexp.MustCompile(`^[0-9a-f]{16}$`)
	wwidRE = regexp.MustCompile(`^[0-9A-Za-z][\x21-\x7e]{0,254}$`)
	diskRE = regexp.MustCompile(`^[a-z][a-z0-9]{0,31}$`)
	dmRE   = regexp.MustCompile(`^dm-[0-9]{1,6}$`)
)

// FuzzAgainstPatterns checks each identifier check against the regexp it
// replaced; its seeds run with every `go test`.
func FuzzAgainstPatterns(f *testing.F) {
	for _, s := range []string{
		"iqn.1993-08.org.debian:01:abc", "IQN.1993-08.ORG.X", "iqn.1993-08.org.debian:", "iqn.1993-08.-a", "iqn.1993-08.a:b:c d",
		"iqn.1993-8.org", "iqn.199a-08.org", "iqn.1993-08.", "iqn.1993-08..a", "iqn.1993-08.a\u00e9", "iqn.1993-08.a:\u00e9",
		"eui.02004567A425678D", "eui.02004567a425678", "naa.52004567BA64678D", "naa.52004567BA64678D52004567BA64678D", "naa.52004567BA64678D5",
		"nqn.2014-08.org.nvmexpress:uuid:1", "nqn.2014-08.", "nqn.2014-08.a b", "nqn.2014-8.a",
		"0b4b8b2c-5d1e-4c1a-9f5e-1f2e3d4c5b6a", "0b4b8b2c5d1e4c1a9f5e1f2e3d4c5b6a", "0b4b8b2c-5d1e4c1a-9f5e-1f2e3d4c5b6a",
		"0B4B8B2C-5D1E-4C1A-9F5E-1F2E3D4C5B6A", "0b4b8b2c--5d1e-4c1a-9f5e-1f2e3d4c5b6a", "0b4b8b2c-5d1e-4c1a-9f5e-1f2e3d4c5b6-",
		"2100002", "21000024ff5a7b3c", "21000024FF5A7B3C", "3600a0b80", "-3600a0b80", "36\u00e9", "",
		"sdb", "nvme0n1", "Sdb", "s" + strings.Repeat("a", 31), "s" + strings.Repeat("a", 32), "dm-3", "dm-", "dm-1234567", "dm-a",
		strings.Repeat("a", 255), strings.Repeat("a", 256),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		low := strings.ToLower(s)
		for _, c := range []struct {
			name      string
			got, want bool
		}{
			{"iqn", iqnName(low), iqnRE.MatchString(low)},
			{"eui", hexName(s, "eui.", 16, 16), euiRE.MatchString(s)},
			{"naa", hexName(s, "naa.", 16, 32), naaRE.MatchString(s)},
			{"uuid", IsUUIDLoose(s), uuidRE.MatchString(s)},
			{"nqn", NQN(s), len(s) <= 223 && nqnRE.MatchString(s)},
			{"wwid", WWID(s), wwidRE.MatchString(s) && !strings.ContainsAny(s, `/\'"`)},
			{"disk", DiskName(s), diskRE.MatchString(s)},
			{"dm", DMName(s), dmRE.MatchString(s)},
		} {
			if c.got != c.want {
				t.Errorf("%s(%q) = %v, the pattern says %v", c.name, s, c.got, c.want)
			}
		}
		w, ok := NormalizeWWN(s)
		if n := strings.ReplaceAll(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "0x"), ":", ""); ok != wwnRE.MatchString(n) || ok && w != n {
			t.Errorf("NormalizeWWN(%q) = %q, %v; the pattern says %v", s, w, ok, wwnRE.MatchString(n))
		}
	})
}

func TestClipAndLine(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		n        int
		clip     string
		line     string
	}{
		{name: "short", in: "ok", n: 5, clip: "ok", line: "ok"},
		{name: "cut", in: "abcdef", n: 3, clip: "abc...", line: "abc..."},
		{name: "rune boundary", in: "ééé", n: 3, clip: "é...", line: "é..."},
		{name: "first line", in: " one\ntwo", n: 20, clip: " one\ntwo", line: "one"},
		{name: "control characters", in: "a\x1b[31mb\x00c", n: 20, clip: "a\x1b[31mb\x00c", line: "a[31mbc"},
		{name: "zero", in: "abc", n: 0, clip: "...", line: "..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.clip, Clip(tc.in, tc.n))
			require.Equal(t, tc.line, Line(tc.in, tc.n))
		})
	}
}

func TestOneLineAndEscape(t *testing.T) {
	for _, tc := range []struct {
		name, in  string
		n         int
		line, esc string
	}{
		{name: "plain", in: "ok", n: 5, line: "ok", esc: "ok"},
		{name: "traceback", in: "a\n  b\r\n\tc", n: 20, line: "a b c", esc: `a\x0a  b\x0d\x0a` + "\tc"},
		{name: "escape sequences", in: "a\x1b[31mb\u009bc\x7f", n: 20, line: "a [31mb c", esc: `a\x1b[31mb\u009bc\x7f`},
		{name: "invalid utf-8", in: "a\xffb", n: 20, line: "a?b", esc: "a\ufffdb"},
		{name: "clipped", in: "one two three", n: 7, line: "one two...", esc: "one two three"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.line, OneLine(tc.in, tc.n))
			require.Equal(t, tc.esc, Escape(tc.in))
		})
	}
}

// FuzzText holds every untrusted-text helper to its promise: valid UTF-8
// out, no control character a terminal would act on, bounded length.
func FuzzText(f *testing.F) {
	f.Add("a\nb", 3)
	f.Add("\xffé\x1b\u009b", 1)
	f.Add("ééé", 2)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 400
		bounded := func(name, got string) {
			if !utf8.ValidString(got) || strings.ContainsFunc(got, IsControl) || len(got) > max(n, 0)+3 {
				t.Fatalf("%s(%q, %d) = %q", name, s, n, got)
			}
		}
		bounded("Line", Line(s, n))
		bounded("OneLine", OneLine(s, n))
		if got := Escape(s); !utf8.ValidString(got) || strings.ContainsFunc(got, func(r rune) bool { return r != '\t' && IsControl(r) }) {
			t.Fatalf("Escape(%q) = %q", s, got)
		}
		if utf8.ValidString(s) {
			if got := Clip(s, n); !utf8.ValidString(got) || len(got) > max(n, 0)+3 {
				t.Fatalf("Clip(%q, %d) = %q", s, n, got)
			}
		}
	})
}
