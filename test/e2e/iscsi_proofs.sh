#!/bin/bash
# In-guest proofs for brick's iSCSI connector (run by iscsi_test.go through
# the guest harness, never on a host). One tgtd target with two LUNs and
# CHAP, reachable at 127.0.0.1 and 127.0.0.2 (two portals).
# Prints "PASS <name> [facts]" / "FAIL <name>: <why>" lines and exits 1 if
# any check failed.
set -uo pipefail
# From the guest's tmpfs: each exec from the 9p share pages the binary in
# over 9p again (about 2 s under TCG).
cp /brick/brick /tmp/brick
B=/tmp/brick
PW=Ch4pS3cretPw0rd
DPW=D1scS3cretPw0rd
LOGS=/tmp/brick-logs
mkdir -p "$LOGS"
failed=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failed=1; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", b-a}'; }

eval "$("$BRICK_FIXTURES/iscsi.sh")" || { echo "FAIL setup: iscsi.sh"; exit 1; }
eval "$("$BRICK_FIXTURES/tgt-target.sh" --luns 2 --chap "alice:$PW" --discovery-chap "dave:$DPW")" || { echo "FAIL setup: tgt-target.sh"; exit 1; }

ci() { # ci LUN PORTALS... -> connection info JSON (nested, CHAP)
	local lun=$1 pw=${PW_OVERRIDE:-$PW}; shift
	if (($# == 1)); then
		printf '{"driver_volume_type":"iscsi","data":{"target_portal":"%s","target_iqn":"%s","target_lun":%d,"auth_method":"CHAP","auth_username":"alice","auth_password":"%s","discovery_auth_method":"CHAP","discovery_auth_username":"dave","discovery_auth_password":"%s","access_mode":"rw","volume_id":"0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a1%d"}}' "$1" "$TGT_IQN" "$lun" "$pw" "$DPW" "$lun"
		return
	fi
	local portals="" iqns="" luns=""
	for p in "$@"; do portals+="\"$p\","; iqns+="\"$TGT_IQN\","; luns+="$lun,"; done
	printf '{"driver_volume_type":"iscsi","target_portals":[%s],"target_iqns":[%s],"target_luns":[%s],"auth_method":"CHAP","auth_username":"alice","auth_password":"%s","access_mode":"rw"}' "${portals%,}" "${iqns%,}" "${luns%,}" "$pw"
}
devpath() { sed -n 's/^ *"path": "\(.*\)",*$/\1/p' "$1" | head -1; }
sessions() { ls /sys/class/iscsi_session 2>/dev/null | wc -l; }
records() { ls /etc/iscsi/nodes/*/ 2>/dev/null | wc -l; }
sdisks() { ls /sys/block | grep -c '^sd' || true; }
clean_state() { # clean_state NAME: no session, record, disk, map or WWID left
	local s r d m w
	s=$(sessions) r=$(records) d=$(sdisks) m=$(dmsetup ls --target multipath 2>/dev/null | grep -vc "No devices" || true)
	w=$(grep -c '^/' /etc/multipath/wwids 2>/dev/null || true)
	if [[ $s == 0 && $r == 0 && $d == 0 && $m == 0 && ${w:-0} == 0 ]]; then
		pass "$1"
	else
		fail "$1: left behind sessions=$s records=$r disks=$d maps=$m wwids=${w:-0}"
		iscsiadm -m session 2>&1 | sed 's/^/    /'
	fi
}
dd if=/dev/urandom of=/tmp/pattern bs=1M count=4 status=none

# --- 1. single path: connect, O_DIRECT write, disconnect, data in the backing file
ci 1 127.0.0.1:3260 >/tmp/ci1.json
t0=$(now)
if $B --debug connect --connection-info /tmp/ci1.json -f json >/tmp/dev1.json 2>"$LOGS/single-connect.log"; then
	t1=$(now)
	d=$(devpath /tmp/dev1.json)
	wwid=$(/lib/udev/scsi_id -g -u -d "$d")
	grep -q "\"scsi_wwn\": \"$wwid\"" /tmp/dev1.json && pass "single-wwid-matches-scsi_id $wwid" || fail "single-wwid: device says $(grep scsi_wwn /tmp/dev1.json), scsi_id says $wwid"
	grep -q '^node.session.scan = manual' /etc/iscsi/nodes/"$TGT_IQN"/127.0.0.1,3260 && pass "single-record-scan-manual" || fail "single-record-scan-manual"
	dd if=/tmp/pattern of="$d" bs=1M oflag=direct status=none || fail "single-write"
	t2=$(now)
	if $B --debug disconnect --connection-info /tmp/ci1.json --device-info /tmp/dev1.json 2>"$LOGS/single-disconnect.log"; then
		t3=$(now)
		cmp -s <(head -c 4M "$TGT_BACKING_1") /tmp/pattern && pass "single-path-data connect=$(secs "$t0" "$t1")s disconnect=$(secs "$t2" "$t3")s" || fail "single-path-data: pattern not in backing file"
	else
		fail "single-disconnect: $(tail -3 "$LOGS/single-disconnect.log")"
	fi
else
	fail "single-connect: $(tail -5 "$LOGS/single-connect.log")"
fi
clean_state single-path-clean

# --- 2. wrong CHAP: clear error, nothing left behind
PW_OVERRIDE=wrong-password-123 ci 1 127.0.0.1:3260 >/tmp/ci-bad.json
if $B --debug connect --connection-info /tmp/ci-bad.json 2>"$LOGS/bad-chap.log" >/dev/null; then
	fail "wrong-chap: connect succeeded"
else
	grep -q "CHAP authentication failed" "$LOGS/bad-chap.log" && pass "wrong-chap-error $(grep -o 'brick: .*CHAP authentication failed' "$LOGS/bad-chap.log" | head -1 | cut -c1-100)" || fail "wrong-chap-error: $(tail -2 "$LOGS/bad-chap.log")"
fi
grep -q wrong-password-123 "$LOGS/bad-chap.log" && fail "wrong-chap-secret-in-log" || pass "wrong-chap-secret-not-in-log"
clean_state wrong-chap-clean

# --- 3. two LUNs on one target: disconnecting one keeps the other working
ci 2 127.0.0.1:3260 >/tmp/ci2.json
if $B --debug connect --connection-info /tmp/ci1.json -f json >/tmp/dev1.json 2>"$LOGS/lun1-connect.log" &&
	$B --debug connect --connection-info /tmp/ci2.json -f json >/tmp/dev2.json 2>"$LOGS/lun2-connect.log"; then
	d2=$(devpath /tmp/dev2.json)
	dd if=/tmp/pattern of="$d2" bs=1M oflag=direct status=none
	$B --debug disconnect --connection-info /tmp/ci1.json --device-info /tmp/dev1.json 2>"$LOGS/lun1-disconnect.log" || fail "two-luns-disconnect-1: $(tail -2 "$LOGS/lun1-disconnect.log")"
	if [[ $(sessions) == 1 ]] && cmp -s <(dd if="$d2" bs=1M count=4 iflag=direct status=none) /tmp/pattern; then
		pass "two-luns-other-stays"
	else
		fail "two-luns-other-stays: sessions=$(sessions), $d2 readable: $(dd if="$d2" bs=1M count=1 iflag=direct status=none of=/dev/null 2>&1 && echo yes)"
	fi
	$B --debug disconnect --connection-info /tmp/ci2.json --device-info /tmp/dev2.json 2>"$LOGS/lun2-disconnect.log" || fail "two-luns-disconnect-2: $(tail -2 "$LOGS/lun2-disconnect.log")"
else
	fail "two-luns-connect: $(tail -3 "$LOGS"/lun*-connect.log)"
fi
clean_state two-luns-clean

# --- 4. mounted device: disconnect refuses without --force
if $B connect --connection-info /tmp/ci1.json -f json >/tmp/dev1.json 2>"$LOGS/mount-connect.log"; then
	d=$(devpath /tmp/dev1.json)
	mkfs.ext4 -q -F "$d" && mkdir -p /mnt/vol && mount "$d" /mnt/vol && echo hello >/mnt/vol/file
	if $B disconnect --connection-info /tmp/ci1.json --device-info /tmp/dev1.json 2>"$LOGS/mount-disconnect.log"; then
		fail "mounted-refused: disconnect succeeded while mounted"
	else
		grep -q "mounted on /mnt/vol" "$LOGS/mount-disconnect.log" && [[ -b $d ]] && pass "mounted-refused $(head -1 "$LOGS/mount-disconnect.log" | cut -c1-120)" || fail "mounted-refused: $(cat "$LOGS/mount-disconnect.log")"
	fi
	umount /mnt/vol
	$B disconnect --connection-info /tmp/ci1.json --device-info /tmp/dev1.json 2>>"$LOGS/mount-disconnect.log" || fail "mounted-then-unmounted-disconnect"
fi
clean_state mounted-clean

# --- 5. multipath over two portals; one path logged out underneath; clean teardown
ci 1 127.0.0.1:3260 127.0.0.2:3260 >/tmp/cim.json
t0=$(now)
if $B --debug connect --multipath --connection-info /tmp/cim.json -f json >/tmp/devm.json 2>"$LOGS/mp-connect.log"; then
	t1=$(now)
	d=$(devpath /tmp/devm.json)
	# multipathd's path checker marks a just-added path "active ready" on
	# its next pass; give it a few seconds.
	for _ in $(seq 20); do
		active=$(multipathd show paths raw format "%w %t %T" | grep -c "active ready")
		[[ $active == 2 ]] && break
		sleep 0.5
	done
	[[ $d == /dev/dm-* && $active == 2 ]] && pass "multipath-two-active-paths $d connect=$(secs "$t0" "$t1")s" || fail "multipath-two-active-paths: dev=$d active=$active"
	multipath -ll | sed 's/^/    /'
	dd if=/tmp/pattern of="$d" bs=1M oflag=direct status=none || fail "multipath-write"
	iscsiadm -m node -T "$TGT_IQN" -p 127.0.0.2:3260 --logout >/dev/null
	cmp -s <(dd if="$d" bs=1M count=4 iflag=direct status=none) /tmp/pattern && pass "multipath-failover-read" || fail "multipath-failover-read"
	t2=$(now)
	if $B --debug disconnect --connection-info /tmp/cim.json --device-info /tmp/devm.json 2>"$LOGS/mp-disconnect.log"; then
		t3=$(now)
		cmp -s <(head -c 4M "$TGT_BACKING_1") /tmp/pattern && pass "multipath-data disconnect=$(secs "$t2" "$t3")s" || fail "multipath-data"
	else
		fail "multipath-disconnect: $(tail -3 "$LOGS/mp-disconnect.log")"
	fi
	iscsiadm -m node -T "$TGT_IQN" -p 127.0.0.2:3260 -o delete >/dev/null 2>&1 # the record of the path logged out by hand
else
	fail "multipath-connect: $(tail -5 "$LOGS/mp-connect.log")"
fi
clean_state multipath-clean

# --- 6. a dead portal among two: connect within the login timeout
ci 1 127.0.0.1:3260 127.0.0.3:3261 >/tmp/cidead.json
t0=$(now)
if $B --debug connect --multipath --iscsi-login-timeout 5s --connection-info /tmp/cidead.json -f json >/tmp/devd.json 2>"$LOGS/dead-connect.log"; then
	t1=$(now)
	took=$(secs "$t0" "$t1")
	d=$(devpath /tmp/devd.json)
	# The dead portal's cost, from brick's --debug log: when brick gave its
	# path up, counted from the start of the process (start-up included),
	# while the live path came up in parallel. brick first checks that the
	# portal accepts TCP, so no iscsiadm login runs for a refusing portal
	# (iscsid would retry it only every 3 s, past the login timeout).
	gone=$(grep 'path did not come up' "$LOGS/dead-connect.log" | grep -F '127.0.0.3:3261' | sed -n 's/^time=\([^ ]*\) .*/\1/p' | head -1)
	dead=""
	[[ -n $gone ]] && dead=$(secs "$t0" "$(date -d "$gone" +%s.%N)")
	if [[ -n $dead ]] && awk -v t="$dead" 'BEGIN{exit !(t <= 5 + 3)}' && ! grep -q -- '-p 127.0.0.3:3261 --login' "$LOGS/dead-connect.log"; then
		pass "dead-portal-connect $d dead-path-given-up=${dead}s total=${took}s login-timeout=5s"
	else
		fail "dead-portal-connect: dead path given up after '${dead}'s (total ${took}s) with a 5 s login timeout: $(grep -F '127.0.0.3:3261' "$LOGS/dead-connect.log" | tail -2)"
	fi
	$B --debug disconnect --connection-info /tmp/cidead.json --device-info /tmp/devd.json 2>"$LOGS/dead-disconnect.log" || fail "dead-portal-disconnect: $(tail -3 "$LOGS/dead-disconnect.log")"
else
	fail "dead-portal-connect: $(tail -5 "$LOGS/dead-connect.log")"
fi
clean_state dead-portal-clean

# --- 7. multipath from one portal: SendTargets discovery with discovery CHAP
ci 1 127.0.0.1:3260 >/tmp/cidisc.json
if $B --debug connect --multipath --connection-info /tmp/cidisc.json -f json >/tmp/devdisc.json 2>"$LOGS/disc-connect.log"; then
	grep -q "discoverydb -t sendtargets -p 127.0.0.1:3260 --discover" "$LOGS/disc-connect.log" && pass "discovery-chap $(devpath /tmp/devdisc.json)" || fail "discovery-chap: no discovery run"
	[[ -z $(ls /etc/iscsi/send_targets 2>/dev/null) ]] && pass "discovery-record-removed" || fail "discovery-record-removed"
	$B --debug disconnect --connection-info /tmp/cidisc.json --device-info /tmp/devdisc.json 2>"$LOGS/disc-disconnect.log" || fail "discovery-disconnect"
else
	fail "discovery-chap: $(tail -5 "$LOGS/disc-connect.log")"
fi
clean_state discovery-clean

# --- 9. --dry-run (called from 8, with LUN 300 attached): connect and
# disconnect plans print what would be done and change nothing
snap() { # everything a connect or disconnect could change
	{
		ls /sys/class/iscsi_session /sys/block /etc/iscsi/send_targets
		ls -R /etc/iscsi/nodes
		dmsetup ls
		cat /proc/mounts /etc/multipath/wwids
	} 2>&1 | md5sum
}
dry_run_checks() { # dry_run_checks DEVICE
	local before after t0 t1
	ci 1 127.0.0.2:3260 >/tmp/ci-dry.json # a portal with no session: a login
	before=$(snap)
	t0=$(now)
	$B connect --dry-run --connection-info /tmp/ci-dry.json -f json >/tmp/plan-c1.json 2>"$LOGS/dry-c1.log" &&
		grep -q -- '--login' /tmp/plan-c1.json && grep -q '"kernel_luns": \[' /tmp/plan-c1.json &&
		pass "dry-run-connect-plan $(grep -c '"iscsiadm' /tmp/plan-c1.json) iscsiadm steps" || fail "dry-run-connect-plan: $(cat /tmp/plan-c1.json "$LOGS/dry-c1.log" | tail -5)"
	$B connect --dry-run --multipath --connection-info /tmp/ci-dry.json -f json >/tmp/plan-mp.json 2>"$LOGS/dry-mp.log" &&
		grep -q 'sendtargets' /tmp/plan-mp.json && pass "dry-run-multipath-plan" || fail "dry-run-multipath-plan: $(tail -5 /tmp/plan-mp.json)"
	$B connect --dry-run --connection-info /tmp/ci300.json -f json >/tmp/plan-300.json 2>"$LOGS/dry-300.log" &&
		grep -q 'reuse session' /tmp/plan-300.json && grep -q '16684' /tmp/plan-300.json && pass "dry-run-sees-session" || fail "dry-run-sees-session: $(tail -5 /tmp/plan-300.json)"
	$B disconnect --dry-run --connection-info /tmp/ci300.json --device-info /tmp/dev300.json -f json >/tmp/plan-d300.json 2>"$LOGS/dry-d300.log" &&
		grep -q "\"${1#/dev/}\"" /tmp/plan-d300.json && grep -q -- '--logout' /tmp/plan-d300.json && pass "dry-run-disconnect-plan" || fail "dry-run-disconnect-plan: $(tail -8 /tmp/plan-d300.json)"
	sed 's/"target_iqn":"[^"]*"/"target_iqn":"--op=delete"/' /tmp/ci-dry.json >/tmp/ci-badiqn.json
	if $B connect --dry-run --connection-info /tmp/ci-badiqn.json >/dev/null 2>"$LOGS/dry-bad.log"; then
		fail "dry-run-refuses-bad-info: exit 0"
	else
		grep -q 'target_iqn' "$LOGS/dry-bad.log" && pass "dry-run-refuses-bad-info" || fail "dry-run-refuses-bad-info: $(tail -2 "$LOGS/dry-bad.log")"
	fi
	t1=$(now)
	after=$(snap)
	[[ $before == "$after" ]] && pass "dry-run-changes-nothing 5 runs in $(secs "$t0" "$t1")s" || fail "dry-run-changes-nothing: host state changed"
}

# --- 8. a LUN numbered >= 256 with SAM2 addressing: tgt reports LUNs above
# 255 in flat space (0x40 | high bits), so LUN 300 is kernel LUN 16684
hi=/tmp/tgt/target1-lun300.img
truncate -s 16M "$hi"
if tgtadm --lld iscsi --op new --mode logicalunit --tid "$TGT_TID" --lun 300 --backing-store "$hi"; then
	sed 's/"target_lun":1,/"target_lun":300,"addressing_mode":"SAM2",/' <(ci 1 127.0.0.1:3260) >/tmp/ci300.json
	t0=$(now)
	if $B --debug connect --connection-info /tmp/ci300.json -f json >/tmp/dev300.json 2>"$LOGS/lun300-connect.log"; then
		t1=$(now)
		d=$(devpath /tmp/dev300.json)
		hctl=$(basename "$(readlink -f "/sys/block/${d#/dev/}/device")")
		[[ $hctl == *:16684 ]] && pass "sam2-lun300-kernel-lun $hctl connect=$(secs "$t0" "$t1")s" || fail "sam2-lun300-kernel-lun: $d is $hctl, want LUN 16684"
		head -c 1M /tmp/pattern | dd of="$d" bs=1M oflag=direct status=none || fail "sam2-lun300-write"
		dd if="$d" bs=1M count=1 iflag=direct status=none | cmp -s - <(head -c 1M /tmp/pattern) && pass "sam2-lun300-read-back" || fail "sam2-lun300-read-back"
		dry_run_checks "$d"
		$B --debug disconnect --connection-info /tmp/ci300.json --device-info /tmp/dev300.json 2>"$LOGS/lun300-disconnect.log" || fail "sam2-lun300-disconnect: $(tail -2 "$LOGS/lun300-disconnect.log")"
		cmp -s <(head -c 1M "$hi") <(head -c 1M /tmp/pattern) && pass "sam2-lun300-data-in-backing-file" || fail "sam2-lun300-data-in-backing-file"
	else
		fail "sam2-lun300-connect: $(tail -5 "$LOGS/lun300-connect.log")"
	fi
else
	fail "sam2-lun300-setup: tgtadm refused LUN 300"
fi
clean_state sam2-lun300-clean

# --- secrets: never in --debug output, device output or another process's argv
n=$(grep -c -e "$PW" -e "$DPW" "$LOGS"/*.log /tmp/dev*.json | awk -F: '{s+=$2} END{print s+0}')
lines=$(cat "$LOGS"/*.log | wc -l)
[[ $n == 0 ]] && pass "secrets-absent-from-debug-output ($lines log lines grepped)" || fail "secrets-in-output: $n hits"
grep -q -- "-v $PW" "$LOGS"/*.log && fail "secret-on-argv" || pass "secret-not-on-argv"
exit $failed
