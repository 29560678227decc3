# Shared by test/barbican/up.sh and test/barbican/down.sh (sourced, not run).

# shellcheck shell=bash

# The process helpers (alive, stop_all, take_lock) are Keystone's: they read
# PID_FILE, CONF, STATE and log, which are set to Barbican's below.
# shellcheck source=test/keystone/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../keystone/common.sh"

BARBICAN_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

STATE=${BRICK_TB_BARBICAN_STATE:-/var/tmp/brick-testbed/barbican}
API_PORT=${BRICK_TB_BARBICAN_PORT:-9311}
DEBUG=${BRICK_TB_DEBUG:-0}
START_TIMEOUT=${BRICK_TB_BARBICAN_TIMEOUT:-120}

LOGS=$STATE/logs
CONF=$STATE/barbican.conf
ENV_FILE=$STATE/env
PID_FILE=$STATE/barbican.pid

log() { echo "barbican: $*" >&2; }
