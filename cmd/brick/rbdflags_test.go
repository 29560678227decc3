package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRBDDriverFlag(t *testing.T) {
	root := t.TempDir()
	ci := filepath.Join(root, "ci.json")
	// Invalid on purpose: the rbd connector must reject it before running anything.
	require.NoError(t, os.WriteFile(ci, []byte(`{"driver_volume_type":"rbd","data":{"name":"--conf=/x/img"}}`), 0o600))

	_, errOut, code := runBrick(t, []string{"BRICK_CONFIG="}, "connect", "--host-root", root, "--connection-info", ci, "--rbd-driver", "ggate")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, `brick: --rbd-driver "ggate": want one of krbd, nbd`)

	_, errOut, code = runBrick(t, []string{"BRICK_CONFIG=", "BRICK_RBD_DRIVER=rbd-nbd"}, "connect", "--host-root", root, "--connection-info", ci)
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, `BRICK_RBD_DRIVER="rbd-nbd" is not valid for --rbd-driver`)

	_, errOut, code = runBrick(t, []string{"BRICK_CONFIG=", "BRICK_RBD_DRIVER=nbd"}, "connect", "--host-root", root, "--connection-info", ci)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, `key "name"`)
}
