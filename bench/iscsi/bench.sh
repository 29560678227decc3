#!/bin/bash
# Side-by-side benchmark, run INSIDE the test guest (see
# test/e2e/iscsi_bench_test.go and README.md beside this file): brick
# connect+disconnect against os-brick's connect_volume+disconnect_volume
# (Debian python3-os-brick), same boot, same tgtd target (CHAP, two
# portals), interleaved A B C A B C, single path and multipath:
#   brick        brick connect + brick disconnect, two whole processes;
#   os-brick     the two calls inside one Python process (start-up and
#                imports not timed);
#   os-brick-cli osbrick.py connect + osbrick.py disconnect, two whole
#                /usr/bin/python3 processes, timed like brick (CLI_ROUNDS
#                rounds, 0 skips it: one such process takes 30-120 s here).
# Then: the commands each tool starts per connect and per disconnect
# (strace -f -e trace=execve); brick with one dead portal of two; brick with
# SCALE_LUNS other LUNs attached against none, interleaved.
#
# Usage: bench.sh BRICK OSBRICK_PY [ROUNDS]
# Environment: CLI_ROUNDS (default 1), DEAD_ROUNDS (default ROUNDS),
# DEAD_LOGIN_TIMEOUT (seconds, default 5), SCALE_ROUNDS (default 2, 0 skips),
# SCALE_LUNS (default 64), PARTS (default "single mp dead scale": which parts
# run; the execve counts come with single and mp).
#
# Output lines (the format bench/run.sh parses; keep it stable, see README.md):
#   LOAD <label> <1-min> <5-min> <15-min>                 guest load average
#   RUN <mode> <tool> <connect_s> <disconnect_s> <total_s>
#       mode: single | mp | dead | scale0 | scale<N>;
#       tool: brick | os-brick | os-brick-cli
#   MEDIAN <mode> brick=<s> os-brick=<s> os-brick-cli=<s|NA> ratio=<brick/os-brick> ratio-cli=<brick/os-brick-cli|NA>
#       (mode single | mp; medians of the totals)
#   MEDIAN dead brick-connect=<s> login-timeout=<s> limit=<s> ok=<yes|no>
#   MEDIAN scale brick-0=<s> brick-<N>=<s> growth=<percent> ok=<yes|no>
#   EXECVE <mode> <tool> connect=<n> disconnect=<n>
#       n = successful execve calls minus the tool's own exec: the commands
#       the tool started, counting those started by them
#   LEFTOVER <what>: a run left a session or map behind (a failure)
set -euo pipefail
shopt -s inherit_errexit # a failing step inside $(timed ...) stops the script
SRC=$1 PY=$2 ROUNDS=${3:-5}
CLI_ROUNDS=${CLI_ROUNDS:-1} DEAD_ROUNDS=${DEAD_ROUNDS:-$ROUNDS} DEAD_LOGIN_TIMEOUT=${DEAD_LOGIN_TIMEOUT:-5}
SCALE_ROUNDS=${SCALE_ROUNDS:-2} SCALE_LUNS=${SCALE_LUNS:-64}
PARTS=" ${PARTS:-single mp dead scale} "
# brick runs from the guest's root filesystem, as an installed binary: the
# share it arrives on is 9p without a page cache, where each start of the
# 14 MB binary cost 3-12 s (1-2 s from here); os-brick's Python code lives on
# the cached root filesystem too.
B=/usr/local/sbin/brick
install -m 0755 "$SRC" "$B"
mkdir -p /tmp/osbrick-locks
load() { echo "LOAD $1 $(cut -d' ' -f1-3 /proc/loadavg)"; }
eval "$("$BRICK_FIXTURES/iscsi.sh")" >/dev/null
eval "$("$BRICK_FIXTURES/tgt-target.sh" --luns 1 --chap alice:BenchS3cretPw0rd)" >/dev/null
load start

cat >/tmp/single.json <<J
{"driver_volume_type":"iscsi","data":{"target_discovered":false,"target_portal":"127.0.0.1:3260","target_iqn":"$TGT_IQN","target_lun":1,"auth_method":"CHAP","auth_username":"alice","auth_password":"BenchS3cretPw0rd","access_mode":"rw","encrypted":false}}
J
cat >/tmp/mp.json <<J
{"driver_volume_type":"iscsi","data":{"target_discovered":false,"target_portal":"127.0.0.1:3260","target_iqn":"$TGT_IQN","target_lun":1,"target_portals":["127.0.0.1:3260","127.0.0.2:3260"],"target_iqns":["$TGT_IQN","$TGT_IQN"],"target_luns":[1,1],"auth_method":"CHAP","auth_username":"alice","auth_password":"BenchS3cretPw0rd","access_mode":"rw","encrypted":false}}
J
# Nothing listens on 127.0.0.3:3261: that portal refuses every connection.
cat >/tmp/dead.json <<J
{"driver_volume_type":"iscsi","data":{"target_discovered":false,"target_portal":"127.0.0.1:3260","target_iqn":"$TGT_IQN","target_lun":1,"target_portals":["127.0.0.1:3260","127.0.0.3:3261"],"target_iqns":["$TGT_IQN","$TGT_IQN"],"target_luns":[1,1],"auth_method":"CHAP","auth_username":"alice","auth_password":"BenchS3cretPw0rd","access_mode":"rw","encrypted":false}}
J
cp /tmp/single.json /tmp/scale.json
now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", b-a}'; }
median() { sort -n | awk '{a[NR]=$1} END{if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }
# leftovers fails loudly if a run left a session of the bench target or a
# map behind (the scale target's sessions are the bench's own).
leftovers() {
	if iscsiadm -m session 2>/dev/null | grep -qF "$TGT_IQN " || [[ -n $(dmsetup ls --target multipath 2>/dev/null | grep -v "No devices") ]]; then
		echo "LEFTOVER after $1: $(iscsiadm -m session 2>&1 | tr '\n' ' ') $(dmsetup ls 2>&1 | tr '\n' ' ')"
		iscsiadm -m node -T "$TGT_IQN" -u >/dev/null 2>&1 || true
		multipath -F >/dev/null 2>&1 || true
	fi
}
# Each step runs one whole process; TRACE=FILE runs it under strace instead.
run() {
	if [[ -n ${TRACE:-} ]]; then strace -f -qq -e trace=execve -o "$TRACE" "$@"; else "$@"; fi
}
# Multipath rounds keep brick's --debug log (DEBUG lines after each round) so
# the seconds of a connect can be placed step by step.
dbg() { [[ $mode == mp && -z ${TRACE:-} ]] && echo "--debug"; }
brick_connect() { run $B connect $flag ${extra:-} $(dbg) --connection-info "/tmp/$mode.json" -f json >/tmp/dev.json 2>>/tmp/brick-debug.log; }
brick_disconnect() { run $B disconnect $flag $(dbg) --connection-info "/tmp/$mode.json" --device-info /tmp/dev.json 2>>/tmp/brick-debug.log; }
cli_connect() {
	run /usr/bin/python3 "$PY" connect "/tmp/$mode.json" "$mode" /tmp/osbrick-locks >/tmp/osdev.out 2>/tmp/osbrick.err ||
		{ echo "os-brick-cli connect failed: $(tail -5 /tmp/osbrick.err)" >&2; exit 1; }
	tail -1 /tmp/osdev.out >/tmp/osdev.json
}
cli_disconnect() {
	run /usr/bin/python3 "$PY" disconnect "/tmp/$mode.json" "$mode" /tmp/osbrick-locks /tmp/osdev.json 2>/tmp/osbrick.err ||
		{ echo "os-brick-cli disconnect failed: $(tail -5 /tmp/osbrick.err)" >&2; exit 1; }
}
# timed TOOL: one connect + disconnect, each timed from outside as a process.
timed() {
	local t0 t1 t2
	t0=$(now); "${1}_connect" >&2; t1=$(now); "${1}_disconnect" >&2; t2=$(now)
	echo "$(sub "$t0" "$t1") $(sub "$t1" "$t2") $(sub "$t0" "$t2")"
}
# os-brick in one process: prints "<connect> <disconnect> <total>".
inproc() {
	local out c d
	out=$(/usr/bin/python3 "$PY" timed "/tmp/$mode.json" "$mode" /tmp/osbrick-locks 2>/tmp/osbrick.err | tail -1)
	[[ $out == *connect* ]] || { echo "os-brick failed: $(tail -5 /tmp/osbrick.err)" >&2; exit 1; }
	c=$(sed -n 's/.*"connect": \([0-9.]*\).*/\1/p' <<<"$out") d=$(sed -n 's/.*"disconnect": \([0-9.]*\).*/\1/p' <<<"$out")
	echo "$(printf %.3f "$c") $(printf %.3f "$d") $(awk -v a="$c" -v b="$d" 'BEGIN{printf "%.3f", a+b}')"
}
# successful execve lines in an strace -f log, minus the traced tool's own
execs() { echo $(($(grep -c 'execve.*= 0$' "$1") - 1)); }

for mode in single mp; do
	[[ $PARTS == *" $mode "* ]] || continue
	flag=""; [[ $mode == mp ]] && flag=--multipath
	: >"/tmp/brick-$mode"; : >"/tmp/osbrick-$mode"; : >"/tmp/cli-$mode"
	for ((i = 1; i <= ROUNDS; i++)); do
		: >/tmp/brick-debug.log
		r=$(timed brick)
		echo "RUN $mode brick $r"
		if [[ $mode == mp ]]; then sed "s/^/DEBUG $mode $i /" /tmp/brick-debug.log; else cat /tmp/brick-debug.log >&2; fi
		echo "${r##* }" >>"/tmp/brick-$mode"
		leftovers "brick $mode $i"

		r=$(inproc)
		echo "RUN $mode os-brick $r"
		echo "${r##* }" >>"/tmp/osbrick-$mode"
		leftovers "os-brick $mode $i"

		if ((i <= CLI_ROUNDS)); then
			r=$(timed cli)
			echo "RUN $mode os-brick-cli $r"
			echo "${r##* }" >>"/tmp/cli-$mode"
			leftovers "os-brick-cli $mode $i"
		fi
	done
	mb=$(median <"/tmp/brick-$mode") mo=$(median <"/tmp/osbrick-$mode") mc=NA rc=NA
	if [[ -s /tmp/cli-$mode ]]; then mc=$(median <"/tmp/cli-$mode") rc=$(ratio "$mb" "$mc"); fi
	echo "MEDIAN $mode brick=$mb os-brick=$mo os-brick-cli=$mc ratio=$(ratio "$mb" "$mo") ratio-cli=$rc"
	load "after-$mode"

	# Commands started: brick's two processes, os-brick's two calls (split
	# at osbrick.py's marker).
	TRACE=/tmp/strace-c brick_connect
	TRACE=/tmp/strace-d brick_disconnect
	echo "EXECVE $mode brick connect=$(execs /tmp/strace-c) disconnect=$(execs /tmp/strace-d)"
	leftovers "strace brick $mode"
	strace -f -qq -e trace=execve,access,faccessat,faccessat2 -o /tmp/strace-os \
		/usr/bin/python3 "$PY" timed "/tmp/$mode.json" "$mode" /tmp/osbrick-locks >/dev/null 2>/tmp/osbrick.err
	mark=$(grep -n 'brick-bench-mark-connect-done' /tmp/strace-os | head -1 | cut -d: -f1)
	oc=$(head -n "$mark" /tmp/strace-os | grep -c 'execve.*= 0$') od=$(tail -n +"$mark" /tmp/strace-os | grep -c 'execve.*= 0$')
	echo "EXECVE $mode os-brick connect=$((oc - 1)) disconnect=$od"
	leftovers "strace os-brick $mode"
done

# One dead portal of two: connect must end within the login timeout + 1 s.
[[ $PARTS == *" dead "* ]] || DEAD_ROUNDS=0
mode=dead flag=--multipath extra="--iscsi-login-timeout ${DEAD_LOGIN_TIMEOUT}s"
: >/tmp/brick-dead
for ((i = 1; i <= DEAD_ROUNDS; i++)); do
	r=$(timed brick)
	echo "RUN dead brick $r"
	echo "${r%% *}" >>/tmp/brick-dead
	leftovers "brick dead $i"
done
if ((DEAD_ROUNDS > 0)); then
	md=$(median </tmp/brick-dead) limit=$((DEAD_LOGIN_TIMEOUT + 1))
	echo "MEDIAN dead brick-connect=$md login-timeout=$DEAD_LOGIN_TIMEOUT limit=$limit ok=$(awk -v a="$md" -v b="$limit" 'BEGIN{print (a <= b) ? "yes" : "no"}')"
fi
extra=""
((DEAD_ROUNDS == 0)) || load after-dead

# Scale: brick single path with SCALE_LUNS LUNs of another target attached
# (logged in with iscsiadm directly, every LUN scanned) against none,
# interleaved: none, attach, N, detach, ...
if ((SCALE_ROUNDS > 0)) && [[ $PARTS == *" scale "* ]]; then
	"$BRICK_FIXTURES/tgt-target.sh" --tid 2 --luns "$SCALE_LUNS" --size 8M >/dev/null
	SCALE_IQN=iqn.2026-12.org.brick:target2
	iscsiadm -m node -T "$SCALE_IQN" -p 127.0.0.1:3260 -o new >/dev/null
	attach_many() {
		iscsiadm -m node -T "$SCALE_IQN" -p 127.0.0.1:3260 --login >/dev/null
		local n
		for _ in $(seq 600); do
			n=$(ls -d /sys/class/iscsi_session/session*/device/target*/*:*:*:*/block/* 2>/dev/null | wc -l)
			((n >= SCALE_LUNS)) && break
			sleep 0.5
		done
		((n >= SCALE_LUNS)) || { echo "scale: only $n of $SCALE_LUNS LUNs appeared" >&2; exit 1; }
		udevadm settle --timeout=300
	}
	detach_many() {
		iscsiadm -m node -T "$SCALE_IQN" -p 127.0.0.1:3260 --logout >/dev/null
		udevadm settle --timeout=300
	}
	mode=scale flag=""
	: >/tmp/brick-scale0; : >"/tmp/brick-scale$SCALE_LUNS"
	for ((i = 1; i <= SCALE_ROUNDS; i++)); do
		r=$(timed brick)
		echo "RUN scale0 brick $r"
		echo "${r##* }" >>/tmp/brick-scale0
		leftovers "brick scale0 $i"
		attach_many
		r=$(timed brick)
		echo "RUN scale$SCALE_LUNS brick $r"
		echo "${r##* }" >>"/tmp/brick-scale$SCALE_LUNS"
		leftovers "brick scale$SCALE_LUNS $i"
		detach_many
	done
	m0=$(median </tmp/brick-scale0) mn=$(median <"/tmp/brick-scale$SCALE_LUNS")
	g=$(awk -v a="$m0" -v b="$mn" 'BEGIN{printf "%.1f", (b-a)/a*100}')
	echo "MEDIAN scale brick-0=$m0 brick-$SCALE_LUNS=$mn growth=$g ok=$(awk -v g="$g" 'BEGIN{print (g <= 10) ? "yes" : "no"}')"
	iscsiadm -m node -T "$SCALE_IQN" -p 127.0.0.1:3260 -o delete >/dev/null
	load after-scale
fi
