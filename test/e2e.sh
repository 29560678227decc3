#!/usr/bin/env bash
# Runs the end-to-end suite: real Cinder and Ironic on this host, brick in a
# qemu guest with Debian's kernel. Installs what it needs first (idempotent).
#
# Usage: test/e2e.sh [-short] [go test args...]
#   test/e2e.sh                      the whole suite (the CI gate)
#   test/e2e.sh -short               the fast lane: one representative test per
#                                    protocol plus one Cinder and one Ironic
#                                    test (E2E_SHORT_RUN below; docs/testing.md)
#   test/e2e.sh -run TestISCSI       one test alone
#
# The run takes the machine's guest slot (test/guest-slot.sh) for its whole
# length, so two suites, or a suite and bench/run.sh, queue instead of
# sharing 2 cores. The log is test-e2e.log; per-test wall times end the
# console output and go to test-e2e-times.tsv (test, result, seconds).
set -euo pipefail
cd "$(dirname "$0")/.."

# The fast lane's tests (docs/testing.md): iSCSI with multipath and
# failover, FC, NFS, RBD (check 1 only under -short), and local-attach
# --ironic-node for Cinder and Ironic together.
short_run='^(TestISCSI|TestFC|TestNFS|TestRBD|TestLocalAttachIronicNode)$'

# times_table LOG TSV WALL: the top-level tests' wall times from go test -v's
# "--- PASS: TestX (12.34s)" lines, longest first, into TSV (test, result,
# seconds, lane) and as a table with the total on stdout. A test that ran in
# a lane (test/e2e/lanes_test.go) prints "=== LANE <lane> TestX ran 12.34s";
# that time replaces go test's, which counts the wait for the lane too. A
# test that started but never reported (a timeout or panic ended the run) is
# listed as unfinished; with LISTED (the suite's test names, one a line) a
# test that never started is listed as "not run".
times_table() {
  local log=$1 tsv=$2 wall=$3 listed=${4:-/dev/null}
  awk -v listed="$listed" '
    BEGIN { while ((getline l < listed) > 0) if (l ~ /^Test/) want[++w] = l }
    /^=== RUN +Test[^\/ ]+$/ { if (!($3 in res)) { order[++n] = $3; res[$3] = "unfinished"; secs[$3] = "-"; lane[$3] = "-" } }
    /^=== LANE [^ ]+ Test[^\/ ]+ ran [0-9.]+s/ { ran[$4] = $6; sub(/s$/, "", ran[$4]); lanes[$4] = $3 }
    /^--- (PASS|FAIL|SKIP): Test[^\/ ]+ \([0-9.]+s\)$/ {
      name = $3; if (!(name in res)) order[++n] = name
      res[name] = tolower($2); sub(/:$/, "", res[name]); s = $4; gsub(/[()s]/, "", s); secs[name] = s
    }
    END {
      for (i = 1; i <= w; i++) if (!(want[i] in res)) { order[++n] = want[i]; res[want[i]] = "not-run"; secs[want[i]] = "-" }
      for (i = 1; i <= n; i++) {
        t = order[i]
        if (t in ran && res[t] != "unfinished") secs[t] = ran[t]
        printf "%s\t%s\t%s\t%s\n", t, res[t], secs[t], (t in lanes) ? lanes[t] : "-"
      }
    }
  ' "$log" | sort -t$'\t' -k3,3gr >"$tsv.tmp"
  { printf 'test\tresult\tseconds\tlane\n'; cat "$tsv.tmp"; } >"$tsv"
  rm -f "$tsv.tmp"
  echo "--- e2e per-test wall times (longest first; also in $tsv)"
  awk -F'\t' -v wall="$wall" '
    NR > 1 {
      printf "%8s s  %-10s %-36s %s\n", $3, $2, $1, $4
      if ($3 != "-") { sum += $3; k++; busy[$4] += $3; cnt[$4]++ }
    }
    END {
      printf "%8.1f s  total of %d tests (go test wall %d s, with build and service stop)\n", sum, k, wall
      for (l in busy) if (l != "-") printf "%8.1f s  lane %s: %d tests one after the other\n", busy[l], l, cnt[l]
    }
  ' "$tsv"
}

# test_output TEST LOG: TEST's lines of go test -v's output, where the two
# lanes' tests interleave under "=== RUN/CONT/NAME/PAUSE <test>" headers.
test_output() {
  awk -v t="$1" '
    /^=== (RUN|CONT|NAME|PAUSE) / { on = ($0 ~ " "t"($|/)") }
    /^=== LANE / { on = ($4 == t) }
    /^--- (PASS|FAIL|SKIP): / { on = ($3 == t) }
    on' "$2"
}

args=()
for a in "$@"; do
  if [[ $a == -short ]]; then
    args+=(-short -run "${E2E_SHORT_RUN:-$short_run}")
  else
    args+=("$a")
  fi
done

bash test/install.sh
# csi-sanity (TestCSI, TestNVMeoF): built once per machine and cached, so
# its cold build is paid here, before the guest slot, not inside a test.
bash test/csi/install-sanity.sh >/dev/null
go vet -tags e2e ./test/e2e/
# The whole suite's test names, so a run that ends early (a timeout, a
# panic) still shows every test in the table, as "not run".
listed=$(mktemp)
trap 'rm -f "$listed"' EXIT
if [[ " ${args[*]} " != *" -run"[\ =]* ]]; then
  go test -tags e2e -list . ./test/e2e/ >"$listed" 2>/dev/null || true
fi

# shellcheck source=test/guest-slot.sh
source test/guest-slot.sh
guest_slot_acquire "test/e2e.sh ${args[*]}"

log=test-e2e.log
times=test-e2e-times.tsv
start=$SECONDS
set +e
# -parallel 64: the tests of both lanes (test/e2e/lanes_test.go) wait for
# their lane in parallel; a lower limit would let waiting tests hold back the
# other lane. The slot's descriptor is closed for go test: this shell holds the lock for
# the run, and a Cinder or Keystone daemon the tests leave running must not
# inherit it and keep the slot after the run.
go test -tags e2e -p 1 -parallel 64 -count=1 -timeout "${E2E_TIMEOUT:-60m}" -v ./test/e2e/ "${args[@]}" >"$log" 2>&1 {guest_slot_fd}>&-
rc=$?
set -e
wall=$((SECONDS - start))
if ((rc != 0)); then
  # What failed and why, before the tail: a CI excerpt may keep only the
  # start of this output.
  for t in $(grep -oE '^--- FAIL: [A-Za-z0-9_]+' "$log" | awk '{print $3}'); do
    echo "--- $t: failed assertions"
    test_output "$t" "$log" |
      grep -E -A 14 'Error Trace:|^\s+\S+_test\.go:[0-9]+: .*(fail|FAIL|timed out)' | head -n 120 || true
    echo "--- $t: last 60 lines of its output"
    test_output "$t" "$log" | tail -n 60
  done
  echo "--- e2e failed (rc=$rc); last 40 lines of $log:"
  tail -n 40 "$log"
fi
# The summary lines go to the console; everything else stays in the log.
grep -E '^(\s*--- (PASS|FAIL|SKIP)|PASS$|FAIL|ok |panic:)' "$log" || true

times_table "$log" "$times" "$wall" "$listed" | tee -a "$log"
echo "e2e: $wall s"
exit "$rc"
