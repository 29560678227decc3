//go:build e2e

package e2e

// The brick ironic commands, run as the built binary against the real
// Ironic (and the real Cinder for attach-volume / detach-volume).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/ironicapi"
)

var brickBinary struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// buildBrick builds cmd/brick once per test process, with the e2e tag:
// that binary has the test hooks (BRICK_TEST_CRASH_AT) the shipped one
// lacks.
func buildBrick(t *testing.T) string {
	t.Helper()
	brickBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "brick-e2e-bin-")
		if err != nil {
			brickBinary.err = err
			return
		}
		brickBinary.path = filepath.Join(dir, "brick")
		cmd := exec.Command("go", "build", "-tags", "e2e", "-o", brickBinary.path, "../../cmd/brick")
		brickBinary.out, brickBinary.err = cmd.CombinedOutput()
	})
	if brickBinary.err != nil {
		t.Fatalf("build brick: %v\n%s", brickBinary.err, brickBinary.out)
	}
	return brickBinary.path
}

type brickRun struct {
	stdout, stderr string
	code           int
}

// runBrickBin runs the brick binary with env (on top of a clean
// environment: PATH and HOME only) and returns its outputs and exit code.
func runBrickBin(t *testing.T, ctx context.Context, env []string, args ...string) brickRun {
	t.Helper()
	cmd := exec.CommandContext(ctx, buildBrick(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "BRICK_CONFIG="}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run brick %v: %v", args, err)
	}
	t.Logf("brick %s -> exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	return brickRun{out.String(), errb.String(), code}
}

// registerHost is a host tree with an iSCSI initiator, one Online FC port
// and eth1 holding an IPv6 address with a MAC.
func registerHost(t *testing.T, iqn, wwpn, ip6hex, mac string) string {
	root := t.TempDir()
	write := func(p, s string) {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(s), 0o644))
	}
	write("etc/iscsi/initiatorname.iscsi", "InitiatorName="+iqn+"\n")
	write("sys/class/fc_host/host3/port_state", "Online\n")
	write("sys/class/fc_host/host3/port_name", "0x"+wwpn+"\n")
	write("sys/class/fc_host/host3/node_name", "0x20"+wwpn[2:]+"\n")
	write("proc/1/net/if_inet6", ip6hex+" 03 40 00 00 eth1\n")
	write("sys/class/net/eth1/address", mac+"\n")
	write("proc/sys/kernel/hostname", "register-host\n")
	return root
}

func TestIronicCLIRegister(t *testing.T) {
	lane(t, laneServices)
	bed := realIronic(t)
	ctx := testContext(t)
	sc, _ := bed.client(t)
	node := newNode(t, ctx, sc, "reg", "")
	second := newNode(t, ctx, sc, "reg2", "")
	n := time.Now().UnixNano()
	iqn := iqnFor(node.Name, 0)
	wwpn := fmt.Sprintf("21%014x", n&0xffffffffffffff)
	mac := fmt.Sprintf("52:54:%02x:%02x:%02x:%02x", byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	root := registerHost(t, iqn, wwpn, fmt.Sprintf("20010db8000000000000%012x", n&0xffffffffffff), mac)
	env := []string{"OS_AUTH_TYPE=noauth", "BRICK_IRONIC_ENDPOINT=" + bed.endpoint, "BRICK_HOST_ROOT=" + root}

	// First run creates iqn, wwpn, wwnn, ip, mac; the second keeps them all.
	r := runBrickBin(t, ctx, env, "ironic", "register", "--node", node.Name, "--nic", "eth1", "-f", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var rows []map[string]string
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows))
	require.Len(t, rows, 5)
	types := map[string]string{}
	for _, row := range rows {
		require.Equal(t, "created", row["Action"])
		types[row["Type"]] = row["Connector ID"]
	}
	require.Equal(t, iqn, types["iqn"])
	require.Equal(t, wwpn, types["wwpn"])
	require.Equal(t, mac, types["mac"])
	require.Contains(t, types["ip"], "2001:db8::")

	r = runBrickBin(t, ctx, env, "ironic", "register", "--node", node.UUID, "--nic", "eth1", "-f", "value", "-c", "Action")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, strings.Repeat("kept\n", 5), r.stdout)
	list, err := ironicapi.AllConnectors(ctx, ironicapi.ListNodeConnectors(sc, node.UUID, nil), 0)
	require.NoError(t, err)
	require.Len(t, list, 5, "no duplicates after two runs")

	// The same host registered to a second node: refused, naming the owner.
	r = runBrickBin(t, ctx, env, "ironic", "register", "--node", second.Name, "--nic", "eth1")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "is registered to node "+node.Name+" ("+node.UUID+")")
	require.Contains(t, r.stderr, "a connector belongs to one node only")
	list, err = ironicapi.AllConnectors(ctx, ironicapi.ListNodeConnectors(sc, second.UUID, nil), 0)
	require.NoError(t, err)
	require.Empty(t, list, "nothing created on the second node")

	// --prune with a connector the host no longer has: needs power off.
	require.NoError(t, ironicapi.CreateConnector(ctx, sc, ironicapi.ConnectorCreateOpts{NodeUUID: node.UUID, Type: "iqn", ConnectorID: iqnFor(node.Name, 99)}).Err)
	r = runBrickBin(t, ctx, env, "ironic", "register", "--node", node.Name, "--nic", "eth1", "--prune")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "power it off")
	setPower(t, ctx, sc, node.UUID, ironicapi.PowerOff)
	r = runBrickBin(t, ctx, env, "ironic", "register", "--node", node.Name, "--nic", "eth1", "--prune", "--set-capabilities", "-f", "value", "-c", "Connector ID", "-c", "Action")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, iqnFor(node.Name, 99)+" deleted")
	got, err := ironicapi.GetNode(ctx, sc, node.UUID).Extract()
	require.NoError(t, err)
	require.Equal(t, "iscsi_boot:True,fibre_channel_boot:True", got.Properties["capabilities"])
}

func TestIronicCLIConnectorTarget(t *testing.T) {
	lane(t, laneServices)
	bed := realIronic(t)
	ctx := testContext(t)
	sc, _ := bed.client(t)
	node := newNode(t, ctx, sc, "cli", ironicapi.PowerOff)
	env := []string{"OS_AUTH_TYPE=noauth", "BRICK_IRONIC_ENDPOINT=" + bed.endpoint}

	r := runBrickBin(t, ctx, env, "ironic", "connector", "create", "--node", node.Name, "--type", "iqn", "--connector-id", iqnFor(node.Name, 1), "--extra", "rack=r1", "-f", "value", "-c", "uuid")
	require.Equal(t, 0, r.code, r.stderr)
	cu := strings.TrimSpace(r.stdout)
	r = runBrickBin(t, ctx, env, "ironic", "connector", "list", "--node", node.Name, "--long", "-f", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"Connector ID": "`+iqnFor(node.Name, 1)+`"`)
	require.Contains(t, r.stdout, `"Extra": {`)
	r = runBrickBin(t, ctx, env, "ironic", "connector", "set", cu, "--connector-id", "not an iqn")
	require.Equal(t, 2, r.code, "checked against the current type before sending")
	r = runBrickBin(t, ctx, env, "ironic", "connector", "unset", cu, "--extra", "rack", "-f", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"extra": {}`)

	vol := newVolumeID(int(time.Now().UnixNano() % 1e9))
	r = runBrickBin(t, ctx, env, "ironic", "target", "create", "--node", node.Name, "--type", "iscsi", "--boot-index", "0", "--volume-id", vol,
		"--property", "target_lun=1", "--property", "auth_password=cli-s3cret", "-f", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout+r.stderr, "cli-s3cret")
	require.Contains(t, r.stdout, `"auth_password": "******"`)
	require.Contains(t, r.stdout, `"target_lun": 1`)
	var tg map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &tg))
	tu := tg["uuid"].(string)
	r = runBrickBin(t, ctx, env, "ironic", "target", "list", "--node", node.UUID, "-f", "value")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, tu+" "+node.UUID+" iscsi 0 "+vol+"\n", r.stdout)
	r = runBrickBin(t, ctx, env, "ironic", "target", "set", tu, "--boot-index", "2", "--property", "target_portal=127.0.0.1:3260", "-c", "boot_index", "-f", "value")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "2\n", r.stdout)
	r = runBrickBin(t, ctx, env, "ironic", "target", "unset", tu, "--property", "auth_password", "-f", "json", "-c", "properties")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, "auth_password")
	r = runBrickBin(t, ctx, env, "ironic", "target", "create", "--node", node.Name, "--type", "iscsi", "--boot-index", "2", "--volume-id", newVolumeID(3))
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "boot index '2'")
	r = runBrickBin(t, ctx, env, "ironic", "target", "delete", tu)
	require.Equal(t, 0, r.code, r.stderr)
	r = runBrickBin(t, ctx, env, "ironic", "connector", "delete", cu, "00000000-0000-4000-8000-000000000000")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "Deleted volume connector "+cu)
	require.Contains(t, r.stderr, "1 of 2 volume connectors not deleted")
}
