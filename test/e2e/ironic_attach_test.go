//go:build e2e

package e2e

// brick ironic attach-volume / detach-volume against the real Cinder and
// the real Ironic: the node's registered connectors (not this host's) go to
// Cinder, the export is recorded as the node's volume target, and
// detach-volume puts both services back where they started.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/ironicapi"
)

func TestIronicAttachVolume(t *testing.T) {
	lane(t, laneServices)
	cinder := needCinder(t, guestCinderOptions) // the guest tests' settings: no restart between them
	bed := realIronic(t)
	ctx := testContext(t)
	sc, _ := bed.client(t)
	node := newNode(t, ctx, sc, "bfv", ironicapi.PowerOff)
	iqn := "iqn.1993-08.org.debian:01:" + node.Name
	stamp := time.Now().UnixNano()
	for _, c := range []ironicapi.ConnectorCreateOpts{
		{NodeUUID: node.UUID, Type: "iqn", ConnectorID: iqn},
		{NodeUUID: node.UUID, Type: "ip", ConnectorID: fmt.Sprintf("2001:db8:2::%x:%x", (stamp>>16)&0xffff, stamp&0xffff)},
	} {
		require.NoError(t, ironicapi.CreateConnector(ctx, sc, c).Err)
	}
	volName := fmt.Sprintf("bfv-%d", time.Now().UnixNano())
	vol, err := cinder.CreateVolume(ctx, volName, 1)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cinder.DeleteVolume(ctx, vol.ID) })
	other, err := cinder.CreateVolume(ctx, volName+"-2", 1)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cinder.DeleteVolume(ctx, other.ID) })

	env := []string{
		"OS_AUTH_TYPE=noauth",
		"BRICK_CINDER_ENDPOINT=" + cinder.Endpoint, "OS_PROJECT_ID=" + cinder.ProjectID, "OS_USER_ID=" + cinder.UserID,
		"BRICK_IRONIC_ENDPOINT=" + bed.endpoint,
	}

	start := time.Now()
	r := runBrickBin(t, ctx, env, "ironic", "attach-volume", "--node", node.Name, volName, "--boot-index", "0", "-f", "json")
	require.Equal(t, 0, r.code, r.stderr)
	t.Logf("attach-volume took %v", time.Since(start).Round(time.Millisecond))
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	require.Equal(t, node.UUID, out["node_uuid"])
	require.Equal(t, vol.ID, out["volume_id"])
	props := out["properties"].(map[string]any)
	require.Equal(t, "******", props["auth_password"], "credentials print masked")

	// Ironic: the target, with the node's boot index and Cinder's info.
	targets, err := ironicapi.AllTargets(ctx, ironicapi.ListNodeTargets(sc, node.UUID, ironicapi.TargetListOpts{Detail: true}), 0)
	require.NoError(t, err)
	require.Len(t, targets, 1)
	tg := targets[0]
	require.Equal(t, out["target_uuid"], tg.UUID)
	require.Equal(t, 0, tg.BootIndex)
	require.Equal(t, vol.ID, tg.VolumeID)
	require.Equal(t, "iscsi", tg.VolumeType)
	require.Equal(t, cinder.TargetIQN(vol.ID), tg.Properties["target_iqn"])
	require.Equal(t, "******", tg.Properties["auth_password"])
	require.Equal(t, "CHAP", tg.Properties["auth_method"])

	// Cinder: in-use, attached to the node (host_name from the node's connector).
	v, err := cinder.GetVolume(ctx, vol.ID)
	require.NoError(t, err)
	require.Equal(t, "in-use", v.Status)
	require.Len(t, v.Attachments, 1)
	require.Equal(t, node.UUID, v.Attachments[0].HostName)
	require.Equal(t, out["attachment_id"], v.Attachments[0].AttachmentID)
	var att struct {
		Attachment struct {
			ConnectionInfo map[string]any `json:"connection_info"`
		} `json:"attachment"`
	}
	require.NoError(t, cinder.Request(ctx, "GET", "/attachments/"+v.Attachments[0].AttachmentID, "3.44", nil, &att))
	require.Equal(t, cinder.TargetIQN(vol.ID), att.Attachment.ConnectionInfo["target_iqn"])
	if pw, _ := att.Attachment.ConnectionInfo["auth_password"].(string); pw != "" {
		require.NotContains(t, r.stdout+r.stderr, pw, "the CHAP secret never printed")
	}

	// The same boot index for another volume: refused before Cinder.
	r = runBrickBin(t, ctx, env, "ironic", "attach-volume", "--node", node.UUID, other.ID, "--boot-index", "0")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "uses boot index 0 already")
	ov, err := cinder.GetVolume(ctx, other.ID)
	require.NoError(t, err)
	require.Equal(t, "available", ov.Status)
	require.Empty(t, ov.Attachments)

	// Powered on: detach-volume changes nothing.
	setPower(t, ctx, sc, node.UUID, ironicapi.PowerOn)
	r = runBrickBin(t, ctx, env, "ironic", "detach-volume", "--node", node.Name, volName)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "Cinder was not touched")
	require.Contains(t, r.stderr, "power it off")
	v, err = cinder.GetVolume(ctx, vol.ID)
	require.NoError(t, err)
	require.Equal(t, "in-use", v.Status)

	// Powered off: target deleted, volume back to available.
	setPower(t, ctx, sc, node.UUID, ironicapi.PowerOff)
	start = time.Now()
	r = runBrickBin(t, ctx, env, "ironic", "detach-volume", "--node", node.Name, volName, "-f", "json")
	require.Equal(t, 0, r.code, r.stderr)
	t.Logf("detach-volume took %v", time.Since(start).Round(time.Millisecond))
	require.Contains(t, r.stdout, tg.UUID)
	targets, err = ironicapi.AllTargets(ctx, ironicapi.ListNodeTargets(sc, node.UUID, nil), 0)
	require.NoError(t, err)
	require.Empty(t, targets)
	v, err = cinder.WaitVolume(ctx, vol.ID, "available")
	require.NoError(t, err)
	require.Empty(t, v.Attachments)

	// Again: nothing left, still success.
	r = runBrickBin(t, ctx, env, "ironic", "detach-volume", "--node", node.Name, volName, "-f", "value", "-c", "deleted_targets")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "", strings.TrimSpace(r.stdout))

	// A node with no initiator: refused before Cinder is touched.
	bare := newNode(t, ctx, sc, "bfv-bare", ironicapi.PowerOff)
	r = runBrickBin(t, ctx, env, "ironic", "attach-volume", "--node", bare.Name, volName)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "has no iqn, wwpn or wwnn volume connector")
	v, err = cinder.GetVolume(ctx, vol.ID)
	require.NoError(t, err)
	require.Equal(t, "available", v.Status)
}
