# Sourced by test/e2e.sh (and usable by any script that boots test guests,
# e.g. bench/run.sh): the machine-wide guest slot. Two TCG guests on 2 cores
# each run at well under half speed and hit their timeouts, so runs queue.
# internal/testbed/guest takes the same lock around each boot and skips it
# when an ancestor process (this script's caller) already holds it.
#
#   source test/guest-slot.sh; guest_slot_acquire "what this run is"
#
# The lock is held until the calling shell exits. BRICK_GUEST_SLOT_LOCK
# overrides the path (keep it the same on one machine, or nothing queues).

guest_slot_lock=${BRICK_GUEST_SLOT_LOCK:-/run/lock/brick-testbed-guest.lock}

# guest_slot_ancestor_holds: a caller wrapping this run in `flock <same
# path>` holds the slot for it; waiting would deadlock.
guest_slot_ancestor_holds() {
  local want p=$PPID fd stat
  want=$(readlink -f "$guest_slot_lock") || return 1
  while ((p > 1)); do
    for fd in /proc/"$p"/fd/*; do
      [[ $(readlink "$fd" 2>/dev/null) == "$want" ]] && return 0
    done
    stat=$(<"/proc/$p/stat") || return 1
    stat=${stat##*) }
    read -r _ p _ <<<"$stat"
  done
  return 1
}

# guest_slot_acquire WHAT: waits for the slot, saying who holds it and how
# long this run waited, then records this shell as the holder.
guest_slot_acquire() {
  local what=$1 from=$SECONDS
  exec {guest_slot_fd}>>"$guest_slot_lock"
  if ! flock -n "$guest_slot_fd" && guest_slot_ancestor_holds; then
    echo "guest slot: held by a process this run runs under" >&2
    return 0
  fi
  if ! flock -n "$guest_slot_fd"; then
    echo "guest slot: waiting for $guest_slot_lock, held by $(head -c 300 "$guest_slot_lock" 2>/dev/null)" >&2
    flock "$guest_slot_fd"
    echo "guest slot: acquired after $((SECONDS - from)) s" >&2
  fi
  # The holder line: guest_slot.go parses the pid to recognise its ancestor.
  printf 'pid %d since %s: %s (in %s)\n' "$$" "$(date -u +%FT%TZ)" "$what" "$PWD" >"$guest_slot_lock"
}
