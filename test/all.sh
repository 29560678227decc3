#!/usr/bin/env bash
# The whole test suite — the README's test command and what CI runs:
# go vet, the unit tests, then the end-to-end suite (which installs the
# Debian packages it needs first). Extra arguments go to the e2e go test.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

start=$SECONDS
go vet ./...
go vet -tags nocsi ./cmd/brick # brick as make builds it (brick csi runs brick-csi)
go test -count=1 ./...
echo "unit: $((SECONDS - start)) s"
bash test/e2e.sh "$@"
echo "whole suite: $((SECONDS - start)) s"
