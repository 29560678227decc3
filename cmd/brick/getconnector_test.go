package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/cinderapi/cindertest"
	"github.com/brick-storage/brick/host/hosttest"
)

// fixtureHost builds a host tree with everything get-connector reads.
func fixtureHost(t *testing.T) string {
	root := t.TempDir()
	hosttest.WriteFile(t, root, "/etc/iscsi/initiatorname.iscsi", "## managed\nInitiatorName=iqn.1993-08.org.debian:01:fixture\n")
	hosttest.WriteFile(t, root, "/sys/class/fc_host/host1/port_state", "Online\n")
	hosttest.WriteFile(t, root, "/sys/class/fc_host/host1/port_name", "0x10000090FA1B2C3D\n")
	hosttest.WriteFile(t, root, "/sys/class/fc_host/host1/node_name", "0x20000090fa1b2c3d\n")
	hosttest.WriteFile(t, root, "/sys/class/fc_host/host2/port_state", "Linkdown\n")
	hosttest.WriteFile(t, root, "/sys/class/fc_host/host2/port_name", "0x10000090fa1b2c3e\n")
	hosttest.WriteFile(t, root, "/sys/class/fc_host/host2/node_name", "0x20000090fa1b2c3e\n")
	hosttest.WriteFile(t, root, "/sys/class/dmi/id/product_uuid", "4C4C4544-0051-3510-8052-B4C04F4B4E32\n")
	hosttest.WriteFile(t, root, "/etc/nvme/hostnqn", "nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0051-3510-8052-b4c04f4b4e32\n")
	hosttest.WriteFile(t, root, "/proc/sys/kernel/hostname", "fixture-node\n")
	hosttest.WriteFile(t, root, "/proc/1/comm", "systemd\n")
	hosttest.WriteFile(t, root, "/proc/640/comm", "multipathd\n")
	hosttest.WriteFile(t, root, "/proc/1/net/route", "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n"+
		"eth0\t00000000\t0202000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"+
		"eth0\t0002000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n")
	hosttest.WriteFile(t, root, "/proc/1/net/fib_trie", "Local:\n  |-- 10.0.2.15\n     /32 host LOCAL\n")
	hosttest.WriteFile(t, root, "/proc/1/net/if_inet6", "20010db8000000000000000000000009 03 40 00 00 eth1\n")
	return root
}

// cinderHost is a fixture host and a fake Cinder, with no brick.yaml.
func cinderHost(t *testing.T) (string, *cindertest.Server) {
	t.Setenv("BRICK_CONFIG", "")
	return fixtureHost(t), cindertest.New(t)
}

func wantFixtureJSON(ip string) string {
	machine := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	return `{
  "platform": "` + machine + `",
  "os_type": "linux",
  "ip": "` + ip + `",
  "host": "fixture-node",
  "multipath": true,
  "enforce_multipath": false,
  "initiator": "iqn.1993-08.org.debian:01:fixture",
  "wwpns": [
    "10000090fa1b2c3d"
  ],
  "wwnns": [
    "20000090fa1b2c3d"
  ],
  "system uuid": "4c4c4544-0051-3510-8052-b4c04f4b4e32",
  "nqn": "nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0051-3510-8052-b4c04f4b4e32",
  "nvme_native_multipath": false,
  "do_local_attach": true
}
`
}

func runBrick(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		t.Setenv(k, v)
	}
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestGetConnectorInProcess(t *testing.T) {
	root := fixtureHost(t)
	out, errOut, code := runBrick(t, nil, "get-connector", "--host-root", root, "--multipath", "-f", "json", "--config", filepath.Join(root, "none.yaml"))
	require.Equal(t, 2, code, errOut) // an explicit config file must exist
	require.Contains(t, errOut, "read config")

	out, errOut, code = runBrick(t, []string{"BRICK_HOST_ROOT=" + root, "BRICK_CONFIG="}, "get-connector", "--multipath", "-f", "json")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, wantFixtureJSON("10.0.2.15"), out)
	require.Empty(t, errOut)

	out, _, code = runBrick(t, nil, "get-connector", "--host-root", root, "--nic", "eth1", "-c", "ip", "-f", "value")
	require.Equal(t, 0, code)
	require.Equal(t, "2001:db8::9\n", out)

	_, errOut, code = runBrick(t, nil, "get-connector", "--host-root", root, "--ip", "1.2.3.4", "--nic", "eth0")
	require.Equal(t, 2, code, errOut)

	_, errOut, code = runBrick(t, nil, "get-connector", "--host-root", root, "--bogus")
	require.Equal(t, 2, code, errOut)
	_, errOut, code = runBrick(t, nil, "get-connector", "extra-arg")
	require.Equal(t, 2, code, errOut)
	_, errOut, code = runBrick(t, nil, "no-such-command")
	require.Equal(t, 2, code, errOut)
}

func TestGetConnectorEnforceMultipathAndConfig(t *testing.T) {
	root := fixtureHost(t)
	require.NoError(t, os.Remove(filepath.Join(root, "proc/640/comm")))
	_, errOut, code := runBrick(t, nil, "get-connector", "--host-root", root, "--enforce_multipath")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "multipathd is not running")

	_, errOut, code = runBrick(t, nil, "get-connector", "--host-root", root, "--multipath")
	require.Equal(t, 0, code)
	require.Contains(t, errOut, "warning")

	// Config file < env < flag.
	cfg := filepath.Join(t.TempDir(), "brick.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("host_root: "+root+"\nip: 192.0.2.1\nformat: value\ncolumn: [ip]\n"), 0o600))
	out, errOut, code := runBrick(t, []string{"BRICK_CONFIG=" + cfg}, "get-connector")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "192.0.2.1\n", out)
	out, _, _ = runBrick(t, []string{"BRICK_CONFIG=" + cfg, "BRICK_IP=192.0.2.2"}, "get-connector")
	require.Equal(t, "192.0.2.2\n", out)
	out, _, _ = runBrick(t, []string{"BRICK_CONFIG=" + cfg, "BRICK_IP=192.0.2.2"}, "get-connector", "--ip", "192.0.2.3")
	require.Equal(t, "192.0.2.3\n", out)
}

// TestGetConnectorBinary runs brick in a process of its own, as a user
// would: exit code, stdout and stderr of the real main.
func TestGetConnectorBinary(t *testing.T) {
	root := fixtureHost(t)
	cmd := brickCommand(t, append(os.Environ(), "BRICK_CONFIG="), "get-connector", "--host-root", root, "--multipath", "-f", "json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	require.Equal(t, wantFixtureJSON("10.0.2.15"), string(out))
	require.Empty(t, stderr.String())

	help, err := brickCommand(t, os.Environ(), "get-connector", "--help").Output()
	require.NoError(t, err)
	require.Contains(t, string(help), "no root privileges")
}

func TestVersionAndCompletion(t *testing.T) {
	out, _, code := runBrick(t, nil, "version", "-f", "json", "-c", "version")
	require.Equal(t, 0, code)
	require.JSONEq(t, `{"version":"dev"}`, out)
	for _, sh := range []string{"bash", "zsh", "fish"} {
		out, _, code = runBrick(t, nil, "completion", sh)
		require.Equal(t, 0, code, sh)
		require.Contains(t, out, "brick")
	}
}
