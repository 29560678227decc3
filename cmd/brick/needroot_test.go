package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRecordCommandsNeedRoot: every command that reads brick's records or
// takes its locks refuses a user with one line naming the command and the
// fix, before it reads or creates anything.
func TestRecordCommandsNeedRoot(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	ci := `{"driver_volume_type":"iscsi","data":{"target_portal":"127.0.0.1:3260","target_iqn":"iqn.2010-10.org.openstack:volume-1","target_lun":1}}`
	for _, args := range [][]string{
		{"list", "--offline"},
		{"get-volume-paths", "11111111-1111-4111-8111-111111111111", "--os-auth-type", "noauth", "--cinder-endpoint", "http://127.0.0.1:9/v3"},
		{"get-all-volume-paths"},
		{"connect", "--connection-info", ci},
		{"disconnect", "--connection-info", ci},
		{"local-detach", "11111111-1111-4111-8111-111111111111"},
		{"restore"},
	} {
		var out, errb strings.Builder
		a := newApp(&out, &errb)
		a.euid = 1000
		code := runApp(t.Context(), a, append(args, "--config", "/dev/null"))
		require.Equal(t, 1, code, "%v: %s", args, errb.String())
		require.Equal(t, "brick: "+args[0]+" needs root: brick's records, locks and the devices it attaches are root's (run it with sudo)\n", errb.String(), args)
		require.Empty(t, out.String(), args)
	}
}
