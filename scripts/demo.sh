#!/usr/bin/env bash
# brick's main job in one command (make demo): on a Debian 12 machine, as
# root, installs what the tests install (test/install.sh, idempotent),
# builds brick, starts the project's standalone Cinder and the real-kernel
# qemu guest, and in the guest attaches a volume with brick local-attach,
# writes and reads it, lists it and detaches it, showing brick's output at
# each step; then stops what it started (test/demo).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $(id -u) != 0 ]]; then
  echo "demo: run as root (it starts tgtd and Cinder and boots a guest)" >&2
  exit 2
fi
start=$(date +%s)
bash test/install.sh
make --no-print-directory build
echo "demo: install and build took $(($(date +%s) - start)) s"
# Take the machine's guest slot before starting Cinder: a test run that
# holds it owns the shared Cinder and stops it when it ends.
source test/guest-slot.sh
guest_slot_acquire "make demo (in $PWD)"
t0=$(date +%s)
go run ./test/demo -brick bin/brick "$@"
echo "demo: done in $(($(date +%s) - t0)) s after the install ($(($(date +%s) - start)) s in all)"
