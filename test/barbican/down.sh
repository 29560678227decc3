#!/usr/bin/env bash
# Stops the Barbican that test/barbican/up.sh started (its process group,
# from the pid file in the state dir). A no-op when nothing runs.
#
# Settings: BRICK_TB_BARBICAN_STATE (default /var/tmp/brick-testbed/barbican).
set -euo pipefail

# shellcheck source=test/barbican/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

service_down
