//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// secretsGuestScript runs, with --debug, a full local-attach/local-detach
// cycle of a real Cinder volume (CHAP), a local-attach that fails after the
// login (os-complete answered 500 by a proxy), and brick connect/disconnect
// with hand-made connection info carrying CHAP and discovery CHAP against a
// tgtd inside the guest, plus a connect with a wrong CHAP password (the
// login error path). Then it searches every output and the state, run,
// temp and open-iscsi directories for each secret and prints one
// "LEAKS <label> <count>" line per secret.
const secretsGuestScript = `
set -uo pipefail
t0=$EPOCHREALTIME
` + cinderGuestSetup + fastShell + `
took setup "$t0"
COMMON=(--nic eth0 --iscsi-login-timeout 8s --device-timeout 10s --debug)
mkdir -p /brick/out /root/in

# 1. The real Cinder's CHAP: attach, write, detach, all with --debug.
t0=$(now)
$B local-attach "$VOL" "${COMMON[@]}" -f json >/brick/out/attach.json 2>/brick/out/attach.err
echo "RC attach $?"
att=$(jget /brick/out/attach.json attachment_id)
printf %s "$(apiget "attachments/$att" auth_password)" >/root/in/cinder-pw
echo "CINDERPW len $(wc -c </root/in/cinder-pw)"
dev=$(jget /brick/out/attach.json path)
dd if=/dev/zero of="$dev" bs=1M count=1 oflag=direct status=none
echo "RC write $?"
$B list --debug -f json >/brick/out/list.json 2>/brick/out/list.err
echo "RC list $?"
$B local-detach "$VOL" "${COMMON[@]}" >/brick/out/detach.out 2>/brick/out/detach.err
echo "RC detach $?"
took cinder-cycle "$t0"

# 2. An attach that fails after the CHAP login: the rollback's logs too.
/brick/faultproxy -listen 127.0.0.1:18776 -target http://10.0.2.2:8776 -fail os-complete,os-attach 2>/brick/out/faultproxy.log &
for ((i = 0; i < 50; i++)); do listening 127.0.0.1 18776 && break; pause 0.1; done
t0=$(now)
BRICK_CINDER_ENDPOINT=http://127.0.0.1:18776/v3 $B local-attach "$VOL" "${COMMON[@]}" >/brick/out/fail-attach.out 2>/brick/out/fail-attach.err
echo "RC fail-attach $?"
took fail-attach "$t0"
kill %1

# 3. brick connect with CHAP and discovery CHAP against a tgtd in the guest.
CHAP_PW=own-CHAP-s3cret-$RANDOM$RANDOM
DISC_PW=disc-CHAP-s3cret-$RANDOM$RANDOM
WRONG_PW=wrong-CHAP-s3cret-$RANDOM$RANDOM
t0=$(now)
printf %s "$CHAP_PW" >/root/in/chap-pw; printf %s "$DISC_PW" >/root/in/disc-pw; printf %s "$WRONG_PW" >/root/in/wrong-pw
eval "$("$BRICK_FIXTURES/tgt-target.sh" --tid 7 --chap chapuser:"$CHAP_PW" --discovery-chap discuser:"$DISC_PW")"
info() {
	cat <<JSON
{"driver_volume_type":"iscsi","data":{"target_portal":"127.0.0.1:3260","target_iqn":"$TGT_IQN","target_lun":1,
 "auth_method":"CHAP","auth_username":"chapuser","auth_password":"$1",
 "discovery_auth_method":"CHAP","discovery_auth_username":"discuser","discovery_auth_password":"$DISC_PW"}}
JSON
}
info "$CHAP_PW" >/root/in/ci.json
info "$WRONG_PW" >/root/in/ci-wrong.json
took tgt-setup "$t0"
t0=$(now)
$B connect --connection-info /root/in/ci.json --multipath --iscsi-login-timeout 8s --device-timeout 10s --debug -f json >/brick/out/connect.json 2>/brick/out/connect.err
echo "RC connect $?"
grep -o 'iscsi: discover[a-z ]*' /brick/out/connect.err | sed 's/^/DISCOVERY /'
echo "SESSIONS connect $(iscsiadm -m session 2>/dev/null | grep -c . || true)"
$B disconnect --connection-info /root/in/ci.json --device-info /brick/out/connect.json --debug >/brick/out/disconnect.out 2>/brick/out/disconnect.err
echo "RC disconnect $?"
$B connect --connection-info /root/in/ci-wrong.json --iscsi-login-timeout 8s --device-timeout 10s --debug >/brick/out/connect-wrong.out 2>/brick/out/connect-wrong.err
echo "RC connect-wrong $?"
took connect-cycle "$t0"
echo "SESSIONS end $(iscsiadm -m session 2>/dev/null | grep -c . || true)"
echo "RECORDS end $(ls -A /etc/iscsi/nodes /etc/iscsi/send_targets /var/lib/iscsi/nodes /var/lib/iscsi/send_targets 2>/dev/null | grep -v ':$' | grep -c . || true)"

# 4. Search: outputs, state, run, temp and open-iscsi directories.
t0=$(now)
places=(/brick/out /var/lib/brick /run/brick /run/lock /tmp /etc/iscsi /var/lib/iscsi)
ls -laR /brick/out /var/lib/brick /run/brick 2>/dev/null | sed 's/^/FILES /'
total=0
# One grep reads every file once for all the secrets (-a: binary files
# too, -o: each match as FILE:SECRET); the counting per secret is done
# with builtins (every process start costs under TCG).
declare -A pws
for s in cinder-pw chap-pw disc-pw wrong-pw; do
	pw=""
	read -r pw </root/in/$s
	pws[$s]=$pw
	[[ -n $pw ]] && printf '%s\n' "$pw"
done >/root/in/all
# (not tee /dev/stderr: reopening the output file would truncate it)
mapfile -t hits < <(grep -rHoaF --exclude-dir=tgt -f /root/in/all -- "${places[@]}" 2>/dev/null)
for s in cinder-pw chap-pw disc-pw wrong-pw; do
	pw=${pws[$s]}
	if [[ -z $pw ]]; then echo "LEAKS $s unknown"; continue; fi
	declare -A seen=()
	n=0
	for h in "${hits[@]}"; do
		[[ $h == *":$pw" ]] || continue
		f=${h%":$pw"}
		[[ -n ${seen[$f]:-} ]] && continue
		seen[$f]=1
		echo "LEAKFILE $s $f"
		n=$((n + 1))
	done
	unset seen
	echo "LEAKS $s $n"
	total=$((total + n))
done
for f in /brick/out/*.err; do
	n=0
	while IFS= read -r l || [[ -n $l ]]; do [[ -n $l ]] && n=$((n + 1)); done <"$f"
	echo "ERRLINES ${f##*/} $n"
done
echo "SEARCHED files $(find "${places[@]}" -xdev -type f 2>/dev/null | grep -c .)"
echo "SECRETS found $total"
took search "$t0"
echo DONE
`

// TestSecretsGuest: in one guest boot, with --debug everywhere, the CHAP
// password of a real Cinder export, a hand-made CHAP and discovery CHAP
// password, and a wrong password used in a failing login appear in none of
// stdout, stderr, /var/lib/brick, /run/brick, /run/lock, /tmp, /etc/iscsi
// and /var/lib/iscsi; no node or discovery record is left after detach.
func TestSecretsGuest(t *testing.T) {
	lane(t, laneServices)
	sharedGuest.prestart() // boots while the host prepares
	c := needCinder(t, guestCinderOptions)
	vol := newVolume(t, c, "brick-e2e-secrets")
	g := runSharedGuest(t, c, secretsGuestScript, map[string]string{buildFaultProxy(t): "faultproxy"}, map[string]string{"VOL": vol.ID}, nil)

	require.Equal(t, "0", g.rc("attach"))
	require.Len(t, g.lines["CINDERPW len"], 1)
	require.NotEqual(t, "0", g.word("CINDERPW len", 0), "the Cinder export carries a CHAP password")
	require.Equal(t, "0", g.rc("write"))
	require.Equal(t, "0", g.rc("list"))
	require.Equal(t, "0", g.rc("detach"))
	require.NotEqual(t, "0", g.rc("fail-attach"))
	require.Equal(t, "0", g.rc("connect"))
	require.Equal(t, []string{"1"}, g.lines["SESSIONS connect"], "the CHAP login worked")
	require.Contains(t, g.out, "DISCOVERY iscsi: discovered portals", "SendTargets with discovery CHAP worked")
	require.Equal(t, "0", g.rc("disconnect"))
	require.NotEqual(t, "0", g.rc("connect-wrong"))
	require.Equal(t, []string{"0"}, g.lines["SESSIONS end"])
	require.Equal(t, []string{"0"}, g.lines["RECORDS end"], "no node or discovery record (with its password) is left")
	for _, s := range []string{"cinder-pw", "chap-pw", "disc-pw", "wrong-pw"} {
		require.Equal(t, []string{"0"}, g.lines["LEAKS "+s], "secret %s found (see the guest output above)", s)
	}
	require.Equal(t, []string{"0"}, g.lines["SECRETS found"])
	t.Logf("secrets: 4 secrets searched in %s files: %s found", strings.Join(g.lines["SEARCHED files"], " "), strings.Join(g.lines["SECRETS found"], " "))
}
