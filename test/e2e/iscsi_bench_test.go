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
	"strconv"
	"strings"
	"testing"
	"time"

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
