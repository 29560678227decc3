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

if [[ ! -d $STATE ]]; then
  log "nothing to stop ($STATE does not exist)"
  exit 0
fi
take_lock
if ! alive "$LAUNCHER_PID" "$CONF" && ! alive "$TGTD_PID" tgtd; then
  stop_all # clears stale pid files and the tgt include
  log "nothing running"
  exit 0
fi
stop_all
log "stopped"
