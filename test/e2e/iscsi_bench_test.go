//go:build e2e

package e2e

// The iSCSI benchmark of bench/iscsi: brick against os-brick (in-process and
// as whole processes) in one guest boot, on one target, interleaved, plus
// the number of commands each starts. Opt-in (it adds a few minutes):
//
//	BRICK_BENCH=1 go test -tags e2e -run TestISCSIBenchmark -v -timeout 100m ./test/e2e/

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brick-storage/brick/internal/testbed/guest"
)

func TestISCSIBenchmark(t *testing.T) {
	if os.Getenv("BRICK_BENCH") == "" {
		t.Skip("set BRICK_BENCH=1 to run the iSCSI benchmark")
	}
	rounds := 5
	if n, err := strconv.Atoi(os.Getenv("BRICK_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	brick := buildBrick(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Minute)
	defer cancel()
	res, err := runGuest(t, ctx, guest.Options{
		Script: "bash /brick/bench.sh /brick/brick /brick/osbrick.py " + strconv.Itoa(rounds),
		Files: map[string]string{
			brick:                          "brick",
			"../../bench/iscsi/bench.sh":   "bench.sh",
			"../../bench/iscsi/osbrick.py": "osbrick.py",
		},
		Timeout: 80 * time.Minute, // each whole os-brick process took 36-121 s under TCG
	})
	requireSuccess(t, res, err)
	for _, line := range strings.Split(string(res.Output), "\n") {
		if strings.HasPrefix(line, "RUN ") || strings.HasPrefix(line, "MEDIAN ") || strings.HasPrefix(line, "LEFTOVER ") || strings.HasPrefix(line, "EXECVE ") {
			t.Log(line)
		}
	}
}
