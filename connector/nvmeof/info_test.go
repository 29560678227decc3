package nvmeof

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
)

const (
	testNQN  = "nqn.2014-08.org.nvmexpress:uuid:0c3b1f1e-5e0b-4d2c-9b1a-3f2e1d0c9b8a"
	testVol  = "11111111-2222-4333-8444-555555555555"
	testNGID = "0123456789abcdef0123456789abcdef"
)

func mustInfo(t testing.TB, doc string) connector.ConnectionInfo {
	t.Helper()
	ci, err := connector.ParseConnectionInfo([]byte(doc))
	require.NoError(t, err)
	return ci
}

// oldInfo is what Cinder Zed's nvmet target sends (port and ns_id as strings).
func oldInfo() map[string]any {
	return map[string]any{
		"driver_volume_type": "nvmeof", "nqn": testNQN, "transport_type": "tcp",
		"target_portal": "10.0.0.1", "target_port": "4420", "ns_id": "3",
	}
}

func newInfo() map[string]any {
	return map[string]any{
		"driver_volume_type": "nvmeof", "target_nqn": testNQN, "vol_uuid": testVol, "ns_id": 3,
		"volume_nguid": testNGID,
		"portals":      []any{[]any{"10.0.0.1", 4420, "tcp"}, []any{"10.0.0.2", "4421", "tcp"}},
	}
}

func build(t testing.TB, m map[string]any, set map[string]any) connector.ConnectionInfo {
	t.Helper()
	doc := map[string]any{}
	for k, v := range m {
		doc[k] = v
	}
	for k, v := range set {
		if v == nil {
			delete(doc, k)
			continue
		}
		doc[k] = v
	}
	raw, err := json.Marshal(doc)
	require.NoError(t, err)
	return mustInfo(t, string(raw))
}

func TestParseVolumeFormats(t *testing.T) {
	for _, tc := range []struct {
		name string
		base map[string]any
		set  map[string]any
		want Volume
	}{
		{"old, strings as Zed sends them", oldInfo(), nil, Volume{NQN: testNQN, NSID: 3,
			Portals: []Portal{{"10.0.0.1", 4420, TransportTCP}}}},
		{"old, rdma and host_nqn", oldInfo(), map[string]any{"transport_type": "rdma", "host_nqn": "nqn.2014-08.org.nvmexpress:uuid:h", "target_port": 4420}, Volume{
			NQN: testNQN, NSID: 3, HostNQN: "nqn.2014-08.org.nvmexpress:uuid:h", Portals: []Portal{{"10.0.0.1", 4420, TransportRDMA}}}},
		{"old, Cinder nvmet's own subsystem name", oldInfo(), map[string]any{"nqn": "nqn.nvme-subsystem-1-" + testVol}, Volume{
			NQN: "nqn.nvme-subsystem-1-" + testVol, NSID: 3, Portals: []Portal{{"10.0.0.1", 4420, TransportTCP}}}},
		{"old, nguid only", oldInfo(), map[string]any{"ns_id": nil, "volume_nguid": "01234567-89AB-CDEF-0123-456789ABCDEF"}, Volume{
			NQN: testNQN, NGUID: testNGID, Portals: []Portal{{"10.0.0.1", 4420, TransportTCP}}}},
		{"new, two portals", newInfo(), nil, Volume{NQN: testNQN, NSID: 3, UUID: testVol, NGUID: testNGID, NewFormat: true,
			Portals: []Portal{{"10.0.0.1", 4420, TransportTCP}, {"10.0.0.2", 4421, TransportTCP}}}},
		{"new, RoCEv2 is rdma, other names tcp, duplicates dropped", newInfo(), map[string]any{"portals": []any{
			[]any{"fd00::1", 4420, "RoCEv2"}, []any{"10.0.0.2", 4420, "FC"}, []any{"10.0.0.2", 4420, "tcp"}}}, Volume{
			NQN: testNQN, NSID: 3, UUID: testVol, NGUID: testNGID, NewFormat: true,
			Portals: []Portal{{"fd00::1", 4420, TransportRDMA}, {"10.0.0.2", 4420, TransportTCP}}}},
		{"old, no ns_id, volume_nguid or vol_uuid: the subsystem's only namespace", oldInfo(), map[string]any{"ns_id": nil}, Volume{
			NQN: testNQN, Portals: []Portal{{"10.0.0.1", 4420, TransportTCP}}}},
		{"new, vol_uuid as 32 hex digits (an NGUID) is normalised", newInfo(), map[string]any{"vol_uuid": "0123456789ABCDEF0123456789ABCDEF", "volume_nguid": nil, "ns_id": nil}, Volume{
			NQN: testNQN, UUID: "01234567-89ab-cdef-0123-456789abcdef", UUIDHex: true, NewFormat: true,
			Portals: []Portal{{"10.0.0.1", 4420, TransportTCP}, {"10.0.0.2", 4421, TransportTCP}}}},
		{"new, uuid only, read-only", newInfo(), map[string]any{"ns_id": nil, "volume_nguid": nil, "access_mode": "ro"}, Volume{
			NQN: testNQN, UUID: testVol, NewFormat: true, ReadOnly: true,
			Portals: []Portal{{"10.0.0.1", 4420, TransportTCP}, {"10.0.0.2", 4421, TransportTCP}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ParseVolume(build(t, tc.base, tc.set))
			require.NoError(t, err)
			require.Equal(t, tc.want, v)
		})
	}
}

func TestParseVolumeRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		base map[string]any
		set  map[string]any
		key  string
	}{
		{"old, no nqn", oldInfo(), map[string]any{"nqn": nil}, "nqn"},
		{"old, nqn with option injection", oldInfo(), map[string]any{"nqn": "nqn.2014-08.x,hostnqn=evil"}, "nqn"},
		{"old, nqn not an nqn", oldInfo(), map[string]any{"nqn": "iqn.2010-10.org:x"}, "nqn"},
		{"old, no portal", oldInfo(), map[string]any{"target_portal": nil}, "target_portal"},
		{"old, host name", oldInfo(), map[string]any{"target_portal": "array.example"}, "target_portal"},
		{"old, zone", oldInfo(), map[string]any{"target_portal": "fe80::1%eth0"}, "target_portal"},
		{"old, no port", oldInfo(), map[string]any{"target_port": nil}, "target_port"},
		{"old, port zero", oldInfo(), map[string]any{"target_port": 0}, "target_port"},
		{"old, port text", oldInfo(), map[string]any{"target_port": "4420;reboot"}, "target_port"},
		{"old, transport shell", oldInfo(), map[string]any{"transport_type": "tcp,traddr=1"}, "transport_type"},
		{"old, ns_id zero", oldInfo(), map[string]any{"ns_id": 0}, "ns_id"},
		{"old, ns_id huge", oldInfo(), map[string]any{"ns_id": 1 << 40}, "ns_id"},
		{"old, host_nqn bad", oldInfo(), map[string]any{"host_nqn": "x,y"}, "host_nqn"},
		{"mixed formats", oldInfo(), map[string]any{"target_nqn": testNQN}, "nqn"},
		{"replicas", newInfo(), map[string]any{"volume_replicas": []any{}}, "volume_replicas"},
		{"new, vol_uuid 31 hex digits", newInfo(), map[string]any{"vol_uuid": testNGID[1:]}, "vol_uuid"},
		{"new, vol_uuid misplaced dashes", newInfo(), map[string]any{"vol_uuid": "0123-456789abcdef0123456789abcdef"}, "vol_uuid"},
		{"new, no portals", newInfo(), map[string]any{"portals": nil}, "portals"},
		{"new, portals string", newInfo(), map[string]any{"portals": "10.0.0.1:4420"}, "portals"},
		{"new, portals empty", newInfo(), map[string]any{"portals": []any{}}, "portals"},
		{"new, portal pair", newInfo(), map[string]any{"portals": []any{[]any{"10.0.0.1", 4420}}}, "portals[0]"},
		{"new, portal address", newInfo(), map[string]any{"portals": []any{[]any{"10.0.0.1", 4420, "tcp"}, []any{"-x", 4420, "tcp"}}}, "portals[1][0]"},
		{"new, portal port", newInfo(), map[string]any{"portals": []any{[]any{"10.0.0.1", 70000, "tcp"}}}, "portals[0][1]"},
		{"new, portal port type", newInfo(), map[string]any{"portals": []any{[]any{"10.0.0.1", []any{}, "tcp"}}}, "portals[0][1]"},
		{"new, portal transport", newInfo(), map[string]any{"portals": []any{[]any{"10.0.0.1", 4420, 5}}}, "portals[0][2]"},
		{"new, vol_uuid", newInfo(), map[string]any{"vol_uuid": "../../etc"}, "vol_uuid"},
		{"new, nguid", newInfo(), map[string]any{"volume_nguid": "xyz"}, "volume_nguid"},
		{"new, target_nqn", newInfo(), map[string]any{"target_nqn": 5}, "target_nqn"},
		{"access_mode", newInfo(), map[string]any{"access_mode": "rx"}, "access_mode"},
		{"wrong type", newInfo(), map[string]any{"driver_volume_type": "iscsi"}, "driver_volume_type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseVolume(build(t, tc.base, tc.set))
			require.Error(t, err)
			require.True(t, errors.Is(err, connector.ErrInvalid), "%v", err)
			require.Contains(t, err.Error(), `"`+tc.key+`"`)
		})
	}
}

// FuzzParseVolume: any document either parses into a volume whose values
// are safe in the kernel's option string, or is refused as invalid.
func FuzzParseVolume(f *testing.F) {
	for _, m := range []map[string]any{oldInfo(), newInfo()} {
		raw, _ := json.Marshal(m)
		f.Add(raw)
	}
	f.Add([]byte(`{"driver_volume_type":"nvmeof","target_nqn":"nqn.2014-08.a:b","portals":[["::1","1","x"]],"vol_uuid":"` + testVol + `"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ci, err := connector.ParseConnectionInfo(raw)
		if err != nil {
			return
		}
		v, err := ParseVolume(ci)
		if err != nil {
			if !errors.Is(err, connector.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		opts := fabricsOptions(v.NQN, v.Portals[0], v.HostNQN, "")
		want := 4
		if v.HostNQN != "" {
			want++
		}
		if n := len(splitOptions(opts)); n != want {
			t.Fatalf("option string %q has %d options, want %d", opts, n, want)
		}
		if v.UUID != "" && !ident.IsUUID(v.UUID) {
			t.Fatalf("vol_uuid %q not normalised", v.UUID)
		}
	})
}
