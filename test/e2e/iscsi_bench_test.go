//go:build e2e

package e2e

// The iSCSI benchmark of bench/iscsi: brick against os-brick (in-process and
// as whole processes) in one guest boot, on one target, interleaved; the
// commands each starts; brick with a dead portal; brick with 64 other LUNs
// attached. Opt-in (it takes 15-40 minutes under TCG):
//
//	BRICK_BENCH=1 go test -tags e2e -run TestISCSIBenchmark -v -timeout 100m ./test/e2e/
//
// Knobs (environment): BRICK_BENCH_ROUNDS (default 5), BRICK_BENCH_CLI_ROUNDS
// (whole-process os-brick rounds, default 1, 0 skips), BRICK_BENCH_DEAD_ROUNDS,
// BRICK_BENCH_SCALE_ROUNDS (default 2, 0 skips), BRICK_BENCH_SCALE_LUNS
// (default 64), BRICK_BENCH_PARTS (default "single mp dead scale"). The output format is described in bench/iscsi/README.md.

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed/guest"
)

// benchPrefixes are the machine-readable lines bench.sh prints (DEBUG:
// brick's --debug log of each multipath round, to place its seconds).
var benchPrefixes = []string{"RUN ", "MEDIAN ", "EXECVE ", "LEFTOVER ", "LOAD ", "DEBUG "}

func benchInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n >= 0 {
		return n
	}
	return def
}

func hostLoad() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func TestISCSIBenchmark(t *testing.T) {
	lane(t, laneServices)
	if os.Getenv("BRICK_BENCH") == "" {
		t.Skip("set BRICK_BENCH=1 to run the iSCSI benchmark")
	}
	rounds := benchInt("BRICK_BENCH_ROUNDS", 5)
	if rounds == 0 {
		rounds = 1
	}
	cli := benchInt("BRICK_BENCH_CLI_ROUNDS", 1)
	env := map[string]string{
		"CLI_ROUNDS":   strconv.Itoa(cli),
		"DEAD_ROUNDS":  strconv.Itoa(benchInt("BRICK_BENCH_DEAD_ROUNDS", rounds)),
		"SCALE_ROUNDS": strconv.Itoa(benchInt("BRICK_BENCH_SCALE_ROUNDS", 2)),
		"SCALE_LUNS":   strconv.Itoa(max(1, benchInt("BRICK_BENCH_SCALE_LUNS", 64))),
	}
	if parts := os.Getenv("BRICK_BENCH_PARTS"); parts != "" {
		env["PARTS"] = parts
	}
	// Without whole-process os-brick a round takes about a minute; each
	// whole os-brick process took 30-120 s under TCG, four per round.
	limit := time.Duration(30+3*rounds+10*cli) * time.Minute
	brick := buildBrick(t)
	ctx, cancel := context.WithTimeout(context.Background(), limit+10*time.Minute)
	defer cancel()
	t.Logf("HOSTLOAD start %s", hostLoad())
	res, err := runGuest(t, ctx, guest.Options{
		Script: "bash /brick/bench.sh /brick/brick /brick/osbrick.py " + strconv.Itoa(rounds),
		Files: map[string]string{
			brick:                          "brick",
			"../../bench/iscsi/bench.sh":   "bench.sh",
			"../../bench/iscsi/osbrick.py": "osbrick.py",
		},
		Env:     env,
		Timeout: limit,
	})
	t.Logf("HOSTLOAD end %s", hostLoad())
	requireSuccess(t, res, err)
	for _, line := range strings.Split(string(res.Output), "\n") {
		for _, p := range benchPrefixes {
			if strings.HasPrefix(line, p) {
				t.Log(line)
				break
			}
		}
	}
}

// localAttachBenchScript times whole commands against the real Cinder
// (issue 27): `brick local-attach` + `local-detach` against
// python-brick-cinderclient-ext's v3 flow (bench/cinderext/localattach.py
// on Debian's cinderclient and os-brick), single path and multipath,
// interleaved, each command under /usr/bin/time for its peak RSS. Then the
// programs each tool starts for one single-path attach and detach.
//
// Output: RUN <mode> <tool> <attach_s> <detach_s> <total_s> <attach_rss_kb>
// <detach_rss_kb> rc=<attach>/<detach> sessions=<n>; EXECVE <tool> <n> <programs>.
const localAttachBenchScript = `
set -uo pipefail
cp /brick/brick /tmp/brick
cp /brick/localattach.py /tmp/localattach.py
B=/tmp/brick
export OS_AUTH_TYPE=noauth BRICK_CONFIG=/dev/null BRICK_CINDER_ENDPOINT=http://10.0.2.2:8776/v3 PROJECT
eval "$("$BRICK_FIXTURES/iscsi.sh")" >/dev/null
echo "LOAD start $(cut -d' ' -f1-3 /proc/loadavg)"
nsessions() { iscsiadm -m session 2>/dev/null | grep -c . || true; }
timed() { # OUT COMMAND...: runs COMMAND, leaves "<seconds> <max RSS KiB> <rc>" in OUT
	local out=$1; shift
	/usr/bin/time -f "%e %M" -o "$out.t" "$@" >"$out.out" 2>"$out.err"
	echo "$(cat "$out.t" | tail -1) $?" >"$out"
}
run() { # MODE TOOL VOLUME
	local mode=$1 tool=$2 vol=$3 mp=()
	[[ $mode == mp ]] && mp=(--multipath)
	if [[ $tool == brick ]]; then
		timed /tmp/a $B local-attach "$vol" --nic eth0 "${mp[@]}" -f json
		timed /tmp/d $B local-detach "$vol" --nic eth0 "${mp[@]}"
	else
		timed /tmp/a /usr/bin/python3 /tmp/localattach.py attach "$vol" "${mp[@]}"
		timed /tmp/d /usr/bin/python3 /tmp/localattach.py detach "$vol" "${mp[@]}"
	fi
	read -r as ar arc </tmp/a
	read -r ds dr drc </tmp/d
	echo "RUN $mode $tool $as $ds $(awk -v a="$as" -v b="$ds" 'BEGIN{printf "%.2f", a+b}') $ar $dr rc=$arc/$drc sessions=$(nsessions)"
	if [[ $arc != 0 || $drc != 0 ]]; then tail -3 /tmp/a.err /tmp/d.err | sed "s/^/ERR $mode $tool /"; fi
}
for ((i = 1; i <= ROUNDS; i++)); do
	for mode in single mp; do
		vol=$VOL_SINGLE
		[[ $mode == mp ]] && vol=$VOL_MP
		run $mode brick "$vol"
		run $mode ext "$vol"
	done
done
execs() { # TOOL COMMAND: the programs COMMAND started, without sh and the tool's own two
	strace -f -qq -e trace=execve -o /tmp/st-$1 sh -c "$3" >/dev/null 2>&1
	local progs; progs=$(grep -E 'execve\(.*= 0$' /tmp/st-$1 | sed -E 's/.*execve\("([^"]*)".*/\1/' |
		awk -v tool="$2" '!sh && $0 ~ /\/sh$/ { sh = 1; next } $0 == tool && n < 2 { n++; next } { print }')
	echo "EXECVE $1 $(printf '%s' "$progs" | grep -c . || true) $(printf '%s\n' "$progs" | xargs -rn1 basename | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}')"
}
execs brick "$B" "$B local-attach $VOL_SINGLE --nic eth0; $B local-detach $VOL_SINGLE --nic eth0"
execs ext /usr/bin/python3 "/usr/bin/python3 /tmp/localattach.py attach $VOL_SINGLE; /usr/bin/python3 /tmp/localattach.py detach $VOL_SINGLE"
echo "LEFT sessions=$(nsessions)"
echo "LOAD end $(cut -d' ' -f1-3 /proc/loadavg)"
echo DONE
`

// TestLocalAttachBenchmark is issue 27's whole-command benchmark (opt-in,
// BRICK_BENCH=1; BRICK_BENCH_LA_ROUNDS rounds, default 3): see
// localAttachBenchScript. It logs one LOCALATTACH line per mode with both
// tools' medians, min/max, the ratio and peak RSS.
func TestLocalAttachBenchmark(t *testing.T) {
	lane(t, laneServices)
	if os.Getenv("BRICK_BENCH") == "" {
		t.Skip("set BRICK_BENCH=1 to run the local-attach benchmark")
	}
	rounds := max(1, benchInt("BRICK_BENCH_LA_ROUNDS", 3))
	c := needCinder(t, guestCinderOptions)
	vs, vm := newVolume(t, c, "brick-bench-la-single"), newVolume(t, c, "brick-bench-la-mp")
	ext, err := filepath.Abs("../../bench/cinderext/localattach.py")
	require.NoError(t, err)
	// One round (four whole Python processes) took 12 minutes under TCG
	// with the host's load at 25.
	limit := time.Duration(15+15*rounds) * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), limit+5*time.Minute)
	defer cancel()
	t.Logf("HOSTLOAD start %s", hostLoad())
	res, err := runGuest(t, ctx, guest.Options{
		Script: localAttachBenchScript, NICs: 2, Timeout: limit,
		Files: map[string]string{buildBrick(t): "brick", ext: "localattach.py"},
		Env:   map[string]string{"PROJECT": c.ProjectID, "VOL_SINGLE": vs.ID, "VOL_MP": vm.ID, "ROUNDS": strconv.Itoa(rounds)},
	})
	t.Logf("HOSTLOAD end %s", hostLoad())
	if res != nil {
		t.Logf("guest output:\n%s", res.Output)
	}
	requireSuccess(t, res, err)
	out := string(res.Output)
	require.Contains(t, out, "\nDONE")
	type agg struct{ total, rss []float64 }
	runs := map[string]*agg{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 10 || f[0] != "RUN" {
			continue
		}
		require.Equal(t, "rc=0/0", f[8], line)
		require.Equal(t, "sessions=0", f[9], "%s left an iSCSI session: %s", f[2], line)
		k := f[1] + " " + f[2]
		if runs[k] == nil {
			runs[k] = &agg{}
		}
		tot, _ := strconv.ParseFloat(f[5], 64)
		ra, _ := strconv.ParseFloat(f[6], 64)
		rd, _ := strconv.ParseFloat(f[7], 64)
		runs[k].total = append(runs[k].total, tot)
		runs[k].rss = append(runs[k].rss, max(ra, rd))
	}
	for _, mode := range []string{"single", "mp"} {
		b, e := runs[mode+" brick"], runs[mode+" ext"]
		require.NotNil(t, b, mode)
		require.NotNil(t, e, mode)
		bm, em := nvmeMedian(b.total), nvmeMedian(e.total)
		t.Logf("LOCALATTACH %s attach+detach median of %d: brick %.2f s (%.2f-%.2f, peak RSS %.1f MB), ext %.2f s (%.2f-%.2f, peak RSS %.1f MB), ratio %.3f",
			mode, len(b.total), bm, slices.Min(b.total), slices.Max(b.total), slices.Max(b.rss)/1024,
			em, slices.Min(e.total), slices.Max(e.total), slices.Max(e.rss)/1024, bm/em)
	}
}
