package rbd

import (
	"testing"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/internal/hostile"
)

// TestHostileConnectionInfo feeds hostile values for every key the RBD
// connector reads to Connect, Disconnect and DevicePaths: each is refused
// naming the key, never repeating the key material, and no rbd runs.
func TestHostileConnectionInfo(t *testing.T) {
	keyring := "[client.cinder]\n\tkey = " + testKey + "\n"
	base := map[string]any{
		"driver_volume_type": "rbd",
		"name":               "volumes/volume-11111111-1111-4111-8111-111111111111",
		"hosts":              []any{"10.0.0.1", "10.0.0.2"},
		"ports":              []any{"6789", "6789"},
		"auth_enabled":       true,
		"auth_username":      "cinder",
		"keyring":            keyring,
		"cluster_name":       "ceph",
		"secret_uuid":        "22222222-2222-4222-8222-222222222222",
		"volume_id":          "11111111-1111-4111-8111-111111111111",
		"access_mode":        "rw",
	}
	cases := hostile.Common("name")
	cases = append(cases, hostile.Strings("name",
		"volumes/../../etc/passwd", "../volumes/img", "/etc/ceph/ceph.conf", "volumes/-o", "-p/img", "volumes/img@snap",
		"volumes/ns/img/extra", "volumes/.img", "volumes/", "volumes/img;reboot", "volumes/$(reboot)", "volumes/img\nx", "volumes/"+hostile.Huge)...)
	for _, v := range append([]string{"-m", "--id=admin", "10.0.0.1;reboot", "$(reboot)", "../etc", "/etc/hosts", "x\x00", hostile.Huge, "[fe80::1%eth0]", "a b"}, hostile.Shell...) {
		cases = append(cases, hostile.Case{Name: "hosts " + v[:min(len(v), 16)], Key: "hosts", Value: []any{"10.0.0.1", v}, WantKey: "hosts[1]"})
	}
	cases = append(cases, hostile.Strings("hosts", 5, true, map[string]any{}, []any{5})...)
	cases = append(cases,
		hostile.Case{Name: "ports bad", Key: "ports", Value: []any{"6789", "-1"}, WantKey: "ports[1]"},
		hostile.Case{Name: "ports shell", Key: "ports", Value: []any{"6789", "6789;reboot"}, WantKey: "ports[1]"},
		hostile.Case{Name: "ports big", Key: "ports", Value: []any{"6789", 70000}, WantKey: "ports[1]"},
		hostile.Case{Name: "ports count", Key: "ports", Value: []any{"6789"}},
		hostile.Case{Name: "ports type", Key: "ports", Value: map[string]any{}},
	)
	cases = append(cases, hostile.Common("auth_username")...)
	cases = append(cases, hostile.Strings("auth_username", "-admin", "../admin", "/etc/ceph", "client.-x", "admin/x")...)
	cases = append(cases, hostile.Common("cluster_name")...)
	cases = append(cases, hostile.Strings("cluster_name", "-c", "../ceph", "/etc/ceph/ceph", "ceph.conf", "_x")...)
	cases = append(cases, hostile.Strings("keyring", "garbage", "[client.cinder]\nkey = not-base64;reboot\n", "[client.other]\nkey = "+testKey+"\n",
		"[client.cinder\nkey = "+testKey+"\n", "key = "+testKey+"\n", "x\x00", 5, []any{keyring}, map[string]any{})...)
	cases = append(cases, hostile.Strings("access_mode", "rw;reboot", "-rw", 1)...)
	// secret_uuid, secret_type, volume_id, auth_enabled, discard and
	// qos_specs are never acted on: unreadable values are ignored (see
	// TestParseVolumeIgnoresUnusedKeys).

	n := hostile.Check(t, base, cases, func(t *testing.T) (connector.Connector, *hosttest.Runner) {
		r := hosttest.NewRunner(nil)
		h, _ := hosttest.New(t, r)
		return New(h, Options{TempDir: t.TempDir()}), r
	}, testKey)
	t.Logf("rbd: %d hostile (case, entry point) pairs refused, 0 commands run", n)
}
