package iscsi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/ident"
	brsecret "github.com/brick-storage/brick/secret"
)

const (
	iqn1   = "iqn.2010-10.org.openstack:volume-0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a11"
	secret = "s3cretpassw0rd"
)

func parse(t *testing.T, raw string) (*iscsi.Info, error) {
	t.Helper()
	ci, err := connector.ParseConnectionInfo([]byte(raw))
	require.NoError(t, err, raw)
	return iscsi.ParseInfo(ci)
}

func TestParseInfoShapes(t *testing.T) {
	nested := `{"driver_volume_type":"iscsi","data":{"target_discovered":false,"target_portal":"127.0.0.1:3260","target_iqn":"` + iqn1 + `","target_lun":1,"volume_id":"0B9E5A55-3F6B-4D1E-9B58-6F9F1E2F0A11","auth_method":"CHAP","auth_username":"u","auth_password":"` + secret + `","encrypted":false,"qos_specs":null,"access_mode":"rw","cacheable":false}}`
	info, err := parse(t, nested)
	require.NoError(t, err)
	require.Equal(t, []iscsi.Target{{Portal: iscsi.Portal{Host: "127.0.0.1", Port: 3260}, IQN: iqn1, LUN: 1}}, info.Targets)
	require.Equal(t, &iscsi.CHAP{Username: "u", Password: brsecret.New(secret)}, info.Auth)
	require.Nil(t, info.DiscoveryAuth)
	require.False(t, info.ReadOnly)
	require.False(t, info.Plural)
	require.Equal(t, "0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a11", info.VolumeID)
	require.Equal(t, []string{secret}, info.Secrets())

	// Flat v3 with plurals and the singular key repeated: singular first, no duplicates.
	flat := `{"driver_volume_type":"iscsi","attachment_id":"x","target_portal":"10.0.3.2:3260","target_iqn":"` + iqn1 + `","target_lun":"2",
	  "target_portals":["10.0.2.2:3260","10.0.3.2:3260","[fd00::2]:3261"],"target_iqns":["` + iqn1 + `","` + iqn1 + `","` + iqn1 + `"],"target_luns":[2,2,2],
	  "access_mode":"ro","target_discovered":"True","encrypted":true,
	  "discovery_auth_method":"chap","discovery_auth_username":"d","discovery_auth_password":"dpass1234567"}`
	info, err = parse(t, flat)
	require.NoError(t, err)
	require.True(t, info.Plural)
	require.Len(t, info.Targets, 3)
	require.Equal(t, "10.0.3.2:3260", info.Targets[0].Portal.String())
	require.Equal(t, "10.0.2.2:3260", info.Targets[1].Portal.String())
	require.Equal(t, "[fd00::2]:3261", info.Targets[2].Portal.String())
	require.Equal(t, 2, info.Targets[2].LUN)
	require.True(t, info.ReadOnly)
	require.True(t, info.TargetDiscovered)
	require.True(t, info.Encrypted)
	require.Nil(t, info.Auth)
	require.Equal(t, &iscsi.CHAP{Username: "d", Password: brsecret.New("dpass1234567")}, info.DiscoveryAuth)

	// Plural portals with one IQN and one LUN for all.
	info, err = parse(t, `{"driver_volume_type":"iscsi","target_portals":["10.0.0.1","10.0.0.2:3262"],"target_iqn":"`+iqn1+`","target_lun":0}`)
	require.NoError(t, err)
	require.Len(t, info.Targets, 2)
	require.Equal(t, 3260, info.Targets[0].Portal.Port)
	require.Equal(t, 0, info.Targets[1].LUN)
	require.Equal(t, []string{iqn1}, info.IQNs())
}

// TestParseInfoAddressing: iSCSI LUNs follow addressing_mode as FC's do.
func TestParseInfoAddressing(t *testing.T) {
	portals := `"target_portals":["10.0.0.1","10.0.0.2"],"target_iqn":"` + iqn1 + `"`
	for _, tc := range []struct {
		why, kv string
		want    []int
	}{
		{"LVM/tgtd (lvm.py) sends no mode", `"target_lun":300`, []int{300}},
		{"Pure FlashArray iSCSI (pure.py, SAM2), LUN below 256", `"target_lun":1,"addressing_mode":"SAM2"`, []int{1}},
		{"Pure FlashArray iSCSI (pure.py, SAM2), LUN 300 is flat", `"target_lun":300,"addressing_mode":"SAM2"`, []int{16684}},
		{"Pure FlashArray iSCSI (pure.py, SAM2), per-portal LUNs", portals + `,"target_luns":[256,16383],"addressing_mode":"SAM2"`, []int{16640, 32767}},
		{"SAM3-flat forces flat space", `"target_lun":0,"addressing_mode":"SAM3-flat"`, []int{16384}},
		{"SAM keeps the LUN", `"target_lun":300,"addressing_mode":"SAM"`, []int{300}},
		{"single path without target_lun is LUN 0 (os-brick's default; LVM/tgtd's LUN)", `"volume_id":"0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a11"`, []int{0}},
		{"without target_lun, SAM3-flat", `"addressing_mode":"SAM3-flat"`, []int{16384}},
	} {
		single := `"target_portal":"127.0.0.1:3260","target_iqn":"` + iqn1 + `",`
		if strings.Contains(tc.kv, "target_portals") {
			single = ""
		}
		info, err := parse(t, `{"driver_volume_type":"iscsi","data":{`+single+tc.kv+`}}`)
		require.NoError(t, err, tc.why)
		var got []int
		for _, tg := range info.Targets {
			got = append(got, tg.LUN)
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
		{"volume_id not a UUID", `"volume_id":"../../etc/passwd"`, ""},
		{"volume_id a UUID (LVM lvm.py and most drivers)", `"volume_id":"0B9E5A55-3F6B-4D1E-9B58-6F9F1E2F0A11"`, "0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a11"},
		{"target_discovered not a boolean", `"target_discovered":"yes"`, ""},
		{"qos_specs object (Cinder manager adds it)", `"qos_specs":{"total_iops_sec":"100"}`, ""},
		{"cacheable and discard (Cinder manager, lvm.py)", `"cacheable":"maybe","discard":7`, ""},
		{"keys of other protocols", `"target_wwn":5,"export":[],"hosts":{}`, ""},
	} {
		info, err := parse(t, `{"driver_volume_type":"iscsi","data":{"target_portal":"127.0.0.1:3260","target_iqn":"`+iqn1+`","target_lun":1,`+tc.kv+`}}`)
		require.NoError(t, err, tc.why)
		require.Equal(t, tc.volumeID, info.VolumeID, tc.why)
		require.False(t, info.TargetDiscovered, tc.why)
	}
}

func TestParseInfoRejects(t *testing.T) {
	base := map[string]any{
		"target_portal": "127.0.0.1:3260", "target_iqn": iqn1, "target_lun": 1,
	}
	for _, tc := range []struct {
		name string
		set  map[string]any
		key  string
	}{
		{"no portal", map[string]any{"target_portal": nil}, "target_portal"},
		{"portal option", map[string]any{"target_portal": "-oProxyCommand=x"}, "target_portal"},
		{"portal hostname underscore", map[string]any{"target_portal": "storage_a.example.com:3260"}, "target_portal"},
		{"portal hostname dash", map[string]any{"target_portal": "-storage:3260"}, "target_portal"},
		{"portal hostname empty label", map[string]any{"target_portal": "a..b:3260"}, "target_portal"},
		{"portal numeric name", map[string]any{"target_portal": "1.2.3:3260"}, "target_portal"},
		{"plural hostname bad", map[string]any{"target_portals": []any{"1.1.1.1", "san$(x)"}, "target_iqns": []any{iqn1, iqn1}, "target_luns": []any{1, 1}}, "target_portals[1]"},
		{"portal port 0", map[string]any{"target_portal": "1.2.3.4:0"}, "target_portal"},
		{"portal port big", map[string]any{"target_portal": "1.2.3.4:65536"}, "target_portal"},
		{"portal junk", map[string]any{"target_portal": "1.2.3.4:3260;rm"}, "target_portal"},
		{"portal v6 no bracket close", map[string]any{"target_portal": "[fd00::1:3260"}, "target_portal"},
		{"portal number", map[string]any{"target_portal": 3260}, "target_portal"},
		{"iqn missing", map[string]any{"target_iqn": nil}, "target_iqn"},
		{"iqn bad", map[string]any{"target_iqn": "iqn.x"}, "target_iqn"},
		{"iqn dotdot path", map[string]any{"target_iqn": "iqn.2010-10.org.x:../../etc"}, "target_iqn"},
		{"iqn slash", map[string]any{"target_iqn": "iqn.2010-10.org.x:a/b"}, "target_iqn"},
		{"iqn option", map[string]any{"target_iqn": "--login"}, "target_iqn"},
		{"lun negative", map[string]any{"target_lun": -1}, "target_lun"},
		{"lun big", map[string]any{"target_lun": 16384}, "target_lun"},
		{"lun float", map[string]any{"target_lun": 1.5}, "target_lun"},
		{"lun null", map[string]any{"target_lun": nil, "target_portals": []any{"1.1.1.1"}, "target_iqns": []any{iqn1}}, "target_luns"},
		{"addressing mode unknown", map[string]any{"addressing_mode": "SAM4"}, "addressing_mode"},
		{"addressing mode number", map[string]any{"addressing_mode": 2}, "addressing_mode"},
		{"lun beyond flat space", map[string]any{"target_lun": 16384, "addressing_mode": "SAM2"}, "target_lun"},
		{"auth method", map[string]any{"auth_method": "kerberos"}, "auth_method"},
		{"chap no user", map[string]any{"auth_method": "CHAP", "auth_password": secret}, "auth_username"},
		{"chap no pass", map[string]any{"auth_method": "CHAP", "auth_username": "u"}, "auth_password"},
		{"chap newline", map[string]any{"auth_method": "CHAP", "auth_username": "u", "auth_password": secret + "\nnode.startup = automatic"}, "auth_password"},
		{"chap user newline", map[string]any{"auth_method": "CHAP", "auth_username": "u\nx", "auth_password": secret}, "auth_username"},
		{"chap long", map[string]any{"auth_method": "CHAP", "auth_username": "u", "auth_password": strings.Repeat("x", 257)}, "auth_password"},
		{"discovery chap", map[string]any{"discovery_auth_method": "CHAP", "discovery_auth_username": "u", "discovery_auth_password": " " + secret}, "discovery_auth_password"},
		{"access mode", map[string]any{"access_mode": "rwx"}, "access_mode"},
		{"encrypted", map[string]any{"encrypted": "maybe"}, "encrypted"},
		{"plural lengths", map[string]any{"target_portals": []any{"1.1.1.1", "1.1.1.2"}, "target_iqns": []any{iqn1}, "target_luns": []any{1, 1}}, "target_iqns"},
		{"plural lun lengths", map[string]any{"target_portals": []any{"1.1.1.1", "1.1.1.2"}, "target_iqns": []any{iqn1, iqn1}, "target_luns": []any{1}}, "target_luns"},
		{"plural bad portal", map[string]any{"target_portals": []any{"1.1.1.1", "x y"}, "target_iqns": []any{iqn1, iqn1}, "target_luns": []any{1, 1}}, "target_portals[1]"},
		{"plural bad iqn", map[string]any{"target_portals": []any{"1.1.1.1"}, "target_iqns": []any{"nope"}, "target_luns": []any{1}}, "target_iqns[0]"},
		{"plural bad lun", map[string]any{"target_portals": []any{"1.1.1.1"}, "target_iqns": []any{iqn1}, "target_luns": []any{99999}}, "target_luns[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := map[string]any{}
			for k, v := range base {
				data[k] = v
			}
			for k, v := range tc.set {
				data[k] = v
			}
			raw, err := json.Marshal(map[string]any{"driver_volume_type": "iscsi", "data": data})
			require.NoError(t, err)
			_, err = parse(t, string(raw))
			require.ErrorIs(t, err, connector.ErrInvalid)
			var ie *connector.InvalidError
			require.ErrorAs(t, err, &ie)
			require.Equal(t, tc.key, ie.Key, err.Error())
			require.NotContains(t, err.Error(), secret)
		})
	}
}

func TestParsePortal(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"10.0.0.1", "10.0.0.1:3260"},
		{"10.0.0.1:3261", "10.0.0.1:3261"},
		{"[fd00::1]:3260", "[fd00::1]:3260"},
		{"[FD00:0::1]", "[fd00::1]:3260"},
		{"fd00::1", "[fd00::1]:3260"},
		{"[::ffff:10.0.0.1]:3260", "10.0.0.1:3260"},
		{"[fe80::1%eth0]:3260", "[fe80::1%eth0]:3260"},
		{"storage.example.com:3261", "storage.example.com:3261"},
		{"SAN-A", "san-a:3260"},
		{"san-a.example.com.", "san-a.example.com:3260"},
		// Unbracketed IPv6: all address, port 3260, as iscsiadm reads it.
		{"fd00::1:3260", "[fd00::1:3260]:3260"},
	} {
		p, err := iscsi.ParsePortal(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, p.String(), tc.in)
	}
	for _, bad := range []string{"", ":3260", "10.0.0.1:", "10.0.0.1:03260", "10.0.0.1:+3260", "10.0.0.1:x", "[10.0.0.1]:3260", "[fd00::1]x", "fd00::1::2", "1.2.3", "-p", "a b", "host_1:3260", "[host]:3260", "a..b", "x-:1", "[fe80::1%$(x)]:3260", "10.0.0.1:3260:1"} {
		_, err := iscsi.ParsePortal(bad)
		require.Error(t, err, bad)
	}
}

func FuzzParsePortal(f *testing.F) {
	for _, s := range []string{"10.0.0.1:3260", "[fd00::1]:3260", "fd00::1", "x:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := iscsi.ParsePortal(s)
		if err != nil {
			return
		}
		again, err := iscsi.ParsePortal(p.String())
		if err != nil || again != p {
			t.Fatalf("%q -> %q does not round-trip: %v", s, p.String(), err)
		}
		if strings.HasPrefix(p.String(), "-") || strings.ContainsAny(p.String(), " \n\x00/") {
			t.Fatalf("unsafe portal %q", p.String())
		}
	})
}

// FuzzParseInfo feeds raw connection info through the shared parser and
// the iSCSI validation: no panic, every accepted value safe for argv and
// paths, and no error ever repeats the password.
func FuzzParseInfo(f *testing.F) {
	f.Add([]byte(`{"driver_volume_type":"iscsi","data":{"target_portal":"127.0.0.1:3260","target_iqn":"` + iqn1 + `","target_lun":1,"auth_method":"CHAP","auth_username":"u","auth_password":"` + secret + `"}}`))
	f.Add([]byte(`{"driver_volume_type":"iscsi","target_portals":["10.0.0.1","[fd00::1]:3261"],"target_iqns":["` + iqn1 + `","` + iqn1 + `"],"target_luns":[1,"2"],"auth_password":"` + secret + `"}`))
	f.Add([]byte(`{"connection_info":{"driver_volume_type":"iscsi","data":{"target_portal":"-x","target_iqn":"iqn.","target_lun":-1}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ci, err := connector.ParseConnectionInfo(raw)
		if err != nil {
			return
		}
		info, err := iscsi.ParseInfo(ci)
		if err != nil {
			for _, s := range ci.Secrets() {
				// A secret that also appears as another key's value may be
				// quoted for that key; only a secret found once is checked.
				if len(s) >= 4 && strings.Count(string(raw), s) == 1 && strings.Contains(err.Error(), s) {
					t.Fatalf("error repeats a secret: %v", err)
				}
			}
			return
		}
		if len(info.Targets) == 0 {
			t.Fatal("accepted with no target")
		}
		for _, tg := range info.Targets {
			if !ident.IQN(tg.IQN) || strings.ContainsAny(tg.IQN, "/\n") || strings.HasPrefix(tg.IQN, "-") {
				t.Fatalf("unsafe IQN %q", tg.IQN)
			}
			if tg.LUN < 0 || tg.LUN > 16383 {
				t.Fatalf("LUN %d", tg.LUN)
			}
			if _, err := iscsi.ParsePortal(tg.Portal.String()); err != nil {
				t.Fatalf("portal %q: %v", tg.Portal.String(), err)
			}
		}
		for _, c := range []*iscsi.CHAP{info.Auth, info.DiscoveryAuth} {
			if c != nil && (strings.ContainsAny(c.Password.Reveal()+c.Username, "\n\r\x00") || c.Password.IsZero()) {
				t.Fatalf("unsafe CHAP %q", c.Username)
			}
		}
	})
}

func TestParseDiscovery(t *testing.T) {
	out := "127.0.0.1:3260,1 " + iqn1 + "\n" +
		"[fd00::2]:3260,2 " + iqn1 + "\n" +
		"10.0.0.9:3260,-1 iqn.2010-10.org.x:other\n" +
		"garbage line here\n" +
		"10.0.0.8:3260 " + iqn1 + "\n" +
		"-x:3260,1 " + iqn1 + "\n" +
		"10.0.0.7:3260,1 ../../etc\n"
	got := iscsi.ParseDiscovery([]byte(out))
	require.Equal(t, []iscsi.DiscoveredTarget{
		{Portal: iscsi.Portal{Host: "127.0.0.1", Port: 3260}, TPGT: 1, IQN: iqn1},
		{Portal: iscsi.Portal{Host: "fd00::2", Port: 3260}, TPGT: 2, IQN: iqn1},
		{Portal: iscsi.Portal{Host: "10.0.0.9", Port: 3260}, TPGT: -1, IQN: "iqn.2010-10.org.x:other"},
	}, got)
}

func FuzzParseDiscovery(f *testing.F) {
	f.Add([]byte("127.0.0.1:3260,1 " + iqn1 + "\n[fd00::2]:3260,2 " + iqn1 + "\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		for _, d := range iscsi.ParseDiscovery(out) {
			if !ident.IQN(d.IQN) {
				t.Fatalf("bad IQN %q", d.IQN)
			}
			if _, err := iscsi.ParsePortal(d.Portal.String()); err != nil {
				t.Fatalf("bad portal %q", d.Portal.String())
			}
		}
	})
}

// TestParseInfoUnbracketedIPv6: "fd00::1:3260" is read as iscsiadm reads
// it (all address, port 3260) and the info carries a warning saying so.
func TestParseInfoUnbracketedIPv6(t *testing.T) {
	info, err := parse(t, `{"driver_volume_type":"iscsi","data":{"target_portal":"fd00::1:3260","target_iqn":"`+iqn1+`","target_lun":1}}`)
	require.NoError(t, err)
	require.Equal(t, iscsi.Portal{Host: "fd00::1:3260", Port: 3260}, info.Targets[0].Portal)
	require.Len(t, info.Warnings, 1)
	require.Contains(t, info.Warnings[0], "[address]:port")
	info, err = parse(t, `{"driver_volume_type":"iscsi","data":{"target_portal":"[fd00::1]:3260","target_iqn":"`+iqn1+`","target_lun":1}}`)
	require.NoError(t, err)
	require.Empty(t, info.Warnings)
}
