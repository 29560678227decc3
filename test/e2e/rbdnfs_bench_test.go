//go:build e2e

package e2e

// The RBD (krbd) and NFS benchmark rounds, library level (BRICK_BENCH=1
// only): in TestRBD's and TestNFS's boots, after their first check, whole
// `brick connect` + `brick disconnect` processes against os-brick's
// connect_volume + disconnect_volume in one Python process
// (bench/rbdnfs/osbrick.py), interleaved, the same volume each round.

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// libBench is what a boot needs for the rounds under BRICK_BENCH: their
// count (roundsVar, default 5) in BENCH_ROUNDS, and os-brick's driver. Off
// (nil, 0) in the suite.
func libBench(roundsVar string) (env map[string]string, files map[string]string, rounds int) {
	if os.Getenv("BRICK_BENCH") == "" {
		return nil, nil, 0
	}
	rounds = benchInt(roundsVar, 5)
	return map[string]string{"BENCH_ROUNDS": strconv.Itoa(rounds)},
		map[string]string{"../../bench/rbdnfs/osbrick.py": "osbrick.py"}, rounds
}

// logLibBench logs the host's load and the BENCH lines' medians under
// label: connect+disconnect totals of the rounds that succeeded and left
// nothing behind; a brick round that failed or left something fails the
// test (os-brick's are only reported).
// Not a helper: bench/run.sh reads the lines logged from this file.
func logLibBench(t *testing.T, label, out string, started time.Time) {
	totals := map[string][]float64{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "BENCH" {
			continue
		}
		t.Log(line)
		tool, _, _ := strings.Cut(f[1], "-")
		if strings.HasPrefix(f[1], "os-brick-") {
			tool = "os-brick"
		}
		total, ok := libBenchTotal(f)
		switch {
		case ok:
			totals[tool] = append(totals[tool], total)
		case tool == "brick":
			t.Errorf("%s brick round failed or left something behind: %s", label, line)
		}
	}
	b, o := totals["brick"], totals["os-brick"]
	ratio := "-"
	if len(b) > 0 && len(o) > 0 {
		ratio = strconv.FormatFloat(nvmeMedian(b)/nvmeMedian(o), 'f', 3, 64)
	}
	t.Logf("%s connect+disconnect: brick median %.3f s of %d, os-brick in-process median %.3f s of %d, ratio %s (goal <= 0.5); host load %s, test wall time so far %v",
		label, nvmeMedian(b), len(b), nvmeMedian(o), len(o), ratio, hostLoad(), time.Since(started).Round(time.Second))
}

// libBenchTotal reads "BENCH tool-N connect disconnect total left=0 ...":
// the total, or false for a FAILED round or one that left something.
func libBenchTotal(f []string) (float64, bool) {
	if len(f) < 6 || f[5] != "left=0" {
		return 0, false
	}
	for _, s := range f[2:4] {
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return 0, false
		}
	}
	v, err := strconv.ParseFloat(f[4], 64)
	return v, err == nil
}

// libBenchShell defines bench_rounds, the rounds both scripts run. The
// caller defines bench_left (prints how many mappings or mounts are left)
// and bench_clean (removes them, after a round that left some).
const libBenchShell = `
bench_secs() { # T0 T1 ($EPOCHREALTIME values): seconds between, builtins only
	local d=$((10#${2/./} - 10#${1/./}))
	printf '%d.%03d' $((d / 1000000)) $((d % 1000000 / 1000))
}
bench_tail() { tail -n 1 "$1" 2>/dev/null | tr -s '[:space:]' ' ' | cut -c1-300; }
# bench_after TOOL-N: the line's tail: what is left, the guest's load.
bench_after() {
	local left; left=$(bench_left)
	printf 'left=%s load=%s' "$left" "$(cut -d' ' -f1 /proc/loadavg)"
	((left == 0)) || bench_clean
}
# bench_rounds KIND INFO [BRICK CONNECT FLAGS...]: BENCH_ROUNDS interleaved
# rounds, one line each: "BENCH brick-N connect disconnect total left=N
# load=L" and the same for os-brick-N, or "BENCH TOOL-N FAILED why".
bench_rounds() {
	local kind=$1 info=$2 i t0 t1 t2 line c d ok=0 in out pid
	shift 2
	mkdir -p /tmp/osbrick-locks /tmp/osbrick-mnt
	coproc OSB { exec /usr/bin/python3 /brick/osbrick.py "$kind" "$info" /tmp/osbrick-locks /tmp/osbrick-mnt 2>osbrick-bench.err; }
	# Copies of its fds, as bash unsets OSB when the process ends; the
	# originals closed, so that closing "in" ends its input.
	exec {in}>&"${OSB[1]}" {out}<&"${OSB[0]}"
	eval "exec ${OSB[1]}>&- ${OSB[0]}<&-"
	pid=$OSB_PID
	# Its imports take a minute under TCG, untimed, before the first round.
	read -r -t 600 line <&"$out" && [[ $line == *ready* ]] && ok=1
	# A driver that died fails its rounds instead of killing this shell.
	trap '' PIPE
	for ((i = 1; i <= BENCH_ROUNDS; i++)); do
		t0=$EPOCHREALTIME
		if $B connect --connection-info "$info" "$@" -f json >bench-dev.json 2>bench-brick.err; then
			t1=$EPOCHREALTIME
			if $B disconnect --connection-info "$info" --device-info bench-dev.json 2>bench-brick.err; then
				t2=$EPOCHREALTIME
				echo "BENCH brick-$i $(bench_secs $t0 $t1) $(bench_secs $t1 $t2) $(bench_secs $t0 $t2) $(bench_after)"
			else
				echo "BENCH brick-$i FAILED disconnect: $(bench_tail bench-brick.err) $(bench_after)"
			fi
		else
			echo "BENCH brick-$i FAILED connect: $(bench_tail bench-brick.err) $(bench_after)"
		fi
		line=""
		if ((ok)) && echo round >&"$in" && read -r -t 900 line <&"$out" &&
			c=$(jq -er .connect <<<"$line" 2>/dev/null) && d=$(jq -er .disconnect <<<"$line" 2>/dev/null); then
			echo "BENCH os-brick-$i $(printf '%.3f %.3f %.3f' "$c" "$d" "$(jq -n "$c + $d")") $(bench_after) $(jq -c 'del(.connect, .disconnect)' <<<"$line")"
		else
			[[ -n $line ]] || ok=0
			echo "BENCH os-brick-$i FAILED ${line:-no answer} $(bench_tail osbrick-bench.err) $(bench_after)"
		fi
	done
	exec {in}>&- {out}<&-
	trap - PIPE
	wait "$pid" 2>/dev/null || true
}
`
