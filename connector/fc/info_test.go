package fc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/fc"
	"github.com/brick-storage/brick/scsi"
)

const (
	tgtA = "500601609020318d"
	tgtB = "500601689020318d"
	iniA = "10000090fa1b2c01"
	iniB = "10000090fa1b2c02"
)

func parse(t *testing.T, raw string) (*fc.Info, error) {
	t.Helper()
	ci, err := connector.ParseConnectionInfo([]byte(raw))
	require.NoError(t, err, raw)
	return fc.ParseInfo(ci)
}

func TestParseWWN(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"500601609020318D", tgtA},
		{"0x500601609020318d", tgtA},
		{"0X500601609020318D", tgtA},
		{"50:06:01:60:90:20:31:8d", tgtA},
		{"0x50:06:01:60:90:20:31:8D", tgtA},
		{"", ""},
		{"0x", ""},
		{"500601609020318", ""},   // 15 digits
		{"500601609020318d0", ""}, // 17
		{"50060160902031g8", ""},
		{"5006:0160:9020:318d", ""}, // colons in the wrong places
		{"50:06:01:60:90:20:31:8d:", ""},
		{" 500601609020318d", ""},
		{"-500601609020318", ""},
		{"0x0x500601609020318d", ""},
		{"500601609020318d\x00", ""},
	} {
		got, err := fc.ParseWWN(tc.in)
		if tc.want == "" {
			require.Error(t, err, "%q", tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

func TestByPathName(t *testing.T) {
	require.Equal(t, "pci-0000:05:00.2-fc-0x"+tgtA+"-lun-0", fc.ByPathName("", "0000:05:00.2", tgtA, 0))
	require.Equal(t, "pci-0000:05:00.2-fc-0x"+tgtA+"-lun-5", fc.ByPathName("", "0000:05:00.2", tgtA, 5))
	require.Equal(t, "pci-0000:05:00.2-fc-0x"+tgtA+"-lun-255", fc.ByPathName("", "0000:05:00.2", tgtA, 255))
	// udev's path_id: LUNs from 256 up in the 64-bit form.
	require.Equal(t, "pci-0000:05:00.2-fc-0x"+tgtA+"-lun-0x012c000000000000", fc.ByPathName("", "0000:05:00.2", tgtA, 300))
	require.Equal(t, "pci-0000:05:00.2-fc-0x"+tgtA+"-lun-0x0100000000000000", fc.ByPathName("", "0000:05:00.2", tgtA, 256))
	require.Equal(t, "platform-80040000000.peu0-c0-pci-0000:05:00.2-fc-0x"+tgtA+"-lun-1", fc.ByPathName("platform-80040000000.peu0-c0", "0000:05:00.2", tgtA, 1))
}

func TestParseInfoShapes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		raw     string
		targets []fc.Target
	}{
		{"single string, nested", `{"driver_volume_type":"fibre_channel","data":{"target_discovered":false,"target_wwn":"` + strings.ToUpper(tgtA) + `","target_lun":5,"access_mode":"rw","volume_id":"0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a11"}}`,
			[]fc.Target{{tgtA, 5}}},
		{"list in target_wwn, one LUN for all", `{"driver_volume_type":"fibre_channel","target_wwn":["0x` + tgtA + `","50:06:01:68:90:20:31:8d"],"target_lun":"1"}`,
			[]fc.Target{{tgtA, 1}, {tgtB, 1}}},
		{"target_wwns with target_luns", `{"driver_volume_type":"fibre_channel","target_wwn":"` + tgtA + `","target_wwns":["` + tgtA + `","` + tgtB + `"],"target_lun":0,"target_luns":[0,300]}`,
			[]fc.Target{{tgtA, 0}, {tgtB, 300}}},
		{"duplicates collapse", `{"driver_volume_type":"fibre_channel","target_wwns":["` + tgtA + `","0x` + tgtA + `"],"target_luns":[2,2]}`,
			[]fc.Target{{tgtA, 2}}},
		{"short alias fc", `{"driver_volume_type":"fc","data":{"target_wwn":"` + tgtA + `","target_lun":0}}`,
			[]fc.Target{{tgtA, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := parse(t, tc.raw)
			require.NoError(t, err)
			require.Equal(t, tc.targets, info.Targets)
			require.Nil(t, info.InitiatorTargetMap)
			require.False(t, info.WildcardScan, "wildcard scans are off unless asked for")
		})
	}
}

func TestParseInfoOptions(t *testing.T) {
	info, err := parse(t, `{"driver_volume_type":"fibre_channel","data":{"target_wwns":["`+tgtA+`","`+tgtB+`"],"target_lun":3,
		"initiator_target_map":{"0x`+strings.ToUpper(iniA)+`":["`+tgtA+`","50:06:01:68:90:20:31:8D","5006016a9020318d"],"`+iniB+`":"`+tgtB+`","10000090fa1b2c03":[]},
		"access_mode":"ro","enable_wildcard_scan":"True","encrypted":true,"addressing_mode":"SAM2"}}`)
	require.NoError(t, err)
	require.Equal(t, map[string][]string{
		iniA:               {tgtA, tgtB, "5006016a9020318d"},
		iniB:               {tgtB},
		"10000090fa1b2c03": {},
	}, info.InitiatorTargetMap)
	require.Equal(t, []string{"5006016a9020318d"}, info.UnknownMapTargets)
	require.Equal(t, []fc.Target{{tgtA, 3}, {tgtB, 3}}, info.TargetsFor(iniA))
	require.Equal(t, []fc.Target{{tgtB, 3}}, info.TargetsFor(iniB))
	require.Empty(t, info.TargetsFor("10000090fa1b2c03"))
	require.Empty(t, info.TargetsFor("10000090fa1b2cff"), "an initiator the map does not name reaches nothing")
	require.True(t, info.ReadOnly)
	require.True(t, info.WildcardScan)
	require.True(t, info.Encrypted)
	require.Equal(t, []string{tgtA, tgtB}, info.WWPNs())
}

// TestParseInfoAddressing: the kernel LUN follows addressing_mode, flat
// space included (16384..32767).
func TestParseInfoAddressing(t *testing.T) {
	for _, tc := range []struct {
		why, kv string
		want    []int
	}{
		{"most FC drivers (e.g. Dell PowerMax, HPE 3PAR) send no mode", `"target_lun":300`, []int{300}},
		{"Pure FlashArray FC (pure.py, SAM2), LUN below 256", `"target_lun":1,"addressing_mode":"SAM2"`, []int{1}},
		{"Pure FlashArray FC (pure.py, SAM2), LUN 256 is flat", `"target_lun":256,"addressing_mode":"SAM2"`, []int{16640}},
		{"Pure FlashArray FC (pure.py, SAM2), per-port LUNs", `"target_luns":[255,16383],"addressing_mode":"SAM2"`, []int{255, 32767}},
		{"SAM3-flat forces flat space", `"target_lun":1,"addressing_mode":"SAM3-flat"`, []int{16385}},
		{"transparent keeps the LUN", `"target_lun":16383,"addressing_mode":"transparent"`, []int{16383}},
	} {
		wwns := `"target_wwns":["` + tgtA + `","` + tgtB + `"]`
		info, err := parse(t, `{"driver_volume_type":"fibre_channel","data":{`+wwns+`,`+tc.kv+`}}`)
		require.NoError(t, err, tc.why)
		var got []int
		for _, tg := range info.Targets {
			if len(got) == 0 || got[len(got)-1] != tg.LUN {
				got = append(got, tg.LUN)
			}
		}
		require.Equal(t, tc.want, got, tc.why)
	}
}

// TestParseInfoIgnoresUnusedKeys: a key brick reads for nothing but a
// label, or never reads, cannot fail the attach whatever its value.
func TestParseInfoIgnoresUnusedKeys(t *testing.T) {
	for _, tc := range []struct {
		why, kv, volumeID string
	}{
		{"volume_id as a number", `"volume_id":1`, ""},
		{"volume_id not a UUID", `"volume_id":"not-a-uuid"`, ""},
		{"volume_id a UUID", `"volume_id":"11111111-1111-4111-8111-111111111111"`, "11111111-1111-4111-8111-111111111111"},
		{"target_discovered (FC drivers such as Pure's pure.py send it)", `"target_discovered":"yes"`, ""},
		{"qos_specs object (Cinder manager adds it)", `"qos_specs":{"total_iops_sec":"100"}`, ""},
		{"keys of other protocols", `"target_portal":5,"target_iqn":[],"export":{}`, ""},
	} {
		info, err := parse(t, `{"driver_volume_type":"fibre_channel","data":{"target_wwn":"`+tgtA+`","target_lun":1,`+tc.kv+`}}`)
		require.NoError(t, err, tc.why)
		require.Equal(t, tc.volumeID, info.VolumeID, tc.why)
	}
}

func TestParseInfoRejects(t *testing.T) {
	base := func(kv string) string {
		return `{"driver_volume_type":"fibre_channel","data":{` + kv + `}}`
	}
	for _, tc := range []struct {
		raw, key string
	}{
		{base(`"target_lun":1`), "target_wwn"},
		{base(`"target_wwn":[],"target_lun":1`), "target_wwn"},
		{base(`"target_wwn":"` + tgtA + `"`), "target_lun"},
		{base(`"target_wwn":"zz` + tgtA[2:] + `","target_lun":1`), "target_wwn[0]"},
		{base(`"target_wwns":["` + tgtA + `","-x"],"target_lun":1`), "target_wwns[1]"},
		{base(`"target_wwn":5,"target_lun":1`), "target_wwn"},
		{base(`"target_wwn":"` + tgtA + `","target_lun":-1`), "target_lun"},
		{base(`"target_wwn":"` + tgtA + `","target_lun":1.5`), "target_lun"},
		{base(`"target_wwn":"` + tgtA + `","target_lun":"1; rm -rf /"`), "target_lun"},
		{base(`"target_wwn":"` + tgtA + `","target_lun":99999`), "target_lun"},
		{base(`"target_wwns":["` + tgtA + `","` + tgtB + `"],"target_luns":[1,2,3]`), "target_luns"},
		{base(`"target_wwns":["` + tgtA + `"],"target_luns":[1,-2]`), "target_luns[1]"},
		{base(`"target_wwn":"` + tgtA + `","target_lun":1,"access_mode":"rwx"`), "access_mode"},
		{base(`"target_wwn":"` + tgtA + `","target_lun":1,"enable_wildcard_scan":"yes"`), "enable_wildcard_scan"},
		{base(`"target_wwn":"` + tgtA + `","target_lun":1,"initiator_target_map":["` + iniA + `"]`), "initiator_target_map"},
		{base(`"target_wwn":"` + tgtA + `","target_lun":1,"initiator_target_map":{"nope":["` + tgtA + `"]}`), "initiator_target_map"},
		{base(`"target_wwn":"` + tgtA + `","target_lun":1,"initiator_target_map":{"` + iniA + `":[7]}`), `initiator_target_map["` + iniA + `"]`},
		{base(`"target_wwn":"` + tgtA + `","target_lun":1,"initiator_target_map":{"` + iniA + `":["../x"]}`), `initiator_target_map["` + iniA + `"][0]`},
		{base(`"target_wwn":"` + tgtA + `","target_lun":1,"addressing_mode":"flat"`), "addressing_mode"},
		{base(`"target_wwn":"` + tgtA + `","target_lun":16384,"addressing_mode":"SAM2"`), "target_lun"},
		{`{"driver_volume_type":"iscsi","data":{"target_wwn":"` + tgtA + `","target_lun":1}}`, "driver_volume_type"},
	} {
		_, err := parse(t, tc.raw)
		require.Error(t, err, tc.raw)
		require.ErrorIs(t, err, connector.ErrInvalid, tc.raw)
		var ie *connector.InvalidError
		require.True(t, errors.As(err, &ie), tc.raw)
		require.Equal(t, tc.key, ie.Key, "%s: %v", tc.raw, err)
	}
}

func FuzzParseWWN(f *testing.F) {
	for _, s := range []string{tgtA, "0x" + tgtA, "50:06:01:60:90:20:31:8d", "0x", "", "::::::::", "0x50:06:01:60:90:20:31:8D"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := fc.ParseWWN(s)
		if err != nil {
			return
		}
		if len(w) != 16 || strings.Trim(w, "0123456789abcdef") != "" {
			t.Fatalf("ParseWWN(%q) = %q", s, w)
		}
		again, err := fc.ParseWWN(w)
		if err != nil || again != w {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", s, w, again, err)
		}
		if strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"), ":", "")) != w {
			t.Fatalf("ParseWWN(%q) = %q changes digits", s, w)
		}
	})
}

// FuzzParseInfo feeds arbitrary target/LUN/map values through the parser:
// it must never panic, and whatever it accepts is in range and normalised.
func FuzzParseInfo(f *testing.F) {
	f.Add(`"`+tgtA+`"`, `5`, `{}`, "")
	f.Add(`["0x`+tgtA+`","`+tgtB+`"]`, `[0,300]`, `{"`+iniA+`":["`+tgtA+`"]}`, "SAM2")
	f.Add(`["50:06:01:60:90:20:31:8d"]`, `"7"`, `{"`+iniA+`":"`+tgtB+`"}`, "SAM3-flat")
	f.Add(`null`, `[1,2,3]`, `[]`, "transparent")
	f.Fuzz(func(t *testing.T, wwns, luns, itmap, mode string) {
		raw := `{"driver_volume_type":"fibre_channel","target_wwn":` + wwns + `,"target_luns":` + luns + `,"initiator_target_map":` + itmap + `,"addressing_mode":"` + mode + `"}`
		ci, err := connector.ParseConnectionInfo([]byte(raw))
		if err != nil {
			return
		}
		info, err := fc.ParseInfo(ci)
		if err != nil {
			if !errors.Is(err, connector.ErrInvalid) {
				t.Fatalf("rejection without ErrInvalid: %v", err)
			}
			return
		}
		if len(info.Targets) == 0 {
			t.Fatal("accepted without targets")
		}
		for _, tg := range info.Targets {
			if _, err := fc.ParseWWN(tg.WWPN); err != nil || len(tg.WWPN) != 16 {
				t.Fatalf("bad WWPN %q", tg.WWPN)
			}
			if tg.LUN < 0 || tg.LUN > scsi.MaxKernelLUN {
				t.Fatalf("LUN %d out of range", tg.LUN)
			}
		}
		for ini, tgts := range info.InitiatorTargetMap {
			if len(ini) != 16 {
				t.Fatalf("bad initiator %q", ini)
			}
			for _, w := range tgts {
				if len(w) != 16 {
					t.Fatalf("bad map target %q", w)
				}
			}
		}
	})
}
