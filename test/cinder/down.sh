#!/usr/bin/env bash
# Stops what test/cinder/up.sh started, and only that: the launcher's process
# group (api + scheduler + volume + privsep daemons) and the tgtd it started,
# found through the pid files in the state dir. A no-op when nothing runs.
# Volumes and logs stay in the state dir until the next cold start.
#
# Settings: BRICK_TB_CINDER_STATE (default /var/tmp/brick-testbed/cinder).
set -euo pipefail

# shellcheck source=test/cinder/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

service_down
