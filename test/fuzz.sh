#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME each (default 10s), one
# after another, and prints one line per target (package, target, execs,
# result) and the totals. A crash fails the run; Go writes the input that
# crashed to the package's testdata/fuzz/<target>/ for the corpus.
#
#   test/fuzz.sh            # every target, 10 s each
#   FUZZTIME=60s test/fuzz.sh ./connector/...
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-10s}
pkgs=("${@:-./...}")
total=0 failed=0 n=0 t0=$SECONDS
while read -r pkg; do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		n=$((n + 1))
		out=$(go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" 2>&1) && result=ok || result=
		# Go's fuzzer can end a run with "context deadline exceeded" and no
		# failing input when a worker is mid-input at -fuzztime on a busy
		# machine: not a finding; run the target once more.
		if [[ -z $result ]] && grep -q 'context deadline exceeded' <<<"$out" && ! grep -qi 'failing input' <<<"$out"; then
			out=$(go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" 2>&1) && result="ok (second run)" || result=
		fi
		if [[ -n $result ]]; then
			:
		else
			result=FAIL
			failed=$((failed + 1))
			printf '%s\n' "$out" | tail -20 >&2
		fi
		# The last progress line carries the count: "execs: 12345 (...)".
		execs=$(printf '%s\n' "$out" | grep -o 'execs: [0-9]*' | tail -1 | cut -d' ' -f2)
		execs=${execs:-0}
		total=$((total + execs))
		printf '%-50s %-36s %10s %s\n' "${pkg#github.com/brick-storage/brick/}" "$target" "$execs" "$result"
	done
done < <(go list "${pkgs[@]}")
echo "fuzz: $n targets, $fuzztime each, $total execs in $((SECONDS - t0)) s, $failed failed"
((failed == 0))
