package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIronicBootFromVolumeUsage(t *testing.T) {
	_, url := newFakeIronicServer(t)
	env := []string{"BRICK_CONFIG=", "OS_AUTH_TYPE=noauth", "BRICK_IRONIC_ENDPOINT=" + url}
	for _, args := range [][]string{
		{"node-1"},
		{"node-1", "--volume", "v", "--undo"},
		{"node-1", "--undo", "--deploy"},
		{"node-1", "--undo", "--initiator", "iqn.2004-10.com.example:n"},
		{"node-1", "--image", "disk.raw"},
		{"node-1", "--volume", "v", "--image", "disk.raw", "--size", "1"},
		{"node-1", "--volume", "v", "--size", "1"},
		{"node-1", "--undo", "--volume-name", "x"},
	} {
		_, errOut, code := runBrick(t, env, append([]string{"ironic", "boot-from-volume"}, args...)...)
		require.Equal(t, 2, code, "%v: %s", args, errOut)
	}
	_, errOut, code := runBrick(t, env, "ironic", "boot-from-volume", "nosuch", "--undo")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "boot-from-volume --undo node nosuch")
}
