package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConnectDryRun: --dry-run prints the plan with stable keys, exits 0
// for a dict brick would attempt and 1 naming the key otherwise, and
// leaves the host root as it was.
func TestConnectDryRun(t *testing.T) {
	root := t.TempDir()
	ci := filepath.Join(root, "ci.json")
	require.NoError(t, os.WriteFile(ci, []byte(`{"driver_volume_type":"iscsi","data":{"target_portal":"10.0.0.1:3260","target_iqn":"iqn.2010-10.org.openstack:volume-1","target_lun":300,"addressing_mode":"SAM2","auth_method":"CHAP","auth_username":"u","auth_password":"pw-not-shown"}}`), 0o600))
	before := listTree(t, root)

	out, errOut, code := runBrick(t, []string{"BRICK_CONFIG="}, "connect", "--dry-run", "--host-root", root, "--connection-info", ci, "-f", "json")
	require.Equal(t, 0, code, errOut)
	var plan map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &plan))
	for _, k := range []string{"protocol", "action", "dry_run", "multipath", "portals", "target_iqns", "kernel_luns", "steps", "warnings"} {
		require.Contains(t, plan, k)
	}
	require.Equal(t, []any{16684.0}, plan["kernel_luns"])
	require.NotContains(t, out+errOut, "pw-not-shown")

	out, errOut, code = runBrick(t, []string{"BRICK_CONFIG="}, "disconnect", "--dry-run", "--host-root", root, "--connection-info", ci)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "nothing to do")

	require.NoError(t, os.WriteFile(ci, []byte(`{"driver_volume_type":"iscsi","data":{"target_portal":"10.0.0.1:3260","target_iqn":"--op=delete","target_lun":1}}`), 0o600))
	_, errOut, code = runBrick(t, []string{"BRICK_CONFIG="}, "connect", "--dry-run", "--host-root", root, "--connection-info", ci)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, `key "target_iqn"`)
	require.Equal(t, before, listTree(t, root))
}

func listTree(t *testing.T, root string) []string {
	var out []string
	require.NoError(t, filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		out = append(out, p)
		return err
	}))
	return out
}
