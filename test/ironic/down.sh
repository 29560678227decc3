#!/usr/bin/env bash
# Stops the Ironic that test/ironic/up.sh started (its process group, from the
# pid file in the state dir). A no-op when nothing runs.
#
# Settings: BRICK_TB_IRONIC_STATE (default /var/tmp/brick-testbed/ironic).
set -euo pipefail

# shellcheck source=test/ironic/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

service_down
