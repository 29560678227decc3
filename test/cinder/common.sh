# Shared by test/cinder/up.sh and test/cinder/down.sh (sourced, not run).
# Settings come from the environment so that Go tests (internal/testbed) and
# people use the same knobs; every default is what a plain `up.sh` gives.

# shellcheck shell=bash

# Debian's interpreter: the python3 first on PATH may be a pyenv build that
# cannot import Debian's cinder packages.
PY=/usr/bin/python3

CINDER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

STATE=${BRICK_TB_CINDER_STATE:-/var/tmp/brick-testbed/cinder}
API_PORT=${BRICK_TB_CINDER_PORT:-8776}
# Keystone mode: the same Cinder behind keystonemiddleware on this port (0:
# off), validating tokens at the test bed Keystone's port.
KEYSTONE_API_PORT=${BRICK_TB_CINDER_KEYSTONE_PORT:-8786}
KEYSTONE_PORT=${BRICK_TB_KEYSTONE_PORT:-5000}
TARGET_IP=${BRICK_TB_TARGET_IP:-127.0.0.1}
SECONDARY_IPS=${BRICK_TB_SECONDARY_IPS:-}
TARGET_PORT=${BRICK_TB_TARGET_PORT:-3260}
# tgtd's real listen address. Loopback only: nothing off this host may log in,
# and a qemu guest's slirp NICs deliver 10.0.2.2 / 10.0.3.2 here anyway.
TGT_LISTEN=${BRICK_TB_TGT_LISTEN:-127.0.0.1}
# A hex id, because a stock Cinder only routes hex project ids (the test
# config also accepts names, but tests should not depend on that).
PROJECT_ID=${BRICK_TB_PROJECT_ID:-00000000000000000000000000000000}
USER_ID=${BRICK_TB_USER_ID:-brick}
DEBUG=${BRICK_TB_DEBUG:-0}
START_TIMEOUT=${BRICK_TB_CINDER_TIMEOUT:-180}

# NVMe/TCP instead of iSCSI: "old" or "new" connection info from the
# guest-served nvmet target (brick_tb_driver.GuestNVMeT), whose export
# records go to NVMET_DIR; "off" (the default) is the tgt iSCSI backend.
NVMEOF=${BRICK_TB_NVMEOF:-off}
# Key manager of encrypted volume types: fixed (a standalone Cinder's fixed
# key, FIXED_KEY, key ID all zeros), barbican (test/barbican/up.sh; needs
# Keystone tokens, so only requests through Keystone can create them) or
# both (the default; brick_tb_keymgr.py: the fixed key for requests through
# the noauth API, Barbican for requests through Keystone).
KEY_MANAGER=${BRICK_TB_CINDER_KEY_MANAGER:-both}
FIXED_KEY=627269636b2d74622d66697865642d6b65792d30313233343536373839616263
NVMET_DIR=${BRICK_TB_NVMET_DIR:-/var/tmp/brick-testbed/nvmet-share/exports}
case $NVMEOF in
  off | old | new) ;;
  *) echo "cinder: BRICK_TB_NVMEOF must be off, old or new, not '${NVMEOF}'" >&2; exit 2 ;;
esac

case ${BRICK_TB_CHAP:-1} in
  1 | true | True | yes | on) CHAP=1 ;;
  0 | false | False | no | off) CHAP=0 ;;
  *) echo "cinder: BRICK_TB_CHAP must be 1 or 0, not '${BRICK_TB_CHAP}'" >&2; exit 2 ;;
esac

LOGS=$STATE/logs
DATA=$STATE/volumes        # one sparse backing file per volume: volume-<id>
TGT_DIR=$STATE/tgt         # Cinder's per-volume tgt target files (volumes_dir)
DIST=$STATE/dist           # files taken from the cinder-common .deb, kept across runs
CONF=$STATE/cinder.conf
ENV_FILE=$STATE/env
LAUNCHER_PID=$STATE/cinder.pid
TGTD_PID=$STATE/tgtd.pid
# tgt-admin only reads /etc/tgt/targets.conf, which includes conf.d/*.conf;
# this file makes it also read the target files Cinder writes.
TGT_INCLUDE=/etc/tgt/conf.d/brick-testbed-cinder.conf

log() { echo "cinder: $*" >&2; }

# shellcheck source=test/lib/service.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/service.sh"

# stop_tgtd: tgtd ignores SIGTERM; it exits when told to through its control
# socket, after its targets are gone.
stop_tgtd() {
  local pid i
  if ! alive "$TGTD_PID" tgtd; then
    rm -f "$TGTD_PID"
    return 0
  fi
  pid=$(<"$TGTD_PID")
  # --force: drop targets even if an initiator is still logged in.
  tgt-admin --delete ALL --force >/dev/null 2>&1 || true
  tgtadm --op delete --mode system >/dev/null 2>&1 || true
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "tgtd $pid did not exit; sending SIGKILL"
    kill -KILL -- "-$pid" 2>/dev/null || true
    sleep 0.2
  fi
  rm -f "$TGTD_PID"
}

# stop_all, service_alive: Cinder's launcher and the tgtd it serves.
# stop_all stops exactly what up.sh started, newest first. Caller holds the lock.
stop_all() {
  stop_group "$LAUNCHER_PID" "$CONF" 15
  stop_tgtd
  rm -f "$TGT_INCLUDE" "$ENV_FILE"
}

service_alive() { alive "$LAUNCHER_PID" "$CONF" || alive "$TGTD_PID" tgtd; }
