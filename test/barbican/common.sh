# Shared by test/barbican/up.sh and test/barbican/down.sh (sourced, not run).

# shellcheck shell=bash

# shellcheck source=test/lib/service.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/service.sh"

# Debian's interpreter: the python3 first on PATH may be a pyenv build that
# cannot import Debian's barbican packages.
PY=/usr/bin/python3

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
