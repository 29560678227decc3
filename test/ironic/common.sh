# Shared by test/ironic/up.sh and test/ironic/down.sh (sourced, not run).

# shellcheck shell=bash

# Debian's interpreter: the python3 first on PATH may be a pyenv build that
# cannot import Debian's ironic packages.
PY=/usr/bin/python3

IRONIC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# noauth, or keystone: behind keystonemiddleware, validating tokens at the
# test bed Keystone (its own state dir and port by default, so that both
# Ironics can run side by side).
AUTH=${BRICK_TB_IRONIC_AUTH:-noauth}
KEYSTONE_PORT=${BRICK_TB_KEYSTONE_PORT:-5000}
if [[ $AUTH == keystone ]]; then
  STATE=${BRICK_TB_IRONIC_STATE:-/var/tmp/brick-testbed/ironic-keystone}
  API_PORT=${BRICK_TB_IRONIC_PORT:-6386}
else
  STATE=${BRICK_TB_IRONIC_STATE:-/var/tmp/brick-testbed/ironic}
  API_PORT=${BRICK_TB_IRONIC_PORT:-6385}
fi
MAX_LIMIT=${BRICK_TB_IRONIC_MAX_LIMIT:-1000}
DEBUG=${BRICK_TB_DEBUG:-0}
START_TIMEOUT=${BRICK_TB_IRONIC_TIMEOUT:-120}

LOGS=$STATE/logs
CONF=$STATE/ironic.conf
ENV_FILE=$STATE/env
PID_FILE=$STATE/ironic.pid
DIST=$STATE/dist

log() { echo "ironic: $*" >&2; }

# alive PIDFILE WORD: true when the pid in PIDFILE runs and its command line
# contains WORD (guards against a recycled pid).
alive() {
  local pid
  [[ -s $1 ]] || return 1
  pid=$(<"$1")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [[ -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$2"
}

# stop_all: SIGTERM the process group up.sh started with setsid, SIGKILL
# what is left after 15 s. Caller holds the lock.
stop_all() {
  local pid i
  if alive "$PID_FILE" "$CONF"; then
    pid=$(<"$PID_FILE")
    kill -TERM -- "-$pid" 2>/dev/null || true
    for ((i = 0; i < 150; i++)); do
      kill -0 -- "-$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 -- "-$pid" 2>/dev/null; then
      log "process group $pid ignored SIGTERM for 15s; sending SIGKILL"
      kill -KILL -- "-$pid" 2>/dev/null || true
      sleep 0.2
    fi
  fi
  rm -f "$PID_FILE" "$ENV_FILE"
}

# take_lock: one up.sh/down.sh at a time per state dir.
take_lock() {
  mkdir -p "$STATE"
  exec 9>"$STATE/.lock"
  if ! flock -w 600 9; then
    log "could not lock $STATE/.lock within 600s"
    exit 1
  fi
}
