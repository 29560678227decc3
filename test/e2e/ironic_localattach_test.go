//go:build e2e

package e2e

// local-attach --ironic-node in the qemu guest: the volume is attached
// through the real Cinder and iSCSI, and registered as the node's volume
// target in the real Ironic (reached at the slirp gateway); local-detach
// removes the target again.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed"
	"github.com/brick-storage/brick/internal/testbed/guest"
	"github.com/brick-storage/brick/ironicapi"
)

const localAttachIronicScript = ironicGuestPrelude + `
power() {
	curl -sf -m 30 -X PUT -H 'Content-Type: application/json' -H 'X-OpenStack-Ironic-API-Version: 1.32' \
		-d "{\"target\": \"$1\"}" "$BRICK_IRONIC_ENDPOINT/v1/nodes/$NODE/states/power"
	for _ in $(seq 100); do
		curl -sf -m 10 -H 'X-OpenStack-Ironic-API-Version: 1.32' "$BRICK_IRONIC_ENDPOINT/v1/nodes/$NODE?fields=power_state" | grep -q "\"$1\"" && return
		sleep 0.2
	done
}

# 1. attach + register (node powered off), detach + unregister.
$B local-attach "$VOL" "${COMMON[@]}" --ironic-node "$NODE" --boot-index 1 -f json >/brick/attach1.json 2>/brick/attach1.err
echo "RC attach1 $?"
$B ironic target list --node "$NODE" --long -f json >/brick/targets1.json 2>&1
echo "RC list1 $?"
$B local-detach "$VOL" "${COMMON[@]}" >/brick/detach1.out 2>&1
echo "RC detach1 $?"
echo "TARGETS after-detach1 $($B ironic target list --node "$NODE" -f value | grep -c . || true)"

# 2. attach again, power the node on, detach: Cinder and the host are
# cleaned up and detach succeeds; the target cannot be deleted yet and the
# warning says how to finish, which step 3 follows.
$B local-attach "$VOL" "${COMMON[@]}" --ironic-node "$NODE" --boot-index 1 -f json >/brick/attach2.json 2>/brick/attach2.err
echo "RC attach2 $?"
power "power on"
$B local-detach "$VOL" "${COMMON[@]}" >/brick/detach2.out 2>&1
echo "RC detach2 $?"
echo "TARGETS after-detach2 $($B ironic target list --node "$NODE" -f value | grep -c . || true)"
echo "SESSIONS after-detach2 $(iscsiadm -m session 2>/dev/null | grep -c . || true)"
power "power off"
for uuid in $($B ironic target list --node "$NODE" -f value -c UUID); do
  $B ironic target delete "$uuid" >>/brick/cleanup.out 2>&1
done
echo "RC cleanup $?"
echo "TARGETS after-cleanup $($B ironic target list --node "$NODE" -f value | grep -c . || true)"

# 4. kill -9 between Ironic creating the target and brick recording it,
# and inside local-detach before the target is deleted: brick cleanup
# finds and deletes the target (by its tag), logs out, detaches in Cinder.
for s in registered unregister; do
	if [[ $s == unregister ]]; then
		$B local-attach "$VOL" "${COMMON[@]}" --ironic-node "$NODE" --boot-index 1 >/brick/crash-$s-attach.out 2>&1
		echo "RC crash-$s-attach $?"
		BRICK_TEST_CRASH_AT=$s $B local-detach "$VOL" "${COMMON[@]}" >/brick/crash-$s.out 2>&1
	else
		BRICK_TEST_CRASH_AT=$s $B local-attach "$VOL" "${COMMON[@]}" --ironic-node "$NODE" --boot-index 1 >/brick/crash-$s.out 2>&1
	fi
	echo "RC crash-$s $?"
	echo "TARGETS crashed-$s $($B ironic target list --node "$NODE" -f value | grep -c . || true)"
	$B cleanup "$VOL" "${COMMON[@]}" >/brick/cleanup-$s.out 2>&1
	echo "RC cleanup-$s $?"
	echo "TARGETS cleaned-$s $($B ironic target list --node "$NODE" -f value | grep -c . || true)"
	echo "SESSIONS cleaned-$s $(iscsiadm -m session 2>/dev/null | grep -c . || true)"
	echo "RECORDS cleaned-$s $(ls /var/lib/brick/volumes/ 2>/dev/null | grep -c . || true)"
done

# 5. Keystone: the member user attaches and detaches a volume of its own
# project through the keystone-mode Cinder (catalog region RegionGuest,
# the slirp gateway's addresses), from a clouds.yaml and from the OS_*
# variables of a Horizon openrc; then a fixed token Keystone no longer
# accepts.
ks() {
	local label=$1; shift
	env -u OS_AUTH_TYPE -u BRICK_CINDER_ENDPOINT -u BRICK_IRONIC_ENDPOINT "$@" \
		$B local-attach "$KS_VOL" "${COMMON[@]}" -f json >/brick/ks-attach-$label.json 2>/brick/ks-attach-$label.err
	echo "RC ks-attach-$label $?"
	dev=$(grep -o '"path": *"[^"]*"' /brick/ks-attach-$label.json | cut -d'"' -f4)
	echo "BLOCK ks-$label $([[ -n $dev && -b $dev ]] && echo yes || echo no)"
	env -u OS_AUTH_TYPE -u BRICK_CINDER_ENDPOINT -u BRICK_IRONIC_ENDPOINT "$@" \
		$B local-detach "$KS_VOL" "${COMMON[@]}" >/brick/ks-detach-$label.out 2>&1
	echo "RC ks-detach-$label $?"
	echo "SESSIONS ks-$label $(iscsiadm -m session 2>/dev/null | grep -c . || true)"
}
if [[ -n ${KS_VOL:-} ]]; then
	install -m 600 /brick/clouds.yaml /root/clouds.yaml
	ks clouds OS_CLOUD=brick OS_CLIENT_CONFIG_FILE=/root/clouds.yaml
	ks openrc OS_AUTH_URL=$KS_AUTH_URL OS_USERNAME=$KS_USER OS_PASSWORD=$KS_PASSWORD OS_PROJECT_NAME=$KS_PROJECT \
		OS_USER_DOMAIN_NAME=Default OS_PROJECT_DOMAIN_ID=default OS_REGION_NAME=RegionGuest OS_INTERFACE=public OS_IDENTITY_API_VERSION=3
	env -u OS_AUTH_TYPE -u BRICK_CINDER_ENDPOINT -u BRICK_IRONIC_ENDPOINT OS_AUTH_URL=$KS_AUTH_URL OS_TOKEN=gAAAAAexpired \
		OS_PROJECT_ID=$KS_PROJECT_ID OS_REGION_NAME=RegionGuest $B local-attach "$KS_VOL" "${COMMON[@]}" >/brick/ks-token.out 2>&1
	echo "RC ks-token $?"
	rm -f /root/clouds.yaml # the guest is shared with the next test
fi
echo DONE
`

// TestLocalAttachIronicNode runs in the suite's shared guest (no boot of
// its own), which it leaves clean.
func TestLocalAttachIronicNode(t *testing.T) {
	lane(t, laneServices)
	sharedGuest.prestart() // boots while the host prepares, unless up
	c := needCinder(t, guestCinderOptions)
	bed := realIronic(t)
	k := needKeystone(t, testbed.KeystoneOptions{})
	brick := buildBrick(t)
	ctx := testContext(t)
	sc, _ := bed.client(t)
	node := newNode(t, ctx, sc, "local", ironicapi.PowerOff)
	vol := newVolume(t, c, fmt.Sprintf("brick-e2e-ironic-local-%d", time.Now().UnixNano()))
	port := bed.endpoint[strings.LastIndex(bed.endpoint, ":")+1:]
	ksVol := newVolume(t, c.InProject(k.ProjectID), fmt.Sprintf("brick-e2e-keystone-%d", time.Now().UnixNano()))
	guestAuthURL := strings.Replace(k.AuthURL, "127.0.0.1", testbed.GuestHostIP, 1)

	share := guestShare(t)
	clouds := filepath.Join(t.TempDir(), "clouds.yaml")
	require.NoError(t, os.WriteFile(clouds, []byte(`clouds:
  brick:
    auth:
      auth_url: `+guestAuthURL+`
      username: `+k.Member.Name+`
      password: `+k.Member.Password+`
      project_name: `+k.Project+`
    region_name: RegionGuest
    identity_api_version: 3
`), 0o600))
	gctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	res, err := runSmokeGuest(t, gctx, guest.Options{
		Script: localAttachIronicScript,
		Files:  map[string]string{brick: "brick", clouds: "clouds.yaml"},
		NICs:   1,
		Env: map[string]string{"VOL": vol.ID, "NODE": node.Name, "IRONIC_PORT": port,
			"KS_VOL": ksVol.ID, "KS_AUTH_URL": guestAuthURL, "KS_USER": k.Member.Name, "KS_PASSWORD": k.Member.Password,
			"KS_PROJECT": k.Project, "KS_PROJECT_ID": k.ProjectID},
		Timeout:  12 * time.Minute,
		ShareDir: share,
	})
	require.NoError(t, err)
	out := string(res.Output)
	t.Logf("guest: boot %s, script %s, wall %s, exit %d\n%s", res.Boot, res.ScriptTime, res.Duration, res.ExitCode, out)
	files := map[string]string{}
	for _, f := range []string{"attach1.json", "attach1.err", "targets1.json", "detach1.out", "attach2.err", "detach2.out", "cleanup.out",
		"crash-registered.out", "cleanup-registered.out", "crash-unregister-attach.out", "crash-unregister.out", "cleanup-unregister.out",
		"ks-attach-clouds.json", "ks-attach-clouds.err", "ks-detach-clouds.out", "ks-attach-openrc.json", "ks-attach-openrc.err", "ks-detach-openrc.out", "ks-token.out"} {
		b, _ := os.ReadFile(filepath.Join(share, f))
		files[f] = string(b)
		t.Logf("%s:\n%s", f, b)
	}
	require.Equal(t, 0, res.ExitCode)
	require.Contains(t, out, "\nDONE")
	lines := scriptLines(res.Output)
	require.Equal(t, "0", lines["RC attach1"], files["attach1.err"])
	require.Equal(t, "0", lines["RC list1"])
	var targets []map[string]any
	require.NoError(t, json.Unmarshal([]byte(files["targets1.json"]), &targets))
	require.Len(t, targets, 1)
	tg := targets[0]
	require.Equal(t, vol.ID, tg["Volume ID"])
	require.Equal(t, float64(1), tg["Boot Index"])
	require.Equal(t, "iscsi", tg["Driver Volume Type"])
	props := tg["Properties"].(map[string]any)
	require.Equal(t, c.TargetIQN(vol.ID), props["target_iqn"])
	require.Equal(t, "******", props["auth_password"], "credentials masked")
	var att map[string]any
	require.NoError(t, json.Unmarshal([]byte(files["attach1.json"]), &att))
	require.Equal(t, "0", lines["RC detach1"], files["detach1.out"])
	require.Equal(t, "0", lines["TARGETS after-detach1"], "detach removed the target")

	require.Equal(t, "0", lines["RC attach2"], files["attach2.err"])
	require.Equal(t, "0", lines["RC detach2"], "a target Ironic keeps while powered on is a warning: %s", files["detach2.out"])
	require.Equal(t, "1", lines["TARGETS after-detach2"])
	require.Equal(t, "0", lines["SESSIONS after-detach2"])
	require.Contains(t, files["detach2.out"], "warning", "the node's target stays with a warning")
	require.Contains(t, files["detach2.out"], "power", "the message says the node must be powered off")
	require.Contains(t, files["detach2.out"], "brick ironic target delete", "and how to finish")
	require.Equal(t, "0", lines["TARGETS after-cleanup"], "the advised command removed it once the node was off")

	for _, s := range []string{"registered", "unregister"} {
		require.Equal(t, "137", lines["RC crash-"+s], "killed at %s: %s", s, files["crash-"+s+".out"])
		require.Equal(t, "1", lines["TARGETS crashed-"+s], "the target exists when brick dies at %s", s)
		require.Equal(t, "0", lines["RC cleanup-"+s], files["cleanup-"+s+".out"])
		require.Equal(t, "0", lines["TARGETS cleaned-"+s], "cleanup after a kill at %s deleted the target: %s", s, files["cleanup-"+s+".out"])
		require.Equal(t, "0", lines["SESSIONS cleaned-"+s])
		require.Equal(t, "0", lines["RECORDS cleaned-"+s])
	}
	require.Equal(t, "0", lines["RC crash-unregister-attach"], files["crash-unregister-attach.out"])

	for _, label := range []string{"clouds", "openrc"} {
		require.Equal(t, "0", lines["RC ks-attach-"+label], "member attach (%s): %s", label, files["ks-attach-"+label+".err"])
		require.Equal(t, "yes", lines["BLOCK ks-"+label], "a block device (%s)", label)
		require.Equal(t, "0", lines["RC ks-detach-"+label], "member detach (%s): %s", label, files["ks-detach-"+label+".out"])
		require.Equal(t, "0", lines["SESSIONS ks-"+label])
	}
	require.Equal(t, "1", lines["RC ks-token"], files["ks-token.out"])
	require.Equal(t, 1, strings.Count(files["ks-token.out"], "\n"), "one line: %s", files["ks-token.out"])
	require.Contains(t, files["ks-token.out"], "the token was refused")
	ksv, err := c.InProject(k.ProjectID).GetVolume(ctx, ksVol.ID)
	require.NoError(t, err)
	require.Equal(t, "available", ksv.Status)

	v, err := c.GetVolume(ctx, vol.ID)
	require.NoError(t, err)
	require.Equal(t, "available", v.Status)
	left, err := ironicapi.AllTargets(ctx, ironicapi.ListNodeTargets(sc, node.UUID, nil), 0)
	require.NoError(t, err)
	require.Empty(t, left)
}
