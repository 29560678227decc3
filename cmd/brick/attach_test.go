package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runVolumeCmd runs the CLI in-process and returns exit code, stdout, stderr.
func runVolumeCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestVolumeCommandErrors checks the one-line errors of the Cinder-backed
// commands: each names the command, the volume and the step.
func TestVolumeCommandErrors(t *testing.T) {
	root, fake := cinderHost(t)
	fake.AddVolume("11111111-1111-4111-8111-111111111111", "data")
	fake.AddVolume("22222222-2222-4222-8222-222222222222", "dup")
	fake.AddVolume("33333333-3333-4333-8333-333333333333", "dup")
	fake.SetStatus("11111111-1111-4111-8111-111111111111", "in-use")
	base := []string{"--host-root", root, "--config", "/dev/null", "--os-auth-type", "noauth", "--cinder-endpoint", fake.Endpoint()}
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"local-attach", "nope"}, "brick: local-attach nope: cinder find volume nope: no volume with this ID or name\n", 1},
		{[]string{"local-attach", "dup"}, "brick: local-attach dup: cinder find volume dup: 2 volumes have this name, use an ID: 22222222-2222-4222-8222-222222222222, 33333333-3333-4333-8333-333333333333\n", 1},
		{[]string{"local-attach", "data"}, "brick: local-attach data: cinder attachment create volume 11111111-1111-4111-8111-111111111111: Invalid volume: Volume 11111111-1111-4111-8111-111111111111 status must be available or downloading (HTTP 400)\n", 1},
		{[]string{"local-attach", "data", "--os-volume-api-version", "3.0"}, "brick: local-attach data: cinder reserve volume 11111111-1111-4111-8111-111111111111: Invalid volume: Volume status must be available to reserve, but the status is in-use (HTTP 400)\n", 1},
		{[]string{"local-attach", "data", "--os-volume-api-version", "3.99"}, "brick: local-attach data: cinder microversion: this Cinder supports 3.0 to 3.70, not 3.99\n", 1},
		{[]string{"local-detach", "dup"}, "brick: local-detach dup: cinder find volume dup: 2 volumes have this name", 1},
		{[]string{"local-detach", "data"}, "brick: note: local-detach data: not attached to this host: volume 11111111-1111-4111-8111-111111111111 has no attachment for host fixture-node (status in-use) and brick has no record of it (nothing to do)\n", 0},
	} {
		code, out, errs := runVolumeCmd(t, append(base, tc.args...)...)
		require.Equal(t, tc.code, code, "%v: %s", tc.args, errs)
		require.Empty(t, out)
		require.True(t, strings.HasPrefix(errs, tc.want), "%v:\n got %q\nwant %q", tc.args, errs, tc.want)
		require.Equal(t, 1, strings.Count(errs, "\n"), "one line")
	}

	code, _, errs := runVolumeCmd(t, "--host-root", root, "--config", "/dev/null", "--os-auth-type", "noauth", "--cinder-endpoint", "http://127.0.0.1:1/v3", "local-attach", "data")
	require.Equal(t, 1, code)
	require.Equal(t, "brick: local-attach data: cinder version discovery: cannot reach http://127.0.0.1:1/: connection refused; check --cinder-endpoint, or the catalog's block-storage endpoint for --os-region-name and --os-interface, and that Cinder runs there\n", errs)

	code, _, errs = runVolumeCmd(t, "--host-root", root, "--config", "/dev/null", "--os-auth-type", "noauth", "local-attach", "data")
	require.Equal(t, 2, code)
	require.Contains(t, errs, "noauth Cinder needs --cinder-endpoint")
}

// TestListOffline lists records without Cinder.
func TestListOffline(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	root := fixtureHost(t)
	code, out, errs := runVolumeCmd(t, "--host-root", root, "--config", "/dev/null", "list", "--offline", "-f", "json")
	require.Equal(t, 0, code, errs)
	var rows []any
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	require.Empty(t, rows)
}

// TestCinderclientEndpointSpellings: --os-endpoint, CINDER_ENDPOINT and
// OS_BLOCK_STORAGE_ENDPOINT_OVERRIDE name Cinder as --cinder-endpoint does.
func TestCinderclientEndpointSpellings(t *testing.T) {
	root, fake := cinderHost(t)
	fake.AddVolume("11111111-1111-4111-8111-111111111111", "data")
	base := []string{"--host-root", root, "--config", "/dev/null", "--os-auth-type", "noauth", "local-detach", "data"}
	const want = "local-detach data: not attached to this host" // Cinder was asked
	_, _, errs := runVolumeCmd(t, append(base, "--os-endpoint", fake.Endpoint())...)
	require.Contains(t, errs, want)
	for _, env := range []string{"CINDER_ENDPOINT", "OS_BLOCK_STORAGE_ENDPOINT_OVERRIDE"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, fake.Endpoint())
			_, _, errs := runVolumeCmd(t, base...)
			require.Contains(t, errs, want)
		})
	}
}
