//go:build e2e

package e2e

// boot-from-volume end to end: in the qemu guest, brick writes a tiny
// bootable disk image onto a new Cinder volume (--image), sets the Ironic
// node up and deploys it (--deploy). Ironic's conductor does the deploy for
// real: its cinder storage interface attaches the volume in Cinder to the
// node's iqn, its ipxe boot interface writes the node's iPXE script under
// http_root. Then a second, diskless qemu plays the node: its iPXE ROM runs
// Ironic's boot.ipxe, which chains Ironic's per-MAC script, sanboots the
// volume over iSCSI from the test Cinder's tgtd, and the image's init
// prints a marker on the serial console.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed"
	"github.com/brick-storage/brick/internal/testbed/guest"
	"github.com/brick-storage/brick/ironicapi"
	"github.com/brick-storage/brick/ironicattach"
)

// ironicGuestPrelude starts the guest scripts that run brick against the
// test bed's Cinder and Ironic (at the slirp gateway) and iscsid.
const ironicGuestPrelude = `
set -uo pipefail
cp /brick/brick /tmp/brick # an exec from the 9p share pages it in again
B=/tmp/brick
export OS_AUTH_TYPE=noauth BRICK_CONFIG=/dev/null
export BRICK_CINDER_ENDPOINT=http://10.0.2.2:8776/v3 BRICK_IRONIC_ENDPOINT=http://10.0.2.2:$IRONIC_PORT
COMMON=(--nic eth0 --iscsi-login-timeout 8s --device-timeout 10s)
eval "$("$BRICK_FIXTURES/iscsi.sh")"
`

const bootFromImageScript = ironicGuestPrelude + `
# 1. a new volume from the image: create, attach here, write, detach, set
# the node up, and have Ironic deploy it.
$B ironic boot-from-volume "$NODE" --image /brick/boot.img --size 1 --volume-name "$VOLNAME" \
	--initiator "$IQN" --deploy --wait 2m "${COMMON[@]}" -f json >/brick/bfv.json 2>/brick/bfv.err
echo "RC bfv $?"
echo "SESSIONS after-bfv $(iscsiadm -m session 2>/dev/null | grep -c . || true)"
echo "RECORDS after-bfv $(ls /var/lib/brick/volumes/ 2>/dev/null | grep -c . || true)"
# 2. again, on the volume it made and Ironic attached: nothing to change.
$B ironic boot-from-volume "$NODE" --volume "$VOLNAME" --deploy -f json >/brick/bfv2.json 2>/brick/bfv2.err
echo "RC bfv2 $?"
# 3. another image for the same node: refused before any volume is made.
$B ironic boot-from-volume "$NODE" --image /brick/boot.img --size 1 --volume-name "$VOLNAME-again" \
	"${COMMON[@]}" >/brick/bfv3.out 2>&1
echo "RC bfv3 $?"
echo DONE
`

func TestIronicBootFromVolumeImage(t *testing.T) {
	lane(t, laneServices)
	sharedGuest.prestart() // boots while the host prepares, unless up
	c := needCinder(t, guestCinderOptions)
	ir := needIronic(t, testbed.IronicOptions{MaxLimit: ironicMaxLimit})
	bed := ironicBed{endpoint: ir.Endpoint, maxLimit: ir.MaxLimit}
	brick := buildBrick(t)
	ctx := testContext(t)
	sc, _ := bed.client(t)
	sc.Microversion = ironicattach.BootMicroversion // storage_interface shows from 1.33
	node := deployableNode(t, ctx, sc, "bfv-boot")
	iqn := "iqn.2026-12.org.example.brick:" + node.Name
	volName := fmt.Sprintf("brick-e2e-bfv-%d", time.Now().UnixNano())
	port := bed.endpoint[strings.LastIndex(bed.endpoint, ":")+1:]

	share := guestShare(t)
	marker := fmt.Sprintf("BRICK-BFV-MARKER-%d", time.Now().UnixNano())
	disk, err := guest.BuildBootDisk(ctx, t.TempDir(), marker)
	require.NoError(t, err)

	// The suite's shared guest (no boot of its own); the script leaves no
	// session or record, which the session's check between tests enforces.
	res, err := runSmokeGuest(t, ctx, guest.Options{
		Script:   bootFromImageScript,
		Files:    map[string]string{brick: "brick", disk.Path: "boot.img"},
		NICs:     1,
		Env:      map[string]string{"NODE": node.Name, "IQN": iqn, "VOLNAME": volName, "IRONIC_PORT": port},
		Timeout:  6 * time.Minute,
		ShareDir: share,
	})
	require.NoError(t, err)
	out := string(res.Output)
	t.Logf("guest: boot %s, script %s, wall %s, exit %d\n%s", res.Boot, res.ScriptTime, res.Duration, res.ExitCode, out)
	files := map[string]string{}
	for _, f := range []string{"bfv.json", "bfv.err", "bfv2.json", "bfv2.err", "bfv3.out"} {
		b, _ := os.ReadFile(filepath.Join(share, f))
		files[f] = string(b)
		t.Logf("%s:\n%s", f, b)
	}
	lines := scriptLines(res.Output)
	require.Equal(t, 0, res.ExitCode)
	require.Contains(t, out, "\nDONE")
	require.Equal(t, "0", lines["RC bfv"], files["bfv.err"])
	var made map[string]any
	require.NoError(t, json.Unmarshal([]byte(files["bfv.json"]), &made))
	volID, _ := made["volume_id"].(string)
	require.NotEmpty(t, volID)
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		undeployNode(cctx, sc, node.UUID) // Ironic's undeploy detaches the volume
		_ = c.DeleteVolume(cctx, volID)
	})
	t.Logf("image %s: %v bytes written in %v s (%v MiB/s) in the guest", disk.Path, made["image_bytes"], made["image_write_seconds"], made["image_write_mib_per_s"])
	require.Equal(t, "active", made["provision_state"], files["bfv.json"])
	require.Contains(t, fmt.Sprint(made["changes"]), "deployed the node")
	require.Equal(t, "0", lines["SESSIONS after-bfv"], "nothing left attached in the guest")
	require.Equal(t, "0", lines["RECORDS after-bfv"])
	require.Equal(t, "0", lines["RC bfv2"], files["bfv2.err"])
	var again map[string]any
	require.NoError(t, json.Unmarshal([]byte(files["bfv2.json"]), &again))
	require.Empty(t, again["changes"], "a second run changes nothing")
	require.Equal(t, "1", lines["RC bfv3"], files["bfv3.out"])
	require.Contains(t, files["bfv3.out"], "undo that first")

	var list struct {
		Volumes []struct{ ID string } `json:"volumes"`
	}
	require.NoError(t, c.Request(ctx, "GET", "/volumes?name="+volName+"-again", "", nil, &list))
	require.Empty(t, list.Volumes, "the refused run made no volume")

	cfg := checkIronicDeployed(t, ctx, c, sc, ir, node.UUID, volID, iqn)
	bootStart := time.Now()
	boot, err := guest.SANBoot(ctx, guest.SANBootOptions{Script: cfg.boot, Files: map[string]string{cfg.macPath: cfg.node}, Dir: t.TempDir(), Timeout: 100 * time.Second})
	if boot != nil {
		t.Logf("node console (%v):\n%s", boot.Duration.Round(time.Millisecond), boot.Plain())
	}
	require.NoError(t, err)
	require.Contains(t, boot.Plain(), marker, "the node booted the image from the volume")
	require.Contains(t, boot.Plain(), "Attempting to boot from MAC", "Ironic's boot.ipxe ran")
	t.Logf("san boot: marker seen, qemu start to power off %v (with the slot wait %v)", boot.Duration.Round(time.Millisecond), time.Since(bootStart).Round(time.Millisecond))

	// brick deployed, so --undo undeploys (Ironic detaches the volume in
	// Cinder, removes the node's iPXE script and deletes its volume
	// targets), then deletes the connector and restores the node.
	env := []string{"OS_AUTH_TYPE=noauth", "BRICK_CONFIG=/dev/null", "BRICK_CINDER_ENDPOINT=" + c.Endpoint,
		"OS_PROJECT_ID=" + c.ProjectID, "BRICK_IRONIC_ENDPOINT=" + bed.endpoint}
	r := runBrickBin(t, ctx, env, "ironic", "boot-from-volume", node.Name, "--undo", "-f", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "undeployed the node")
	targets, err := ironicapi.AllTargets(ctx, ironicapi.ListNodeTargets(sc, node.UUID, nil), 0)
	require.NoError(t, err)
	require.Empty(t, targets)
	conns, err := ironicapi.AllConnectors(ctx, ironicapi.ListNodeConnectors(sc, node.UUID, nil), 0)
	require.NoError(t, err)
	require.Empty(t, conns, "the connector brick registered is gone")
	n, err := ironicapi.GetNode(ctx, sc, node.UUID).Extract()
	require.NoError(t, err)
	require.Equal(t, "available", n.ProvisionState)
	require.NotContains(t, n.Extra, ironicattach.RecordKey)
	require.NotEqual(t, "cinder", n.StorageInterface)
	v, err := c.WaitVolume(ctx, volID, "available")
	require.NoError(t, err)
	require.Empty(t, v.Attachments)
	_, err = os.Stat(filepath.Join(ir.StateDir, cfg.macPath))
	require.True(t, os.IsNotExist(err), "Ironic removed the node's iPXE script: %v", err)
}

// deployableNode makes a fake-hardware node Ironic can deploy from a
// volume for real: the direct deploy interface (with no image_source it
// boots no agent), a port with the diskless machine's MAC (the ipxe boot
// interface wants one and names the per-MAC script after it), available.
func deployableNode(t *testing.T, ctx context.Context, sc *gophercloud.ServiceClient, prefix string) nodes.Node {
	t.Helper()
	node := newNode(t, ctx, sc, prefix, ironicapi.PowerOff)
	t.Cleanup(func() { // before newNode's delete: an active node cannot be deleted
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		undeployNode(cctx, sc, node.UUID)
	})
	_, err := ironicapi.UpdateNode(ctx, sc, node.UUID, nodes.UpdateOpts{
		nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/deploy_interface", Value: "direct"}}).Extract()
	require.NoError(t, err)
	_, err = sc.Post(ctx, sc.ServiceURL("ports"), map[string]any{"node_uuid": node.UUID, "address": guest.SANBootMAC}, nil,
		&gophercloud.RequestOpts{OkCodes: []int{201}})
	require.NoError(t, err, "a port with %s (a node left over from an earlier run holds it?)", guest.SANBootMAC)
	for _, step := range []struct {
		target nodes.TargetProvisionState
		want   string
	}{{nodes.TargetManage, "manageable"}, {nodes.TargetProvide, "available"}} {
		require.NoError(t, ironicapi.SetProvisionState(ctx, sc, node.UUID, step.target))
		require.Eventually(t, func() bool {
			n, err := ironicapi.GetNode(ctx, sc, node.UUID).Extract()
			return err == nil && n.ProvisionState == step.want && n.TargetProvisionState == ""
		}, time.Minute, 200*time.Millisecond, "node to %s", step.want)
	}
	return node
}

// undeployNode undeploys the node if it is deployed (or failed to) and
// waits a while for available; best effort, for cleanups.
func undeployNode(ctx context.Context, sc *gophercloud.ServiceClient, uuid string) {
	n, err := ironicapi.GetNode(ctx, sc, uuid).Extract()
	if err != nil || (n.ProvisionState != "active" && n.ProvisionState != "deploy failed") {
		return
	}
	if ironicapi.SetProvisionState(ctx, sc, uuid, nodes.TargetDeleted) != nil {
		return
	}
	for ctx.Err() == nil {
		if n, err := ironicapi.GetNode(ctx, sc, uuid).Extract(); err != nil || n.ProvisionState == "available" {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// ironicScripts are the iPXE scripts Ironic wrote under its http_root (the
// test bed Ironic's state dir) for the node.
type ironicScripts struct {
	boot    string // boot.ipxe: chains pxelinux.cfg/<MAC>
	macPath string // pxelinux.cfg/52-54-00-12-34-56, a link to <node>/config
	node    string // the node's own script
}

// checkIronicDeployed checks what Ironic's deploy did for real: the node
// active, the volume attached in Cinder to the node (Ironic's legacy
// attach: server_id is the node), the connection data in the target's
// properties, and the node's iPXE script; it returns the scripts.
func checkIronicDeployed(t *testing.T, ctx context.Context, c *testbed.Cinder, sc *gophercloud.ServiceClient, ir *testbed.Ironic, nodeUUID, volID, iqn string) ironicScripts {
	t.Helper()
	n, err := ironicapi.GetNode(ctx, sc, nodeUUID).Extract()
	require.NoError(t, err)
	require.Equal(t, "active", n.ProvisionState, n.LastError)
	require.Equal(t, "power on", n.PowerState)
	require.Equal(t, "cinder", n.StorageInterface)
	require.Equal(t, "ipxe", n.BootInterface)
	require.Equal(t, "direct", n.DeployInterface)
	require.Contains(t, fmt.Sprint(n.Properties["capabilities"]), "iscsi_boot:True")
	targets, err := ironicapi.AllTargets(ctx, ironicapi.ListNodeTargets(sc, nodeUUID, ironicapi.TargetListOpts{Detail: true}), 0)
	require.NoError(t, err)
	require.Len(t, targets, 1)
	require.Equal(t, 0, targets[0].BootIndex)
	require.Equal(t, volID, targets[0].VolumeID)
	require.Equal(t, testbed.GuestHostIP+":3260", targets[0].Properties["target_portal"], "Ironic stored Cinder's connection data")
	v, err := c.GetVolume(ctx, volID)
	require.NoError(t, err)
	require.Equal(t, "in-use", v.Status)
	require.Len(t, v.Attachments, 1)
	require.Equal(t, nodeUUID, v.Attachments[0].ServerID, "attached by Ironic to the node")
	t.Logf("node %s: %s, %s; volume %s %s, attachment %s (server %s, device %s)", nodeUUID, n.ProvisionState, n.PowerState,
		volID, v.Status, v.Attachments[0].AttachmentID, v.Attachments[0].ServerID, v.Attachments[0].Device)

	var s ironicScripts
	s.macPath = "pxelinux.cfg/" + strings.ReplaceAll(guest.SANBootMAC, ":", "-")
	for _, f := range []struct {
		dst  *string
		path string
	}{{&s.boot, "boot.ipxe"}, {&s.node, s.macPath}} {
		b, err := os.ReadFile(filepath.Join(ir.StateDir, f.path))
		require.NoError(t, err, "Ironic's %s", f.path)
		*f.dst = string(b)
	}
	shown := s.node
	if i := strings.Index(shown, ":boot_iscsi"); i >= 0 {
		shown = shown[i:]
	}
	if pw := lineValue(s.node, "set password "); pw != "" {
		shown = strings.ReplaceAll(shown, pw, "******")
	}
	t.Logf("Ironic's iPXE script for the node, from :boot_iscsi (password masked here):\n%s", shown)
	require.Contains(t, s.boot, "chain pxelinux.cfg/${mac:hexhyp}")
	require.Contains(t, s.node, "goto boot_iscsi")
	require.Contains(t, s.node, "sanhook --drive 0x80 iscsi:"+testbed.GuestHostIP+"::3260:1:iqn.")
	require.Contains(t, s.node, "set initiator-iqn "+iqn)
	return s
}

// lineValue returns the rest of the first line starting with prefix.
func lineValue(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// scriptLines maps "WORD KEY" to the rest of each script output line.
func scriptLines(b []byte) map[string]string {
	lines := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 3 {
			lines[f[0]+" "+f[1]] = strings.Join(f[2:], " ")
		}
	}
	return lines
}
