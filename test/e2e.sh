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
# The summary lines go to the console; everything else stays in the log.
grep -E '^(\s*--- (PASS|FAIL|SKIP)|PASS$|FAIL|ok |panic:)' "$log" || true
if ((rc != 0)); then
  echo "--- e2e failed (rc=$rc); last 150 lines of $log:"
  tail -n 150 "$log"
fi
echo "e2e: $((SECONDS - start)) s"
exit "$rc"
