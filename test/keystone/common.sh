# Shared by test/keystone/up.sh and test/keystone/down.sh (sourced, not run).

# shellcheck shell=bash

# Debian's interpreter: the python3 first on PATH may be a pyenv build that
# cannot import Debian's keystone packages.
PY=/usr/bin/python3

KEYSTONE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

STATE=${BRICK_TB_KEYSTONE_STATE:-/var/tmp/brick-testbed/keystone}
API_PORT=${BRICK_TB_KEYSTONE_PORT:-5000}
TOKEN_EXPIRATION=${BRICK_TB_KEYSTONE_TOKEN_EXPIRATION:-3600}
DEBUG=${BRICK_TB_DEBUG:-0}
START_TIMEOUT=${BRICK_TB_KEYSTONE_TIMEOUT:-120}

LOGS=$STATE/logs
CONF=$STATE/keystone.conf
ENV_FILE=$STATE/env
PID_FILE=$STATE/keystone.pid
DIST=$STATE/dist

log() { echo "keystone: $*" >&2; }

# shellcheck source=test/lib/service.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/service.sh"
