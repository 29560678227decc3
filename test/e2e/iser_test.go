//go:build e2e

package e2e

// iSER proofs in a real kernel: the shared guest runs soft-RoCE on both
// NICs, LIO with iSER portals on both addresses and open-iscsi's iser
// interface, and the brick binary built from this tree attaches over one
// portal and over two through dm-multipath, fails over with one path down
// under O_DIRECT reads, and detaches leaving nothing (iser_proofs.sh).
// With BRICK_BENCH=1 the same boot also times brick over iSER and over TCP
// (the same LIO target) and os-brick in-process over iSER, interleaved
// (BRICK_BENCH_ISER_ROUNDS rounds, default 3).
//
//	go test -tags e2e -run TestISER -v ./test/e2e/

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brick-storage/brick/internal/testbed/guest"
)

func TestISER(t *testing.T) {
	lane(t, laneGuestOnly)
	sharedGuest.prestart()
	script, err := os.ReadFile("iser_proofs.sh")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	timeout := 5 * time.Minute
	if os.Getenv("BRICK_BENCH") != "" {
		rounds := benchInt("BRICK_BENCH_ISER_ROUNDS", 3)
		env["BENCH_ROUNDS"] = strconv.Itoa(rounds)
		timeout += time.Duration(rounds) * 10 * time.Minute
	}
	files := map[string]string{
		buildBrick(t):                  "brick",
		buildTool(t, "directreader"):   "directreader",
		"../../bench/iscsi/osbrick.py": "osbrick.py",
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+10*time.Minute)
	defer cancel()
	res, err := runSmokeGuest(t, ctx, guest.Options{
		Script:   string(script),
		Files:    files,
		Env:      env,
		Timeout:  timeout,
		ShareDir: guestShare(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	reportChecks(t, res, "BENCH ")
}

// reportChecks turns a proofs script's "PASS name facts" and "FAIL name:
// why" lines into one subtest each, so a failure names what broke, and
// logs the lines starting with logPrefix ("" for none). A script that
// failed or ran no check fails the test with its output.
func reportChecks(t *testing.T, res *guest.Result, logPrefix string) {
	t.Helper()
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(res.Output))
	for sc.Scan() {
		line := sc.Text()
		if logPrefix != "" && strings.HasPrefix(line, logPrefix) {
			t.Log(line)
			continue
		}
		verdict, rest, ok := strings.Cut(line, " ")
		if !ok || (verdict != "PASS" && verdict != "FAIL") {
			continue
		}
		seen++
		name, detail, _ := strings.Cut(rest, " ")
		name = strings.TrimSuffix(name, ":")
		t.Run(name, func(t *testing.T) {
			if verdict == "FAIL" {
				t.Fatal(detail)
			}
			t.Log(detail)
		})
	}
	if res.ExitCode != 0 || seen == 0 {
		t.Fatalf("guest script exited %d after %d checks; output:\n%s", res.ExitCode, seen, res.Output)
	}
}
