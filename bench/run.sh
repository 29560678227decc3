#!/usr/bin/env bash
# Runs every brick-vs-os-brick comparison of issues #10, #21 and #27 and prints
# one table: operation, brick median, the other tool's median, ratio, runs,
# min/max of both.
#
#   host   get-connector against os-brick's get_connector_properties
#          (Debian python3-os-brick) and against bench/floor (a minimal
#          static Go program reading the same files: the floor), interleaved
#          A B A B (bench/compare); callgrind instruction counts of both;
#   go     the Go benchmarks (testing.B) of the hot pure-Go paths;
#   guest  the iSCSI benchmark in one qemu test guest (bench/iscsi/bench.sh
#          via TestISCSIBenchmark): single path and multipath against
#          os-brick in-process and as whole processes, a dead portal, 64
#          other LUNs attached, commands started. 15-40 minutes under TCG;
#          then TestNVMeoF with its benchmark rounds (BRICK_BENCH=1): NVMe/TCP
#          connect+disconnect of brick (whole processes and in-process,
#          bench/nvmeof/inproc) against os-brick's NVMeOFConnector, and
#          in its RDMA run NVMe/RDMA (soft-RoCE) and NVMe/TCP over one
#          portal each to the same nvmet, the same three ways; then
#          TestISER's rounds (BRICK_BENCH=1): iSER connect+disconnect over
#          soft-RoCE to LIO, brick against os-brick in-process and against
#          brick over TCP to the same LIO portals; then
#          TestLocalAttachBenchmark: whole `brick local-attach`/`local-detach`
#          against python-brick-cinderclient-ext's flow (bench/cinderext)
#          on the real Cinder, iSCSI single path and multipath
#          (BRICK_BENCH_LA_ISCSI=0: not), a LUKS2
#          volume with its key in Barbican (BRICK_BENCH_LA_LUKS=0: not),
#          NVMe/TCP with BRICK_BENCH_LA_NVME=1 (Cinder restarted for it;
#          the Python side is the extension's steps with os-brick's NVMe-oF
#          connector), peak RSS, runs that fail listed as FAILED and not
#          counted; then
#          TestExtendGuest's rounds (BRICK_BENCH=1, 3 rounds): host-side
#          extend of a multipath volume, brick against os-brick's
#          extend_volume on the same map after Cinder grew it; then
#          TestRBD's and TestNFS's rounds (BRICK_BENCH=1, the fast lane's
#          check 1 first, BRICK_BENCH_RBD_ROUNDS / BRICK_BENCH_NFS_ROUNDS,
#          default --guest-rounds): connect+disconnect of an RBD image
#          (krbd, one-OSD Ceph in the guest) and of a file on an NFS 4.2
#          share, brick's whole processes against os-brick's RBDConnector
#          and NFS connector in-process (bench/rbdnfs/osbrick.py; os-brick's
#          NFS disconnect leaves the share mounted, so its time includes the
#          umount Nova would run).
#
# Usage: bench/run.sh [--quick] [--no-go] [--only PARTS] [--runs N] [--guest-rounds N] [--max-load L]
#   --quick           host and Go benchmarks only, no guest
#   --only PARTS      only these parts, comma-separated: get-connector,
#                     iscsi, nvmeof, iser, localattach, extend, rbd,
#                     nfs (Go
#                     benchmarks: leave out with --no-go)
#   --no-go           skip the Go benchmarks
#   --runs N          get-connector runs of each tool (default 30)
#   --max-load L      a local-attach round taken while the host's 1-minute
#                     load average was above L (default 4: the benchmark's
#                     own guest keeps about 2 of the 2 cores busy) is taken
#                     again, up to 3 times (BRICK_BENCH_MAX_LOAD)
#   --guest-rounds N  iSCSI rounds (BRICK_BENCH_ROUNDS, default 5); the
#                     other BRICK_BENCH_* knobs of test/e2e/iscsi_bench_test.go
#                     pass through the environment
#
# Everything lands in bench/results/<UTC time>/ (gitignored), the table in
# table.txt; bench/results/latest points at the newest run. The exit code is
# non-zero when a part failed (the table still shows what was measured).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
only="" quick=0 gobench=1 runs=30 rounds=${BRICK_BENCH_ROUNDS:-5} maxload=${BRICK_BENCH_MAX_LOAD:-4}
while (($#)); do
	case $1 in
	--quick) quick=1 ;;
	--no-go) gobench=0 ;;
	--runs) runs=$2; shift ;;
	--guest-rounds) rounds=$2; shift ;;
	--max-load) maxload=$2; shift ;;
	--only) only=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
	shift
done

# want PART: whether --only (a comma-separated list) names PART, or is unset.
want() { [[ -z $only || ,$only, == *,$1,* ]]; }
bash test/install.sh >/dev/null
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=bench/results/$stamp
mkdir -p "$out"
ln -sfn "$stamp" bench/results/latest
# One line per timed run: <operation> <tool> <seconds> <peak RSS KiB or ->
samples=$out/samples.txt
: >"$samples"
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
{
	echo "start $(date -u +%FT%TZ) load $(loadavg)"
	echo "host $(nproc) cores, $(uname -r), $(go version | cut -d' ' -f3)"
} >"$out/env.txt"
failed=()

# --- host: get-connector -------------------------------------------------
if want get-connector; then
echo "bench: get-connector, $runs runs of each tool, interleaved" >&2
# Built as the Makefile builds it (static, stripped).
CGO_ENABLED=0 go build -tags nocsi -trimpath -ldflags "-s -w" -o "$out/brick" ./cmd/brick
go build -o "$out/compare" ./bench/compare
# os-brick is given the ip (as Nova passes CONF.my_ip); brick finds its own.
osbrick=(/usr/bin/python3 -c 'import json
from os_brick.initiator import connector
print(json.dumps(connector.get_connector_properties("", "127.0.0.1", False, False)))')
# os-brick's privsep-helper outlives it by 3-4 s; compare waits for it
# (untimed) so it does not slow the next brick run. brick reads the
# packaged config file, as an installed brick reads /etc/brick/brick.yaml.
export BRICK_CONFIG=$PWD/packaging/brick.yaml
if ! "$out/compare" -header -label get-connector -runs "$runs" -samples "$samples" -wait-gone 'privsep_context os_brick' \
	-- "$out/brick" get-connector -f json :: "${osbrick[@]}" >"$out/get-connector.txt"; then
	failed+=(get-connector)
fi
# The floor (issue #27): a minimal static Go program reading the same files
# and printing the same JSON; brick's goal is a median within 1.5x of it.
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/floor" ./bench/floor
if ! "$out/compare" -label get-connector-floor -names brick,floor -runs "$runs" -samples "$samples" \
	-- "$out/brick" get-connector -f json :: "$out/floor" >"$out/get-connector-floor.txt"; then
	failed+=(get-connector-floor)
fi
# Instructions executed (valgrind's callgrind), stable where wall times are
# noise. One P and no async preemption: callgrind aborts on Go's
# preemption signal, and idle Ps spinning would count wall time.
# Now and then callgrind still aborts on a Go signal; such a run counts
# nothing, and the line says how many of the 5 counted.
callgrind() { # NAME ARGV...: prints "<name> <min> <median> <runs counted>"
	local name=$1 i
	shift
	for i in 1 2 3 4 5; do
		{ GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null || true; } |
			sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
	done | sort -n | awk -v n="$name" '{ v[NR] = $1 } END { if (NR) printf "%s %d %d %d\n", n, v[1], v[int((NR + 1) / 2)], NR }'
}
if command -v valgrind >/dev/null; then
	{
		callgrind brick "$out/brick" get-connector -f json
		callgrind floor "$out/floor"
	} >"$out/callgrind.txt"
fi
echo "after-host $(date -u +%FT%TZ) load $(loadavg)" >>"$out/env.txt"
fi

# --- Go benchmarks --------------------------------------------------------
if ((gobench)); then
	echo "bench: Go benchmarks" >&2
	mapfile -t pkgs < <(grep -rl --include='*_test.go' '^func Benchmark' . | grep -v '^./test/' | xargs -n1 dirname | sort -u)
	if ! go test -run '^$' -bench . -benchmem "${pkgs[@]}" >"$out/go-bench.txt" 2>&1; then
		failed+=(go-benchmarks)
	fi
	echo "after-go $(date -u +%FT%TZ) load $(loadavg)" >>"$out/env.txt"
fi

# --- guest: iSCSI ---------------------------------------------------------
if ((!quick)); then
	# comm is cut to 15 characters: qemu-system-x86_64 shows as qemu-system-x86.
	if pgrep -x qemu-system-x86 >/dev/null; then
		echo "bench: warning: another qemu guest is running; guest figures will be inflated" >&2
		echo "other-qemu $(pgrep -cx qemu-system-x86) running at guest start" >>"$out/env.txt"
	fi
	if want iscsi; then
		echo "bench: iSCSI in the guest, $rounds rounds (this takes a while)" >&2
		if ! BRICK_BENCH=1 BRICK_BENCH_ROUNDS=$rounds go test -tags e2e -run '^TestISCSIBenchmark$' -v -timeout 200m ./test/e2e/ >"$out/iscsi.log" 2>&1; then
			failed+=(iscsi-guest)
		fi
		# The test logs bench.sh's lines as "    file.go:N: RUN ..."; the format
		# is described in bench/iscsi/bench.sh.
		sed -n 's/^ *[A-Za-z0-9_]*\.go:[0-9]*: \(RUN\|MEDIAN\|EXECVE\|LEFTOVER\|LOAD\|HOSTLOAD\) /\1 /p' "$out/iscsi.log" >"$out/iscsi.txt"
		# RUN <mode> <tool> <connect_s> <disconnect_s> <total_s>
		awk '$1 == "RUN" && NF >= 6 {
			if ($2 == "dead") print "iscsi-dead-portal-connect", $3, $4, "-"
			else print "iscsi-" $2, $3, $6, "-"
		}' "$out/iscsi.txt" >>"$samples"
	fi
	if want nvmeof; then
		echo "bench: NVMe/TCP in the guest, $rounds rounds" >&2
		if ! BRICK_BENCH=1 BRICK_BENCH_ROUNDS=$rounds go test -tags e2e -run '^TestNVMeoF$' -v -timeout 150m ./test/e2e/ >"$out/nvmeof.log" 2>&1; then
			failed+=(nvmeof-guest)
		fi
		# "    nvmeof_test.go:N: BENCH <tool>-<round> <connect> <disconnect> <total> left=N"
		sed -n 's/^ *\([A-Za-z0-9_]*\.go:[0-9]*: \)\{0,1\}\(BENCH\|EXECVE\|STARTUP\) /\2 /p' "$out/nvmeof.log" >"$out/nvmeof.txt"
		awk '$1 == "BENCH" && NF >= 5 && $3 ~ /^[0-9.]+$/ { tool = $2; sub(/-[0-9]+$/, "", tool)
			if (tool == "brick-inproc") print "nvmeof-connect+disconnect-inproc", "brick", $5, "-"
			else if (tool == "brick") print "nvmeof-connect+disconnect", "brick", $5, "-"
			else if (tool == "os-brick") { print "nvmeof-connect+disconnect", "os-brick-inproc", $5, "-"; print "nvmeof-connect+disconnect-inproc", "os-brick-inproc", $5, "-" }
			else if (tool == "os-brick-cli") print "nvmeof-connect+disconnect", "os-brick-cli", $5, "-"
			# The RDMA run (nvmeof_rdma_test.go): one portal each, NVMe/RDMA
			# over soft-RoCE and NVMe/TCP to the same nvmet, same boot.
			else if (tool ~ /^(rdma|tcp)-(brick|brick-inproc|os-brick)$/) {
				tr = substr(tool, 1, 4); sub(/-$/, "", tr); who = substr(tool, length(tr) + 2)
				op = "nvme-" tr "-1portal-connect+disconnect"
				if (who == "brick") print op, "brick", $5, "-"
				else if (who == "brick-inproc") { print op "-inproc", "brick", $5, "-"; print "nvme-rdma-vs-tcp-1portal-inproc", (tr == "rdma" ? "brick" : "brick-tcp"), $5, "-" }
				else { print op, "os-brick-inproc", $5, "-"; print op "-inproc", "os-brick-inproc", $5, "-" } } }' "$out/nvmeof.txt" >>"$samples"
	fi
	if want iser; then
		echo "bench: iSER over soft-RoCE in the guest, $rounds rounds" >&2
		if ! BRICK_BENCH=1 BRICK_BENCH_ISER_ROUNDS=$rounds go test -tags e2e -run '^TestISER$' -v -timeout 150m ./test/e2e/ >"$out/iser.log" 2>&1; then
			failed+=(iser-guest)
		fi
		# "    iser_test.go:N: BENCH <brick-iser|brick-tcp|os-brick-iser> <single|mp> <connect_s> <disconnect_s>"
		awk '{ sub(/^ *[A-Za-z0-9_]*\.go:[0-9]+: /, "") } $1 == "BENCH" && NF == 5 && $4 ~ /^[0-9.]+$/ && $5 ~ /^[0-9.]+$/ {
			tool = $2 == "brick-iser" ? "brick" : ($2 == "os-brick-iser" ? "os-brick-inproc" : "")
			if (tool != "") print "iser-connect+disconnect-" $3, tool, $4 + $5, "-"
			# brick over iSER against brick over TCP to the same LIO target.
			if ($2 == "brick-iser" || $2 == "brick-tcp") print "iser-vs-tcp-same-lio-" $3, ($2 == "brick-iser" ? "brick" : "brick-tcp"), $4 + $5, "-" }' "$out/iser.log" >>"$samples"
	fi
	if want localattach; then
		echo "bench: local-attach + local-detach, brick vs python-brick-cinderclient-ext's flow, in the guest" >&2
		if ! BRICK_BENCH=1 BRICK_BENCH_LA_ROUNDS=$rounds BRICK_BENCH_MAX_LOAD=$maxload go test -tags e2e -run '^TestLocalAttachBenchmark$' -v -timeout 240m ./test/e2e/ >"$out/localattach.log" 2>&1; then
			failed+=(localattach-guest)
		fi
		# RUN <mode> <tool> <attach_s> <detach_s> <total_s> <attach_rss_kb> <detach_rss_kb> rc=.. sessions=.. status=.. load=<before>/<after> try=N
		sed -n 's/^ *\([A-Za-z0-9_]*\.go:[0-9]*: \)\{0,1\}\(RUN\|EXECVE\|LOAD\|REPEAT\|REPEATED\|FAILED\|RESET\|FORMAT\) /\2 /p' "$out/localattach.log" >"$out/localattach.txt"
		# The steps of one attach and detach of each tool: a STEPS line and its
		# indented lines.
		awk '/: STEPS / { p = 1; sub(/^.*: STEPS /, "STEPS "); print; next } p && /^ {6,}/ { sub(/^ +/, "    "); print; next } { p = 0 }' "$out/localattach.log" >"$out/steps.txt"
		# Only runs that succeeded and left the volume available count; the
		# others are listed under the table as FAILED.
		awk '$1 == "RUN" && NF >= 11 && $9 == "rc=0/0" && $10 == "sessions=0" && $11 == "status=available" {
			print "local-attach+detach-" $2, $3, $6, ($7 > $8 ? $7 : $8) }' "$out/localattach.txt" >>"$samples"
	fi
	if want extend; then
		echo "bench: online extend of a multipath volume, brick vs os-brick's extend_volume, in the guest" >&2
		if ! BRICK_BENCH=1 go test -tags e2e -run '^TestExtendGuest$' -v -timeout 60m ./test/e2e/ >"$out/extend.log" 2>&1; then
			failed+=(extend-guest)
		fi
		# "    extend_test.go:N: EXTENDROUND <r> brick=<s> brick-whole=<s> os-brick=<s|failed>"
		sed -n 's/^ *\([A-Za-z0-9_]*\.go:[0-9]*: \)\{0,1\}EXTENDROUND /EXTENDROUND /p' "$out/extend.log" >"$out/extend.txt"
		awk '$1 == "EXTENDROUND" { for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			print "extend-multipath-host-side", "brick", v["brick"], "-"
			if (v["os-brick"] != "failed" && v["os-brick"] != "skipped") print "extend-multipath-host-side", "os-brick-inproc", v["os-brick"], "-" }' "$out/extend.txt" >>"$samples"
	fi
	for part in rbd nfs; do
		want $part || continue
		test=TestRBD label="RBD (krbd)"
		[[ $part == nfs ]] && test=TestNFS label=NFS
		echo "bench: $label connect+disconnect, brick vs os-brick in-process, in the guest" >&2
		v=BRICK_BENCH_${part^^}_ROUNDS
		# -short: TestRBD's check 1 only (the Ceph cluster is built either way).
		if ! env BRICK_BENCH=1 "$v=${!v:-$rounds}" go test -tags e2e -short -run "^$test\$" -v -timeout 90m ./test/e2e/ >"$out/$part.log" 2>&1; then
			failed+=($part-guest)
		fi
		# "    rbdnfs_bench_test.go:N: BENCH <brick|os-brick>-<round> <connect>
		# <disconnect> <total> left=N load=L ...", the test's copy of the
		# guest's line (the guest output it logs holds them too).
		awk -v op="$part-connect+disconnect" '!sub(/^ *rbdnfs_bench_test\.go:[0-9]+: /, "") { next }
			$1 == "BENCH" && NF >= 6 && $5 ~ /^[0-9.]+$/ && $6 == "left=0" { tool = $2; sub(/-[0-9]+$/, "", tool)
				print op, (tool == "brick" ? "brick" : "os-brick-inproc"), $5, "-" }' "$out/$part.log" >>"$samples"
		sed -n 's/^ *rbdnfs_bench_test\.go:[0-9]*: \(BENCH [a-z-]*-[0-9]* FAILED\)/\1/p' "$out/$part.log" >>"$out/libfailed.txt"
	done
	echo "after-guest $(date -u +%FT%TZ) load $(loadavg)" >>"$out/env.txt"
fi

# --- the table ------------------------------------------------------------
{
	echo "brick vs os-brick ($(head -1 "$out/env.txt"); $(sed -n 2p "$out/env.txt"))"
	echo
	# First pass: the operations in the order they ran; second: the runs
	# sorted by time within each operation and tool.
	awk '{ print $1 }' "$samples" | awk '!seen[$1]++' >"$out/operations.txt"
	sort -k1,1 -k2,2 -k3,3g "$samples" | awk -v order="$out/operations.txt" '
	function t(s) { return s == "" ? "-" : (s < 1 ? sprintf("%.1f ms", s * 1000) : sprintf("%.2f s", s)) }
	function med(k,   n) { n = cnt[k]; return n == 0 ? "" : (n % 2 ? v[k, (n + 1) / 2] : (v[k, n / 2] + v[k, n / 2 + 1]) / 2) }
	BEGIN { while ((getline op < order) > 0) ops[++nops] = op }
	{ k = $1 SUBSEP $2; v[k, ++cnt[k]] = $3; if ($4 != "-" && $4 > rss[k]) rss[k] = $4
	  if ($2 != "brick" && !(($1, $2) in other)) { other[$1, $2] = 1; others[$1] = others[$1] " " $2 } }
	# goal: the issue #39 goal of a row, as the most brick/other may be.
	function goal(op, other) {
		if (op == "get-connector") return 0.005
		if (op == "get-connector-floor") return 1.5
		if (op ~ /^local-attach/) return 0.3
		if (op ~ /vs-tcp/ || other == "os-brick-cli") return ""
		return 0.5
	}
	END {
		w = length("operation")
		for (i = 1; i <= nops; i++) {
			op = ops[i]; n = split(others[op], list, " ")
			if (n == 0) { list[1] = ""; n = 1 }
			for (j = 1; j <= n; j++) {
				name = op (list[j] == "" ? "" : " vs " list[j]); row[++nrows] = name; rop[nrows] = op; rother[nrows] = list[j]
				if (length(name) > w) w = length(name)
			}
		}
		f = "%-" w "s %10s %10s %11s %8s %7s %19s %19s %13s %s\n"
		printf f, "operation", "brick med", "other med", "brick/other", "speed-up", "runs", "brick min/max", "other min/max", "peak RSS MB", "goal"
		for (r = 1; r <= nrows; r++) {
			op = rop[r]; b = op SUBSEP "brick"; bm = med(b); o = op SUBSEP rother[r]; om = med(o)
			ratio = (bm != "" && om != "") ? sprintf("%.3f", bm / om) : "-"
			speed = (bm != "" && om != "") ? sprintf("%.1fx", om / bm) : "-"
			rs = (rss[b] != "" || rss[o] != "") ? sprintf("%.1f / %s", rss[b] / 1024, rss[o] == "" ? "-" : sprintf("%.1f", rss[o] / 1024)) : "-"
			g = goal(op, rother[r]); gs = "-"
			if (g != "" && ratio != "-") {
				met = bm / om <= g && (op !~ /^local-attach/ || rss[b] / 1024 <= 30)
				gs = op == "get-connector" ? ">= 200x" : sprintf("<= %sx%s", g, op ~ /^local-attach/ ? ", <= 30 MB" : "")
				gs = gs ": " (met ? "met" : "NOT met")
			}
			printf f, row[r], t(bm), t(om), ratio, speed, cnt[b] "/" (cnt[o] + 0),
				t(v[b, 1]) "/" t(v[b, cnt[b]]), (cnt[o] ? t(v[o, 1]) "/" t(v[o, cnt[o]]) : "-"), rs, gs
		}
	}'
	if [[ -s $out/iscsi.txt ]]; then
		echo
		echo "guest summary lines (bench/iscsi/bench.sh):"
		grep -E '^(MEDIAN|EXECVE|LEFTOVER|HOSTLOAD|LOAD) ' "$out/iscsi.txt" | sed 's/^/  /'
	fi
	if [[ -s $out/callgrind.txt ]]; then
		echo
		echo "get-connector instructions (callgrind, 5 runs, GOMAXPROCS=1):"
		awk '{ m[$1] = $2; d[$1] = $3; printf "  %-8s min %12d  median %12d  (%d of 5 runs counted)\n", $1, $2, $3, $4 }
			END { if (m["floor"]) printf "  brick/floor (min) %.2fx\n", m["brick"] / m["floor"] }' "$out/callgrind.txt"
	fi
	if [[ -s $out/nvmeof.txt ]]; then
		echo
		echo "NVMe/TCP guest lines (TestNVMeoF, programs started per connect+disconnect, process start-up):"
		grep -E '^(EXECVE|STARTUP) ' "$out/nvmeof.txt" | sed 's/^/  /'
	fi
	if [[ -s $out/localattach.txt ]]; then
		echo
		echo "local-attach rounds: the host's load before/after each (a round above $maxload is taken again; REPEAT lines), programs started per attach+detach:"
		awk '$1 == "RUN" { ok = $9 == "rc=0/0" && $10 == "sessions=0" && $11 == "status=available"
			print "  " $2, $3, $NF, $(NF - 1), (ok ? "ok" : "FAILED (not counted) " $9 " " $10 " " $11) }
			$1 ~ /^(REPEAT|REPEATED|FAILED|RESET|FORMAT|EXECVE|LOAD)$/ { print "  " $0 }' "$out/localattach.txt"
		n=$(awk '$1 == "RUN" && !($9 == "rc=0/0" && $10 == "sessions=0" && $11 == "status=available")' "$out/localattach.txt" | grep -c . || true)
		((n == 0)) || echo "  $n local-attach runs FAILED and are not counted (their errors: $out/localattach.log)"
	fi
	if [[ -s $out/steps.txt ]]; then
		echo
		echo "where one attach and one detach spend their time (brick --debug, the Python flow's steps):"
		sed 's/^/  /' "$out/steps.txt"
	fi
	if [[ -s $out/libfailed.txt ]]; then
		echo
		echo "RBD/NFS rounds that FAILED (not counted):"
		sed 's/^/  /' "$out/libfailed.txt"
	fi
	if [[ -s $out/go-bench.txt ]]; then
		echo
		echo "Go benchmarks (go test -bench . -benchmem):"
		awk '/^pkg:/ { pkg = $2; sub(/.*brick-storage\/brick\//, "", pkg) }
			/^Benchmark/ { name = $1; sub(/-[0-9]+$/, "", name)
				printf "  %-16s %-40s %14s ns/op %10s B/op %8s allocs/op\n", pkg, name, $3, $5, $7 }' "$out/go-bench.txt"
	fi
	echo
	echo "end $(date -u +%FT%TZ) load $(loadavg)"
	if ((${#failed[@]})); then echo "FAILED: ${failed[*]} (logs in $out)"; fi
} | tee "$out/table.txt"
((${#failed[@]} == 0))
