#!/usr/bin/env bash
# Stops the Keystone that test/keystone/up.sh started (its process group,
# from the pid file in the state dir). A no-op when nothing runs.
#
# Settings: BRICK_TB_KEYSTONE_STATE (default /var/tmp/brick-testbed/keystone).
set -euo pipefail

# shellcheck source=test/keystone/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

service_down
