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
#
# Waiters queue first come, first served: each puts a ticket into the
# directory beside the lock, named "<µs since the epoch, 20 digits>-<pid>-
# <pid's start time>" and holding its line, and only the oldest ticket of a
# live process tries the lock (flock alone let later runs overtake).
# Tickets of ended processes are removed by whoever sees them. The Go side
# (internal/testbed/guest/slot.go) queues in the same directory.

guest_slot_lock=${BRICK_GUEST_SLOT_LOCK:-/run/lock/brick-testbed-guest.lock}
# Seconds between a waiter's tries (the unit tests of the queue wait less).
guest_slot_poll=${BRICK_GUEST_SLOT_POLL:-1}
[[ $guest_slot_poll =~ ^[0-9]+(\.[0-9]+)?$ ]] || guest_slot_poll=1
guest_slot_queue=$guest_slot_lock.queue

# guest_slot_stat PID: /proc/PID/stat's fields after the command name into
# the array guest_slot_f (field 3, the state, first); fails quietly when the
# process is gone, even mid-read.
guest_slot_stat() {
  local stat
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  [[ $stat == *') '* ]] || return 1
  read -ra guest_slot_f <<<"${stat##*) }"
}

# guest_slot_ancestor_holds: a caller wrapping this run in `flock <same
# path>` holds the slot for it; waiting would deadlock. Ancestors that exit
# during the walk end it.
guest_slot_ancestor_holds() {
  local want p=$PPID fd hops=0
  want=$(readlink -f "$guest_slot_lock") || return 1
  while [[ $p =~ ^[0-9]+$ ]] && ((p > 1 && hops++ < 64)); do
    for fd in /proc/"$p"/fd/*; do
      [[ $(readlink "$fd" 2>/dev/null) == "$want" ]] && return 0
    done
    guest_slot_stat "$p" || return 1
    p=${guest_slot_f[1]-}
  done
  return 1
}

# guest_slot_ticket PID LINE: puts the ticket of PID (the waiting shell)
# into the queue and prints its path; fails when the queue cannot be
# written (the run then waits unqueued).
guest_slot_ticket() {
  local name
  guest_slot_stat "$1" || return 1
  mkdir -p "$guest_slot_queue" 2>/dev/null || return 1
  chmod 1777 "$guest_slot_queue" 2>/dev/null
  printf -v name '%s/%020d-%d-%s' "$guest_slot_queue" "${EPOCHREALTIME//[!0-9]/}" "$1" "${guest_slot_f[19]-}"
  (set -o noclobber; printf '%s\n' "$2" >"$name") 2>/dev/null || return 1
  echo "$name"
}

# guest_slot_ahead TICKET: the lines of the live tickets before TICKET (all
# of them when TICKET is empty), oldest first, into guest_slot_waiting;
# removes dead tickets on the way. Succeeds when some wait before TICKET.
guest_slot_ahead() {
  local t name pid start LC_ALL=C
  guest_slot_waiting=()
  for t in "$guest_slot_queue"/*; do
    [[ -f $t ]] || continue
    [[ $t == "$1" ]] && break
    name=${t##*/}
    IFS=- read -r _ pid start <<<"$name"
    if [[ ! $pid =~ ^[0-9]+$ ]] || ! guest_slot_stat "$pid" || [[ ${guest_slot_f[19]-} != "$start" ]]; then
      rm -f "$t"
      continue
    fi
    guest_slot_waiting+=("$(head -c 300 "$t" 2>/dev/null)")
  done
  ((${#guest_slot_waiting[@]} > 0))
}

# guest_slot_acquire WHAT: waits for the slot, saying who holds it and how
# long this run waited, then records this shell as the holder.
guest_slot_acquire() {
  local what=$1 from=$SECONDS ticket="" unqueued="" said="" me=$BASHPID
  exec {guest_slot_fd}>>"$guest_slot_lock"
  while :; do
    if ! guest_slot_ahead "$ticket" && flock -n "$guest_slot_fd"; then
      break
    fi
    if guest_slot_ancestor_holds; then
      echo "guest slot: held by a process this run runs under" >&2
      [[ -z $ticket ]] || rm -f "$ticket"
      return 0
    fi
    if [[ -z $ticket && -z $unqueued ]]; then
      ticket=$(guest_slot_ticket "$me" "pid $me waiting since $(date -u +%FT%TZ): $what (in $PWD)") || unqueued=1
    fi
    if [[ -z $said ]]; then
      said="waiting for $guest_slot_lock, held by $(head -c 300 "$guest_slot_lock" 2>/dev/null)"
      if ((${#guest_slot_waiting[@]} > 0)); then
        said+="; ${#guest_slot_waiting[@]} waiting before this run, first ${guest_slot_waiting[0]}"
      fi
      echo "guest slot: $said" >&2
    fi
    # The first in the queue waits in the kernel's queue, beside runs that
    # use flock alone; the others poll.
    if ((${#guest_slot_waiting[@]} == 0)); then
      flock -w "$guest_slot_poll" "$guest_slot_fd" && break
    else
      sleep "$guest_slot_poll"
    fi
  done
  [[ -z $ticket ]] || rm -f "$ticket"
  if ((SECONDS - from > 1)); then
    echo "guest slot: acquired after $((SECONDS - from)) s" >&2
  fi
  # The holder line: guest_slot.go parses the pid to recognise its ancestor.
  printf 'pid %d since %s: %s (in %s)\n' "$$" "$(date -u +%FT%TZ)" "$what" "$PWD" >"$guest_slot_lock"
}
