#!/usr/bin/env bash
# Runs the end-to-end suite: real Cinder and Ironic on this host, brick in a
# qemu guest with Debian's kernel. Installs what it needs first (idempotent).
# Usage: test/e2e.sh [go test args...], e.g. test/e2e.sh -run TestISCSISinglePath
set -euo pipefail
cd "$(dirname "$0")/.."

bash test/install.sh
go vet -tags e2e ./test/e2e/

log=test-e2e.log
start=$SECONDS
set +e
go test -tags e2e -p 1 -count=1 -timeout "${E2E_TIMEOUT:-60m}" -v ./test/e2e/ "$@" >"$log" 2>&1
rc=$?
set -e
if ((rc != 0)); then
  # What failed and why, before the tail: a CI excerpt may keep only the
  # start of this output.
  for t in $(grep -oE '^--- FAIL: [A-Za-z0-9_]+' "$log" | awk '{print $3}'); do
    echo "--- $t: failed assertions"
    awk -v t="$t" '$0 ~ "^=== (RUN|CONT) +"t"($|/)" {on=1} on && /^=== (RUN|CONT) / && $0 !~ " "t"($|/)" {on=0} on' "$log" |
      grep -E -A 14 'Error Trace:|^\s+\S+_test\.go:[0-9]+: .*(fail|FAIL|timed out)' | head -n 120 || true
    echo "--- $t: last 60 lines of its output"
    awk -v t="$t" '$0 ~ "^=== (RUN|CONT) +"t"($|/)" {on=1} on && /^=== (RUN|CONT) / && $0 !~ " "t"($|/)" {on=0} on' "$log" | tail -n 60
  done
  echo "--- e2e failed (rc=$rc); last 40 lines of $log:"
  tail -n 40 "$log"
fi
# The summary lines go to the console; everything else stays in the log.
grep -E '^(\s*--- (PASS|FAIL|SKIP)|PASS$|FAIL|ok |panic:)' "$log" || true

echo "e2e: $((SECONDS - start)) s"
exit "$rc"
