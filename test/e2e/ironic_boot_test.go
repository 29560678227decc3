//go:build e2e

package e2e

// boot-from-volume end to end: in the qemu guest, brick writes a tiny
// bootable disk image onto a new Cinder volume (--image) and sets the
// Ironic node up; then a second, diskless qemu plays the node: its iPXE
// ROM runs the iPXE configuration Ironic's own code renders from what brick
// registered, sanboots the volume over iSCSI from the test Cinder's tgtd,
// and the image's init prints a marker on the serial console.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/cinderapi"
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
# 1. a new volume from the image: create, attach here, write, detach, set up.
$B ironic boot-from-volume "$NODE" --image /brick/boot.img --size 1 --volume-name "$VOLNAME" \
	--initiator "$IQN" "${COMMON[@]}" -f json >/brick/bfv.json 2>/brick/bfv.err
echo "RC bfv $?"
echo "SESSIONS after-bfv $(iscsiadm -m session 2>/dev/null | grep -c . || true)"
echo "RECORDS after-bfv $(ls /var/lib/brick/volumes/ 2>/dev/null | grep -c . || true)"
# 2. again, on the volume it made: nothing to change.
$B ironic boot-from-volume "$NODE" --volume "$VOLNAME" -f json >/brick/bfv2.json 2>/brick/bfv2.err
echo "RC bfv2 $?"
# 3. another image for the same node: refused before any volume is made.
$B ironic boot-from-volume "$NODE" --image /brick/boot.img --size 1 --volume-name "$VOLNAME-again" \
	"${COMMON[@]}" >/brick/bfv3.out 2>&1
echo "RC bfv3 $?"
echo DONE
`

// renderIronicIPXE renders the iPXE configuration Ironic 21.4 writes for
// a node booting from an iSCSI volume, with Ironic's own code:
// get_volume_pxe_options (its database read answered with the target and
// connectors from the API), the ipxe_config.template and
// switch_pxe_config (which sends the script to :boot_iscsi), as
// pxe_base's prepare_instance does at deploy.
const renderIronicIPXE = `
import json, os, sys, tempfile, types
from ironic.common import pxe_utils, utils
from ironic.drivers.modules import deploy_utils

d = json.load(sys.stdin)
class Target(dict):
    __getattr__ = dict.get
t = Target(d['target'])
pxe_utils.objects = types.SimpleNamespace(VolumeTarget=types.SimpleNamespace(get_by_uuid=lambda ctx, uuid: t))
node = types.SimpleNamespace(uuid=d['node_uuid'], driver_internal_info={'boot_from_volume': t['uuid']})
task = types.SimpleNamespace(node=node, context=None, volume_targets=[t],
    volume_connectors=[types.SimpleNamespace(type=c['type'], connector_id=c['connector_id']) for c in d['connectors']])
opts = pxe_utils.get_volume_pxe_options(task)
opts['ipxe_timeout'] = 0
tmpl = os.path.join(os.path.dirname(deploy_utils.__file__), 'ipxe_config.template')
text = utils.render_template(tmpl, {'pxe_options': opts, 'ROOT': '{{ ROOT }}', 'DISK_IDENTIFIER': '{{ DISK_IDENTIFIER }}'})
with tempfile.NamedTemporaryFile('w', suffix='.ipxe', delete=False) as f:
    f.write(text)
deploy_utils.switch_pxe_config(f.name, None, 'bios', False, iscsi_boot=True, ipxe_enabled=True)
sys.stdout.write(open(f.name).read())
os.unlink(f.name)
`

func TestIronicBootFromVolumeImage(t *testing.T) {
	lane(t, laneServices)
	c := needCinder(t, guestCinderOptions)
	bed := realIronic(t)
	brick := buildBrick(t)
	ctx := testContext(t)
	sc, _ := bed.client(t)
	sc.Microversion = ironicattach.BootMicroversion // storage_interface shows from 1.33
	node := newNode(t, ctx, sc, "bfv-boot", ironicapi.PowerOff)
	iqn := "iqn.2026-12.org.example.brick:" + node.Name
	volName := fmt.Sprintf("brick-e2e-bfv-%d", time.Now().UnixNano())
	port := bed.endpoint[strings.LastIndex(bed.endpoint, ":")+1:]

	share := t.TempDir()
	marker := fmt.Sprintf("BRICK-BFV-MARKER-%d", time.Now().UnixNano())
	disk, err := guest.BuildBootDisk(ctx, share, marker)
	require.NoError(t, err)

	res, err := guest.Run(ctx, guest.Options{
		Script:   bootFromImageScript,
		Files:    map[string]string{brick: "brick"},
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
		_ = c.DeleteVolume(cctx, volID)
	})
	t.Logf("image %s: %v bytes written in %v s (%v MiB/s) in the guest", disk.Path, made["image_bytes"], made["image_write_seconds"], made["image_write_mib_per_s"])
	require.Equal(t, "0", lines["SESSIONS after-bfv"], "nothing left attached in the guest")
	require.Equal(t, "0", lines["RECORDS after-bfv"])
	require.Equal(t, "0", lines["RC bfv2"], files["bfv2.err"])
	var again map[string]any
	require.NoError(t, json.Unmarshal([]byte(files["bfv2.json"]), &again))
	require.Empty(t, again["changes"], "a second run changes nothing")
	require.Equal(t, "1", lines["RC bfv3"], files["bfv3.out"])
	require.Contains(t, files["bfv3.out"], "undo that first")

	v, err := c.GetVolume(ctx, volID)
	require.NoError(t, err)
	require.Equal(t, "available", v.Status)
	require.Equal(t, volName, v.Name)
	var list struct {
		Volumes []struct{ ID string } `json:"volumes"`
	}
	require.NoError(t, c.Request(ctx, "GET", "/volumes?name="+volName+"-again", "", nil, &list))
	require.Empty(t, list.Volumes, "the refused run made no volume")

	n, err := ironicapi.GetNode(ctx, sc, node.UUID).Extract()
	require.NoError(t, err)
	require.Equal(t, "cinder", n.StorageInterface)
	require.Equal(t, "ipxe", n.BootInterface)
	require.Contains(t, fmt.Sprint(n.Properties["capabilities"]), "iscsi_boot:True")
	targets, err := ironicapi.AllTargets(ctx, ironicapi.ListNodeTargets(sc, node.UUID, ironicapi.TargetListOpts{Detail: true}), 0)
	require.NoError(t, err)
	require.Len(t, targets, 1)
	require.Equal(t, 0, targets[0].BootIndex)
	require.Equal(t, volID, targets[0].VolumeID)

	cfg, undeploy := deployLikeIronic(t, c, sc, node.UUID, targets[0].UUID, volID)
	boot, err := guest.SANBoot(ctx, guest.SANBootOptions{Script: cfg, Dir: t.TempDir(), Timeout: 100 * time.Second})
	if boot != nil {
		t.Logf("node console (%v):\n%s", boot.Duration.Round(time.Millisecond), boot.Plain())
	}
	require.NoError(t, err)
	require.Contains(t, boot.Plain(), marker, "the node booted the image from the volume")
	t.Logf("san boot: marker seen, qemu start to power off %v", boot.Duration.Round(time.Millisecond))

	// Undeploy as Ironic would (end the export), then brick's --undo.
	require.NoError(t, undeploy())
	env := []string{"OS_AUTH_TYPE=noauth", "BRICK_CONFIG=/dev/null", "BRICK_CINDER_ENDPOINT=" + c.Endpoint,
		"OS_PROJECT_ID=" + c.ProjectID, "BRICK_IRONIC_ENDPOINT=" + bed.endpoint}
	r := runBrickBin(t, ctx, env, "ironic", "boot-from-volume", node.Name, "--undo", "-f", "json")
	require.Equal(t, 0, r.code, r.stderr)
	targets, err = ironicapi.AllTargets(ctx, ironicapi.ListNodeTargets(sc, node.UUID, nil), 0)
	require.NoError(t, err)
	require.Empty(t, targets)
	conns, err := ironicapi.AllConnectors(ctx, ironicapi.ListNodeConnectors(sc, node.UUID, nil), 0)
	require.NoError(t, err)
	require.Empty(t, conns, "the connector brick registered is gone")
	n, err = ironicapi.GetNode(ctx, sc, node.UUID).Extract()
	require.NoError(t, err)
	require.NotContains(t, n.Extra, ironicattach.RecordKey)
	require.NotEqual(t, "cinder", n.StorageInterface)
	v, err = c.WaitVolume(ctx, volID, "available")
	require.NoError(t, err)
	require.Empty(t, v.Attachments)
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

// deployLikeIronic does what Ironic's cinder storage interface and iPXE
// boot interface do when they deploy a boot-from-volume node (the test
// bed's fake deploy does neither): export the volume to the node's
// connector in Cinder (reserve, initialize the connection, attach, with
// brick's Cinder flow), store the connection data in the target's
// properties, and render the node's iPXE configuration. It returns the
// configuration and the undeploy's release of the export.
func deployLikeIronic(t *testing.T, c *testbed.Cinder, sc *gophercloud.ServiceClient, nodeUUID, targetUUID, volID string) (string, func() error) {
	ctx := testContext(t)
	conns, err := ironicapi.AllConnectors(ctx, ironicapi.ListNodeConnectors(sc, nodeUUID, ironicapi.ConnectorListOpts{Detail: true}), 0)
	require.NoError(t, err)
	cc, err := ironicattach.CinderConnector(nodeUUID, conns, false)
	require.NoError(t, err)
	flow := cinderClient(t, c, "").Flow()
	attID, err := flow.Reserve(ctx, volID, "rw")
	require.NoError(t, err)
	release := func() error {
		return flow.Release(ctx, volID, cinderapi.ReleaseOpts{AttachmentID: attID, Connector: cc, HostName: nodeUUID})
	}
	info, err := flow.Export(ctx, volID, attID, cc)
	require.NoError(t, err)
	done, err := flow.Complete(ctx, volID, attID, cinderapi.CompleteOpts{HostName: nodeUUID, Mode: "rw"})
	require.NoError(t, err)
	if done != "" {
		attID = done
	}
	props := map[string]any{}
	for _, k := range []string{"target_iqn", "target_portal", "target_lun", "auth_method", "auth_username", "auth_password"} {
		if v, ok := info.Data[k]; ok {
			props[k] = v
		}
	}
	_, err = ironicapi.UpdateTarget(ctx, sc, targetUUID, ironicapi.TargetUpdateOpts{{Op: "add", Path: "/properties", Value: props}}).Extract()
	require.NoError(t, err)

	tg, err := ironicapi.GetTarget(ctx, sc, targetUUID, nil).Extract()
	require.NoError(t, err)
	// The API masks auth_password; Ironic's conductor reads it unmasked
	// from its database.
	if pw, ok := props["auth_password"]; ok {
		tg.Properties["auth_password"] = pw
	}
	var cs []map[string]string
	for _, c := range conns {
		cs = append(cs, map[string]string{"type": c.Type, "connector_id": c.ConnectorID})
	}
	in, err := json.Marshal(map[string]any{"node_uuid": nodeUUID, "connectors": cs,
		"target": map[string]any{"uuid": tg.UUID, "volume_type": tg.VolumeType, "boot_index": tg.BootIndex, "properties": tg.Properties}})
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", "-c", renderIronicIPXE)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cfg, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	text := string(cfg)
	// The guest Cinder's portal is the slirp host address already; a
	// 127.0.0.1 portal would be unreachable from the node's slirp.
	text = strings.ReplaceAll(text, "iscsi:127.0.0.1:", "iscsi:10.0.2.2:")
	shown := text
	if pw, _ := props["auth_password"].(string); pw != "" {
		shown = strings.ReplaceAll(shown, pw, "******")
	}
	t.Logf("Ironic's iPXE configuration for the node (password masked here):\n%s", shown)
	require.Contains(t, text, "goto boot_iscsi")
	require.Contains(t, text, "sanhook --drive 0x80 iscsi:10.0.2.2::3260:")
	require.Contains(t, text, "set initiator-iqn "+conns[0].ConnectorID)
	return text, release
}
