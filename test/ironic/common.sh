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
# The cinder storage interface attaches boot volumes at this noauth Cinder.
CINDER_PORT=${BRICK_TB_CINDER_PORT:-8776}
CINDER_URL=http://127.0.0.1:$CINDER_PORT/v3
MAX_LIMIT=${BRICK_TB_IRONIC_MAX_LIMIT:-1000}
DEBUG=${BRICK_TB_DEBUG:-0}
START_TIMEOUT=${BRICK_TB_IRONIC_TIMEOUT:-120}

LOGS=$STATE/logs
CONF=$STATE/ironic.conf
ENV_FILE=$STATE/env
PID_FILE=$STATE/ironic.pid
DIST=$STATE/dist

log() { echo "ironic: $*" >&2; }

# shellcheck source=test/lib/service.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/service.sh"
