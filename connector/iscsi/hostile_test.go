package iscsi_test

import (
	"testing"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/internal/hostile"
)

const hostilePW = "hostile-SECRET-pw"

// TestHostileConnectionInfo feeds hostile values for every key the iSCSI
// connector reads to Connect, Disconnect and DevicePaths: each is refused
// naming the key, repeats no password, and no iscsiadm runs.
func TestHostileConnectionInfo(t *testing.T) {
	base := map[string]any{
		"driver_volume_type":      "iscsi",
		"target_portal":           "10.0.0.1:3260",
		"target_iqn":              tgtIQN,
		"target_lun":              1,
		"auth_method":             "CHAP",
		"auth_username":           "user",
		"auth_password":           hostilePW,
		"discovery_auth_method":   "CHAP",
		"discovery_auth_username": "duser",
		"discovery_auth_password": hostilePW + "-d",
		"volume_id":               "11111111-1111-4111-8111-111111111111",
		"access_mode":             "rw",
	}
	var cases []hostile.Case
	for _, k := range []string{"target_portal", "target_iqn"} {
		cases = append(cases, hostile.Common(k)...)
	}
	cases = append(cases, hostile.Strings("target_portal",
		"../../etc/passwd:3260", "/etc/iscsi/nodes", "10.0.0.1:-1", "10.0.0.1:3260 -o delete", "-p", "iscsi_a.example.com:3260",
		"10.0.0.1:99999", "[fe80::1%eth0;reboot]:3260", "10.0.0.1:03260")...)
	cases = append(cases, hostile.Strings("target_iqn",
		"iqn.2010-10.org.openstack:../../../etc", "iqn.2010-10.org.openstack:a/b", "/etc/shadow", "../x",
		"iqn.2010-10.org.openstack:a\nnode.startup = automatic", "-T", "iqn.2010-10.org.openstack:a,b", "iqn.2010-10.org.openstack:a[1]")...)
	cases = append(cases, hostile.Strings("target_lun", -1, 1<<20, "1;reboot", "-1", 1.5, true, "x", []any{"1"}, map[string]any{})...)
	cases = append(cases,
		hostile.Case{Name: "target_portals shell", Key: "target_portals", Value: []any{"10.0.0.1:3260", "$(reboot)"}, WantKey: "target_portals[1]"},
		hostile.Case{Name: "target_portals type", Key: "target_portals", Value: []any{"10.0.0.1:3260", 7}, WantKey: "target_portals[1]"},
		hostile.Case{Name: "target_portals object", Key: "target_portals", Value: map[string]any{"a": "b"}},
		hostile.Case{Name: "target_portals too many", Key: "target_portals", Value: manyStrings(300, "10.0.0.1:3260")},
		hostile.Case{Name: "target_portals NUL", Key: "target_portals", Value: []any{"10.0.0.1:3260\x00"}, WantKey: "target_portals[0]"},
	)
	for _, k := range []string{"auth_method", "discovery_auth_method"} {
		cases = append(cases, hostile.Strings(k, "CHAP;reboot", "-x", "md5", 5, true, "x\x00")...)
	}
	for _, k := range []string{"auth_username", "discovery_auth_username", "auth_password", "discovery_auth_password"} {
		cases = append(cases, hostile.Strings(k, "x\nnode.startup = automatic", "x\x00", hostile.Huge, " x", 5, []any{"x"}, map[string]any{})...)
	}
	cases = append(cases, hostile.Strings("access_mode", "rw;reboot", "-rw", 1, true)...)
	// volume_id and target_discovered are ignored when unreadable: see
	// TestParseInfoIgnoresUnusedKeys.
	cases = append(cases, hostile.Strings("encrypted", "maybe", []any{})...)
	cases = append(cases, hostile.Strings("driver_volume_type", "fibre_channel")...)

	newConn := func(t *testing.T) (connector.Connector, *hosttest.Runner) {
		r := hosttest.NewRunner(nil)
		h, _ := hosttest.New(t, r)
		return iscsi.New(h, iscsi.Options{Multipath: true}), r
	}
	n := hostile.Check(t, base, cases, newConn, hostilePW)

	// The plural keys of a multipath export.
	plural := map[string]any{}
	for k, v := range base {
		plural[k] = v
	}
	plural["target_portals"] = []any{"10.0.0.1:3260", "10.0.0.2:3260"}
	plural["target_iqns"] = []any{tgtIQN, tgtIQN}
	plural["target_luns"] = []any{1, 1}
	var pcases []hostile.Case
	for _, v := range []any{"../../etc", "/etc/shadow", "-T", "x;reboot", 5, "x\x00"} {
		pcases = append(pcases, hostile.Case{Name: "target_iqns", Key: "target_iqns", Value: []any{tgtIQN, v}, WantKey: "target_iqns[1]"})
	}
	for _, v := range []any{-1, "1;reboot", 1.5, true, 1 << 20} {
		pcases = append(pcases, hostile.Case{Name: "target_luns", Key: "target_luns", Value: []any{1, v}, WantKey: "target_luns[1]"})
	}
	pcases = append(pcases,
		hostile.Case{Name: "target_iqns short", Key: "target_iqns", Value: []any{tgtIQN}},
		hostile.Case{Name: "target_luns long", Key: "target_luns", Value: []any{1, 1, 1}},
		hostile.Case{Name: "target_iqns type", Key: "target_iqns", Value: 5},
	)
	n += hostile.Check(t, plural, pcases, newConn, hostilePW)
	t.Logf("iscsi: %d hostile (case, entry point) pairs refused, 0 commands run", n)
}

func manyStrings(n int, s string) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = s
	}
	return out
}
