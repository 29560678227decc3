#!/usr/bin/env bash
# Times `brick get-connector` against os-brick's get_connector_properties
# (Debian's python3-os-brick), interleaved in one run, and prints medians,
# the ratio and peak RSS. Usage: bench/get-connector.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}

bash test/install.sh >/dev/null
out=bench/results
mkdir -p "$out"
# Built as the Makefile builds it (static, stripped).
CGO_ENABLED=0 go build -tags nocsi -trimpath -ldflags "-s -w" -o "$out/brick" ./cmd/brick
go build -o "$out/compare" ./bench/compare

# os-brick is given the ip (as Nova passes CONF.my_ip); brick finds its own.
osbrick=(/usr/bin/python3 -c 'import json
from os_brick.initiator import connector
print(json.dumps(connector.get_connector_properties("", "127.0.0.1", False, False)))')

# os-brick's privsep-helper outlives it by 3-4 s: wait for it, untimed.
"$out/compare" -header -label get-connector -runs "$runs" -wait-gone 'privsep_context os_brick' -- "$out/brick" get-connector -f json :: "${osbrick[@]}"
