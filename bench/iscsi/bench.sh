#!/bin/bash
# Side-by-side benchmark, run INSIDE the test guest (see
# test/e2e/iscsi_bench_test.go): brick connect+disconnect against os-brick's
# connect_volume+disconnect_volume (Debian python3-os-brick), same boot, same
# tgtd target (CHAP, two portals), interleaved A B C A B C, single path and
# multipath:
#   brick        brick connect + brick disconnect, two whole processes;
#   os-brick     the two calls inside one Python process (start-up and
#                imports not timed);
#   os-brick-cli osbrick.py connect + osbrick.py disconnect, two whole
#                /usr/bin/python3 processes, timed like brick.
# Then one extra round of brick and os-brick-cli under strace, counting the
# successful execve calls per connect and per disconnect.
#
# Usage: bench.sh BRICK OSBRICK_PY [ROUNDS]
# Prints "RUN <mode> <tool> <connect> <disconnect> <total>" per run,
# "MEDIAN <mode> brick=<s> os-brick=<s> os-brick-cli=<s> ratio=<brick/os-brick>
# ratio-cli=<brick/os-brick-cli>" and
# "EXECVE <mode> <tool> connect=<n> disconnect=<n>" (n excludes the tool's own
# exec, so it is the number of commands the tool started).
set -euo pipefail
shopt -s inherit_errexit # a failing step inside $(timed ...) stops the script
B=$1 PY=$2 ROUNDS=${3:-5}
mkdir -p /tmp/osbrick-locks
eval "$("$BRICK_FIXTURES/iscsi.sh")" >/dev/null
eval "$("$BRICK_FIXTURES/tgt-target.sh" --luns 1 --chap alice:BenchS3cretPw0rd)" >/dev/null

cat >/tmp/single.json <<J
{"driver_volume_type":"iscsi","data":{"target_discovered":false,"target_portal":"127.0.0.1:3260","target_iqn":"$TGT_IQN","target_lun":1,"auth_method":"CHAP","auth_username":"alice","auth_password":"BenchS3cretPw0rd","access_mode":"rw","encrypted":false}}
J
cat >/tmp/mp.json <<J
{"driver_volume_type":"iscsi","data":{"target_discovered":false,"target_portal":"127.0.0.1:3260","target_iqn":"$TGT_IQN","target_lun":1,"target_portals":["127.0.0.1:3260","127.0.0.2:3260"],"target_iqns":["$TGT_IQN","$TGT_IQN"],"target_luns":[1,1],"auth_method":"CHAP","auth_username":"alice","auth_password":"BenchS3cretPw0rd","access_mode":"rw","encrypted":false}}
J
now() { date +%s.%N; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", b-a}'; }
median() { sort -n | awk '{a[NR]=$1} END{if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }
leftovers() { # fail loudly if a run left sessions or maps behind
	if [[ -n $(ls /sys/class/iscsi_session 2>/dev/null) || -n $(dmsetup ls --target multipath 2>/dev/null | grep -v "No devices") ]]; then
		echo "LEFTOVER after $1: $(iscsiadm -m session 2>&1 | tr '\n' ' ') $(dmsetup ls 2>&1 | tr '\n' ' ')"
		iscsiadm -m node -u >/dev/null 2>&1 || true
		multipath -F >/dev/null 2>&1 || true
	fi
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }
# Each step runs one whole process; TRACE=FILE runs it under strace instead.
run() {
	if [[ -n ${TRACE:-} ]]; then strace -f -qq -e trace=execve -o "$TRACE" "$@"; else "$@"; fi
}
brick_connect() { run $B connect $flag --connection-info "/tmp/$mode.json" -f json >/tmp/dev.json; }
brick_disconnect() { run $B disconnect $flag --connection-info "/tmp/$mode.json" --device-info /tmp/dev.json; }
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
# successful execve lines in an strace -f log, minus the traced tool's own
execs() { echo $(($(grep -c 'execve.*= 0$' "$1") - 1)); }

for mode in single mp; do
	flag=""; [[ $mode == mp ]] && flag=--multipath
	: >"/tmp/brick-$mode"; : >"/tmp/osbrick-$mode"; : >"/tmp/cli-$mode"
	for ((i = 1; i <= ROUNDS; i++)); do
		r=$(timed brick)
		echo "RUN $mode brick $r"
		echo "${r##* }" >>"/tmp/brick-$mode"
		leftovers "brick $mode $i"

		out=$(/usr/bin/python3 "$PY" timed "/tmp/$mode.json" "$mode" /tmp/osbrick-locks 2>/tmp/osbrick.err | tail -1)
		[[ $out == *connect* ]] || { echo "os-brick failed: $(tail -5 /tmp/osbrick.err)"; exit 1; }
		c=$(sed -n 's/.*"connect": \([0-9.]*\).*/\1/p' <<<"$out") d=$(sed -n 's/.*"disconnect": \([0-9.]*\).*/\1/p' <<<"$out")
		tot=$(awk -v a="$c" -v b="$d" 'BEGIN{printf "%.3f", a+b}')
		echo "RUN $mode os-brick $(printf %.3f "$c") $(printf %.3f "$d") $tot"
		echo "$tot" >>"/tmp/osbrick-$mode"
		leftovers "os-brick $mode $i"

		r=$(timed cli)
		echo "RUN $mode os-brick-cli $r"
		echo "${r##* }" >>"/tmp/cli-$mode"
		leftovers "os-brick-cli $mode $i"
	done
	mb=$(median <"/tmp/brick-$mode") mo=$(median <"/tmp/osbrick-$mode") mc=$(median <"/tmp/cli-$mode")
	echo "MEDIAN $mode brick=$mb os-brick=$mo os-brick-cli=$mc ratio=$(ratio "$mb" "$mo") ratio-cli=$(ratio "$mb" "$mc")"

	for tool in brick cli; do
		TRACE=/tmp/strace-c "${tool}_connect"
		TRACE=/tmp/strace-d "${tool}_disconnect"
		name=$tool; [[ $tool == cli ]] && name=os-brick-cli
		echo "EXECVE $mode $name connect=$(execs /tmp/strace-c) disconnect=$(execs /tmp/strace-d)"
		leftovers "strace $name $mode"
	done
done
