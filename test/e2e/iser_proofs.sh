#!/bin/bash
# In-guest proofs for brick's iSER (iSCSI over RDMA) attach, run by
# iser_test.go in the suite's shared guest. The guest is target and
# initiator at once: soft-RoCE devices on eth0 and eth1 (rxe.sh), LIO with
# iSER portals on both addresses (lio-iser-target.sh), open-iscsi's iser
# interface on the initiator side.
# Prints "PASS <name> [facts]" / "FAIL <name>: <why>" lines (and, with
# BENCH_ROUNDS > 0, "BENCH <tool> <transport> <mode> <connect_s>
# <disconnect_s>" lines); exits 1 if a check failed. Leaves the guest as it
# found it.
set -uo pipefail
cp /brick/brick /tmp/brick
cp /brick/directreader /tmp/directreader
B=/tmp/brick
LOGS=/tmp/brick-iser-logs
mkdir -p "$LOGS"
failed=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failed=1; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", b-a}'; }

tsetup=$(now)
eval "$("$BRICK_FIXTURES/iscsi.sh")" || { echo "FAIL setup: iscsi.sh"; exit 1; }
modprobe ib_iser || { echo "FAIL setup: modprobe ib_iser"; exit 1; }
eval "$("$BRICK_FIXTURES/rxe.sh" eth0 eth1)" || { echo "FAIL setup: rxe.sh"; exit 1; }
read -r A1 A2 <<<"$RXE_ADDRS"
eval "$("$BRICK_FIXTURES/lio-iser-target.sh" "$A1" "$A2")" || { echo "FAIL setup: lio-iser-target.sh"; exit 1; }
ifaces_before=$(ls /etc/iscsi/ifaces 2>/dev/null)
setup=$(secs "$tsetup" "$(now)")

ci() { # ci TYPE PORTAL... -> connection info as Cinder's LIO target sends it
	local typ=$1; shift
	if (($# == 1)); then
		printf '{"driver_volume_type":"%s","data":{"target_discovered":false,"target_portal":"%s","target_iqn":"%s","target_lun":0,"volume_id":"0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a21","access_mode":"rw","encrypted":false}}' "$typ" "$1" "$LIO_IQN"
		return
	fi
	local portals="" iqns="" luns=""
	for p in "$@"; do portals+="\"$p\","; iqns+="\"$LIO_IQN\","; luns+="0,"; done
	printf '{"driver_volume_type":"%s","data":{"target_discovered":false,"target_portal":"%s","target_iqn":"%s","target_lun":0,"target_portals":[%s],"target_iqns":[%s],"target_luns":[%s],"volume_id":"0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a21"}}' "$typ" "$1" "$LIO_IQN" "${portals%,}" "${iqns%,}" "${luns%,}"
}
devpath() { sed -n 's/^ *"path": "\(.*\)",*$/\1/p' "$1" | head -1; }
sessions() { ls /sys/class/iscsi_session 2>/dev/null | wc -l; }
# transports: each session's interface and its SCSI host's driver.
transports() {
	local s h
	for s in /sys/class/iscsi_session/session*; do
		[[ -e $s ]] || continue
		h=$(basename "$(dirname "$(readlink -f "$s/device")")")
		echo "$(cat "$s/ifacename" 2>/dev/null)/$(cat "/sys/class/scsi_host/$h/proc_name")"
	done | sort | uniq -c | tr -s ' \n' ' '
}
clean_state() { # clean_state NAME: no session, record, iface record, disk, map or WWID left
	local s r d m w i
	s=$(sessions) r=$(ls /etc/iscsi/nodes/ 2>/dev/null | wc -l) d=$(ls /sys/block | grep -c '^sd' || true)
	m=$(dmsetup ls --target multipath 2>/dev/null | grep -vc "No devices" || true)
	w=$(grep -c '^/' /etc/multipath/wwids 2>/dev/null || true)
	i=$(ls /etc/iscsi/ifaces 2>/dev/null)
	if [[ $s == 0 && $r == 0 && $d == 0 && $m == 0 && ${w:-0} == 0 && $i == "$ifaces_before" ]]; then
		pass "$1"
	else
		fail "$1: left behind sessions=$s records=$r disks=$d maps=$m wwids=${w:-0} ifaces=[$i]"
		iscsiadm -m session 2>&1 | sed 's/^/    /'
	fi
}
dd if=/dev/urandom of=/tmp/iser-pattern bs=1M count=4 status=none

# --- 1. single path: connect over iSER, write, disconnect, data on the target
ci iser "$A1:3260" >/tmp/iser1.json
t0=$(now)
if $B --debug connect --connection-info /tmp/iser1.json -f json >/tmp/iserdev1.json 2>"$LOGS/single-connect.log"; then
	t1=$(now)
	d=$(devpath /tmp/iserdev1.json)
	tr=$(transports)
	[[ $tr == *"1 iser/iscsi_iser"* ]] && pass "iser-single-session $d: $tr connect=$(secs "$t0" "$t1")s (set-up before it: $setup s)" || fail "iser-single-session: sessions are [$tr]"
	grep -q -- "-I iser --login" "$LOGS/single-connect.log" && pass "iser-single-login-through-iser-iface" || fail "iser-single-login: no -I iser login in the log"
	dd if=/tmp/iser-pattern of="$d" bs=1M oflag=direct status=none || fail "iser-single-write"
	t2=$(now)
	if $B --debug disconnect --connection-info /tmp/iser1.json --device-info /tmp/iserdev1.json 2>"$LOGS/single-disconnect.log"; then
		t3=$(now)
		cmp -s <(head -c 4M "$LIO_BACKING") /tmp/iser-pattern && pass "iser-single-data disconnect=$(secs "$t2" "$t3")s" || fail "iser-single-data: pattern not in the backing file"
	else
		fail "iser-single-disconnect: $(tail -3 "$LOGS/single-disconnect.log")"
	fi
else
	fail "iser-single-connect: $(tail -5 "$LOGS/single-connect.log")"
fi
clean_state iser-single-clean

# --- 2. dry run: the plan names the iser interface, and changes nothing
ci iser "$A1:3260" "$A2:3260" >/tmp/iserm.json
if $B connect --dry-run --multipath --connection-info /tmp/iserm.json -f json >/tmp/iser-plan.json 2>"$LOGS/dry.log" &&
	grep -q -- '-I iser --login' /tmp/iser-plan.json && grep -q '"transport": "iser"' /tmp/iser-plan.json; then
	pass "iser-dry-run $(grep -c -- '-I iser' /tmp/iser-plan.json) steps through -I iser"
else
	fail "iser-dry-run: $(tail -5 /tmp/iser-plan.json "$LOGS/dry.log")"
fi
clean_state iser-dry-run-clean

# --- 3. two portals through dm-multipath; one path down under O_DIRECT reads
t0=$(now)
if $B --debug connect --multipath --connection-info /tmp/iserm.json -f json >/tmp/iserdevm.json 2>"$LOGS/mp-connect.log"; then
	t1=$(now)
	d=$(devpath /tmp/iserdevm.json)
	for _ in $(seq 40); do
		active=$(multipathd show paths raw format "%w %t %T" | grep -c "active ready")
		[[ $active == 2 ]] && break
		sleep 0.25
	done
	tr=$(transports)
	[[ $d == /dev/dm-* && $active == 2 && $tr == *"2 iser/iscsi_iser"* ]] && pass "iser-multipath-two-paths $d: $tr connect=$(secs "$t0" "$t1")s" || fail "iser-multipath-two-paths: dev=$d active=$active sessions=[$tr]"
	dd if=/tmp/iser-pattern of="$d" bs=1M oflag=direct status=none || fail "iser-multipath-write"
	head -c 1M /tmp/iser-pattern >/tmp/iser-pat1m
	/tmp/directreader -dev "$d" -pattern /tmp/iser-pat1m -interval 0.1s -progress /tmp/iser-prog 2>"$LOGS/reader.err" >/tmp/iser-reader.out &
	reader=$!
	waitreads() { # waitreads N: until N good reads in all
		for _ in $(seq 200); do
			read -r good _ </tmp/iser-prog 2>/dev/null && ((good >= $1)) && return 0
			sleep 0.1
		done
		return 1
	}
	waitreads 3
	sid=""
	for s in /sys/class/iscsi_session/session*; do
		[[ $(cat "/sys/class/iscsi_connection/connection${s##*session}:0/persistent_address") == "$A2" ]] && sid=${s##*session}
	done
	iscsiadm -m session -r "$sid" --logout >/dev/null 2>&1 || fail "iser-path-down: logout of session $sid"
	read -r good0 _ </tmp/iser-prog
	waitreads $((good0 + 10)) || fail "iser-failover: reads stopped"
	kill -TERM "$reader"
	wait "$reader"
	read -r good bad </tmp/iser-reader.out
	[[ $bad == 0 && $good -gt $good0 && $(sessions) == 1 ]] && pass "iser-failover-reads $good good, $bad errors, $((good - good0)) after the path went down" || fail "iser-failover-reads: good=$good bad=$bad sessions=$(sessions): $(tail -3 "$LOGS/reader.err")"
	t2=$(now)
	if $B --debug disconnect --connection-info /tmp/iserm.json --device-info /tmp/iserdevm.json 2>"$LOGS/mp-disconnect.log"; then
		t3=$(now)
		cmp -s <(head -c 4M "$LIO_BACKING") /tmp/iser-pattern && pass "iser-multipath-data disconnect=$(secs "$t2" "$t3")s" || fail "iser-multipath-data"
	else
		fail "iser-multipath-disconnect: $(tail -3 "$LOGS/mp-disconnect.log")"
	fi
else
	fail "iser-multipath-connect: $(tail -5 "$LOGS/mp-connect.log")"
fi
clean_state iser-multipath-clean

# --- 4. figures (opt-in): brick over iSER and over TCP to the same LIO
# target, and os-brick in-process over iSER, interleaved.
bench_round() { # bench_round MODE INFO.json
	local mode=$1 info=$2 mpflag="" t0 t1 t2 t3 out
	[[ $mode == mp ]] && mpflag=--multipath
	for tool in brick-iser brick-tcp os-brick-iser; do
		case $tool in
		brick-*)
			[[ $tool == brick-tcp ]] && sed 's/"driver_volume_type":"iser"/"driver_volume_type":"iscsi"/' "$info" >/tmp/bench-info.json || cp "$info" /tmp/bench-info.json
			t0=$(now)
			$B connect $mpflag --connection-info /tmp/bench-info.json -f json >/tmp/bench-dev.json 2>>"$LOGS/bench.log" || { fail "bench-$tool-$mode-connect"; continue; }
			t1=$(now)
			$B disconnect --connection-info /tmp/bench-info.json --device-info /tmp/bench-dev.json 2>>"$LOGS/bench.log" || fail "bench-$tool-$mode-disconnect"
			t2=$(now)
			echo "BENCH $tool $mode $(secs "$t0" "$t1") $(secs "$t1" "$t2")"
			;;
		os-brick-iser)
			out=$(/usr/bin/python3 /brick/osbrick.py timed "$info" "$mode" /tmp/osbrick-locks 2>>"$LOGS/osbrick.log" | tail -1)
			[[ $out == *connect* ]] || { fail "bench-os-brick-$mode: $(tail -3 "$LOGS/osbrick.log")"; continue; }
			echo "BENCH os-brick-iser $mode $(/usr/bin/python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("%.2f %.2f" % (d["connect"], d["disconnect"]))' "$out")"
			;;
		esac
	done
}
if ((${BENCH_ROUNDS:-0} > 0)); then
	mkdir -p /tmp/osbrick-locks
	for ((i = 0; i < BENCH_ROUNDS; i++)); do
		bench_round single /tmp/iser1.json
		bench_round mp /tmp/iserm.json
	done
	# os-brick leaves its node records (and multipath WWIDs) behind: take
	# them away so the checks below see brick's state only.
	iscsiadm -m node -o delete >/dev/null 2>&1
	multipath -W >/dev/null 2>&1
	clean_state bench-clean
fi

cp -r "$LOGS" "$BRICK_SHARE/" 2>/dev/null
"$BRICK_FIXTURES/lio-iser-target.sh" --delete >/dev/null || fail "teardown: lio target"
for dev in $RXE_DEVS; do rdma link delete "$dev" || fail "teardown: $dev"; done
exit $failed
