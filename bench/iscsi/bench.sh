#!/bin/bash
# Side-by-side benchmark, run INSIDE the test guest (see
# test/e2e/iscsi_bench_test.go): brick connect+disconnect against os-brick's
# connect_volume+disconnect_volume (Debian python3-os-brick), same boot, same
# tgtd target (CHAP, two portals), interleaved A B A B, single path and
# multipath. brick is timed as two whole processes (start-up included);
# os-brick as its two calls inside one Python process (imports excluded).
#
# Usage: bench.sh BRICK OSBRICK_PY [ROUNDS]
# Prints "RUN <mode> <tool> <connect> <disconnect> <total>" per run and
# "MEDIAN <mode> brick=<s> os-brick=<s> ratio=<brick/os-brick>".
set -euo pipefail
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
for mode in single mp; do
	flag=""; [[ $mode == mp ]] && flag=--multipath
	: >"/tmp/brick-$mode" ; : >"/tmp/osbrick-$mode"
	for ((i = 1; i <= ROUNDS; i++)); do
		t0=$(now)
		$B connect $flag --connection-info "/tmp/$mode.json" -f json >/tmp/dev.json
		t1=$(now)
		$B disconnect $flag --connection-info "/tmp/$mode.json" --device-info /tmp/dev.json
		t2=$(now)
		c=$(sub "$t0" "$t1") d=$(sub "$t1" "$t2") tot=$(sub "$t0" "$t2")
		echo "RUN $mode brick $c $d $tot"
		echo "$tot" >>"/tmp/brick-$mode"
		leftovers "brick $mode $i"
		out=$(/usr/bin/python3 "$PY" "/tmp/$mode.json" "$mode" /tmp/osbrick-locks 2>/tmp/osbrick.err | tail -1)
		[[ $out == *connect* ]] || { echo "os-brick failed: $(tail -5 /tmp/osbrick.err)"; exit 1; }
		c=$(sed -n 's/.*"connect": \([0-9.]*\).*/\1/p' <<<"$out") d=$(sed -n 's/.*"disconnect": \([0-9.]*\).*/\1/p' <<<"$out")
		tot=$(awk -v a="$c" -v b="$d" 'BEGIN{printf "%.3f", a+b}')
		echo "RUN $mode os-brick $(printf %.3f "$c") $(printf %.3f "$d") $tot"
		echo "$tot" >>"/tmp/osbrick-$mode"
		leftovers "os-brick $mode $i"
	done
	mb=$(median <"/tmp/brick-$mode") mo=$(median <"/tmp/osbrick-$mode")
	echo "MEDIAN $mode brick=$mb os-brick=$mo ratio=$(awk -v a="$mb" -v b="$mo" 'BEGIN{printf "%.2f", a/b}')"
done
