#!/usr/bin/env bash
# Builds csi-sanity, the CSI drivers' conformance suite
# (github.com/kubernetes-csi/csi-test), once per version, and prints the
# binary's path. Idempotent: a warm run only checks the cached binary (a few
# milliseconds); a cold one builds a static binary from the Go module proxy
# (about 3 minutes on 2 idle cores, 13 under load). test/e2e.sh runs it
# before its tests.
#
# Settings (environment):
#   BRICK_TB_CSI_SANITY_VERSION  csi-test module version       (v5.6.0)
#   BRICK_TB_CSI_SANITY_DIR      cache directory  (/var/tmp/brick-testbed/csi-sanity)
set -euo pipefail

version=${BRICK_TB_CSI_SANITY_VERSION:-v5.6.0}
dir=${BRICK_TB_CSI_SANITY_DIR:-/var/tmp/brick-testbed/csi-sanity}
[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "csi-sanity: bad version '$version'" >&2; exit 2; }
[[ $dir == /* ]] || { echo "csi-sanity: BRICK_TB_CSI_SANITY_DIR must be absolute" >&2; exit 2; }
major=${version%%.*}
bin=$dir/$version/csi-sanity

if [[ -x $bin ]]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$dir"
# Two suites starting at once build it once: the second waits, then finds it.
exec 9>"$dir/install.lock"
flock -w 600 9 || { echo "csi-sanity: $dir/install.lock still held after 600 s" >&2; exit 1; }
if [[ -x $bin ]]; then
  echo "$bin"
  exit 0
fi
command -v go >/dev/null || { echo "csi-sanity: go not found on PATH" >&2; exit 1; }
tmp=$(mktemp -d "$dir/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "csi-sanity: building $version (once; about 3 minutes)" >&2
start=$SECONDS
# Static: it runs inside the qemu guest, whatever libc the guest sees.
if ! CGO_ENABLED=0 GOBIN=$tmp go install \
  "github.com/kubernetes-csi/csi-test/$major/cmd/csi-sanity@$version" >"$tmp/build.log" 2>&1; then
  cat "$tmp/build.log" >&2
  echo "csi-sanity: go install failed" >&2
  exit 1
fi
mkdir -p "$dir/$version"
mv "$tmp/csi-sanity" "$bin"
echo "csi-sanity: built in $((SECONDS - start)) s" >&2
echo "$bin"
