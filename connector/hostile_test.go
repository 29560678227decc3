package connector

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHostileDocuments: whole connection info documents that are not what
// Cinder sends are refused naming the key, and a driver_volume_type no
// connector handles is refused by the registry naming it (cut short).
func TestHostileDocuments(t *testing.T) {
	for _, tc := range []struct {
		name, doc, key string
	}{
		{"not an object", `"iscsi"`, "connection_info"},
		{"array", `[{"driver_volume_type":"iscsi"}]`, "connection_info"},
		{"null", `null`, "connection_info"},
		{"trailing", `{"driver_volume_type":"iscsi"} {"x":1}`, "connection_info"},
		{"truncated", `{"driver_volume_type":"isc`, "connection_info"},
		{"deep nesting", strings.Repeat("[", 100000), "connection_info"},
		{"huge", `{"driver_volume_type":"iscsi","x":"` + strings.Repeat("A", MaxConnectionInfoSize) + `"}`, "connection_info"},
		{"wrapped not object", `{"connection_info":"x"}`, "connection_info"},
		{"data list", `{"driver_volume_type":"iscsi","data":[1]}`, "data"},
		{"data string", `{"driver_volume_type":"iscsi","data":"target_portal=1"}`, "data"},
		{"type missing", `{"data":{}}`, "driver_volume_type"},
		{"type number", `{"driver_volume_type":1}`, "driver_volume_type"},
		{"type list", `{"driver_volume_type":["iscsi"]}`, "driver_volume_type"},
		{"type shell", `{"driver_volume_type":"iscsi;reboot"}`, "driver_volume_type"},
		{"type path", `{"driver_volume_type":"../iscsi"}`, "driver_volume_type"},
		{"type option", `{"driver_volume_type":"-iscsi"}`, "driver_volume_type"},
		{"type NUL", `{"driver_volume_type":"iscsi\u0000"}`, "driver_volume_type"},
		{"type empty", `{"driver_volume_type":""}`, "driver_volume_type"},
		{"type huge", `{"driver_volume_type":"` + strings.Repeat("a", 5000) + `"}`, "driver_volume_type"},
	} {
		_, err := ParseConnectionInfo([]byte(tc.doc))
		require.Error(t, err, tc.name)
		require.True(t, errors.Is(err, ErrInvalid), "%s: %v", tc.name, err)
		require.Contains(t, err.Error(), `"`+tc.key+`"`, tc.name)
		require.Less(t, len(err.Error()), 400, "%s: the error stays short", tc.name)
	}

	r := NewRegistry()
	r.Register(stubConnector{}, "iscsi")
	for _, typ := range []string{"vmdk", "scaleio", "fibre_channel", strings.Repeat("x", 32)} {
		ci, err := ParseConnectionInfo([]byte(`{"driver_volume_type":"` + typ + `"}`))
		require.NoError(t, err)
		_, err = r.For(ci.DriverVolumeType)
		require.ErrorIs(t, err, ErrUnsupported)
		require.Contains(t, err.Error(), `"`+typ[:min(len(typ), 32)])
	}
}
