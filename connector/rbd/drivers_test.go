package rbd

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDriverShapes runs connection info shaped the way Cinder's RBD driver
// builds it (cinder/volume/drivers/rbd.py initialize_connection and
// _get_keyring_contents; values are made up) through the parser.
func TestDriverShapes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mutate   func(d map[string]any)
		monitors []string
		user     string
		key      bool
		ignored  int
	}{
		{name: "rbd_secret_uuid set, no keyring", monitors: []string{"192.0.2.10:6789", "192.0.2.11:6789"}, user: "cinder"},
		{name: "rbd_secret_uuid unset (None)", mutate: func(d map[string]any) { d["secret_uuid"] = nil }, monitors: []string{"192.0.2.10:6789", "192.0.2.11:6789"}, user: "cinder"},
		{name: "secret_uuid a libvirt secret name, not a UUID", mutate: func(d map[string]any) { d["secret_uuid"] = "client.cinder secret" }, monitors: []string{"192.0.2.10:6789", "192.0.2.11:6789"}, user: "cinder", ignored: 1},
		{name: "rbd_keyring_conf: the keyring file's contents", mutate: func(d map[string]any) { d["keyring"] = testKeyring }, monitors: []string{"192.0.2.10:6789", "192.0.2.11:6789"}, user: "cinder", key: true},
		{name: "IPv6 monitors, ports as strings", mutate: func(d map[string]any) {
			d["hosts"] = []any{"2001:db8::10", "2001:db8::11"}
		}, monitors: []string{"[2001:db8::10]:6789", "[2001:db8::11]:6789"}, user: "cinder"},
		{name: "auth disabled: no user", mutate: func(d map[string]any) {
			d["auth_enabled"] = false
			d["auth_username"] = nil
			d["secret_type"] = nil
			d["secret_uuid"] = nil
		}, monitors: []string{"192.0.2.10:6789", "192.0.2.11:6789"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ParseVolume(cinderInfo(t, tc.mutate))
			require.NoError(t, err)
			require.Equal(t, "volumes/volume-6d54cb90-a5d1-40d8-9cb2-c6adf43a02af", v.Spec())
			require.Equal(t, tc.monitors, v.Monitors)
			require.Equal(t, tc.user, v.User)
			require.Equal(t, tc.key, !v.Key.IsZero())
			require.Len(t, v.Ignored, tc.ignored)
		})
	}
}
