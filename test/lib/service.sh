# Process helpers of the test bed's services (sourced by test/*/common.sh).
# The caller sets STATE, CONF, PID_FILE and ENV_FILE and defines log; a
# service with more than one process group (Cinder) redefines stop_all and
# service_alive after sourcing this.

# shellcheck shell=bash

# alive PIDFILE WORD: true when the pid in PIDFILE runs and its command line
# contains WORD (guards against a recycled pid after a reboot or crash).
alive() {
  local pid
  [[ -s $1 ]] || return 1
  pid=$(<"$1")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [[ -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$2"
}

# running PID: the process exists and is not a zombie. Right after a
# background start its command line may still be bash's (fork before exec),
# so start-up checks use this rather than alive.
running() {
  local st
  st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $st && $st != Z && $st != X ]]
}

# daemon LOGFILE CMD...: starts CMD in a session of its own, output appended
# to LOGFILE, and prints its pid. Every descriptor beyond stdio is closed
# first: a service outlives the run that started it, and must not keep a
# lock that run's caller holds (a flock around test/e2e.sh, the guest slot).
daemon() {
  local logfile=$1
  shift
  (
    local fd
    for fd in /proc/"$BASHPID"/fd/*; do
      fd=${fd##*/}
      if [[ $fd =~ ^[0-9]+$ ]] && ((fd > 2)); then
        eval "exec $fd>&-"
      fi
    done
    exec setsid "$@" >>"$logfile" 2>&1 </dev/null
  ) &
  echo $!
}

# stop_group PIDFILE WORD SECONDS: SIGTERM the process group the pid leads
# (started with setsid, so the group holds exactly what it forked), then
# SIGKILL whatever is left after SECONDS.
stop_group() {
  local pidfile=$1 word=$2 secs=$3 pid i
  if ! alive "$pidfile" "$word"; then
    rm -f "$pidfile"
    return 0
  fi
  pid=$(<"$pidfile")
  kill -TERM -- "-$pid" 2>/dev/null || true
  for ((i = 0; i < secs * 10; i++)); do
    kill -0 -- "-$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 -- "-$pid" 2>/dev/null; then
    log "process group $pid ignored SIGTERM for ${secs}s; sending SIGKILL"
    kill -KILL -- "-$pid" 2>/dev/null || true
    sleep 0.2
  fi
  rm -f "$pidfile"
}

# stop_all: stops what up.sh started. Caller holds the lock.
stop_all() {
  stop_group "$PID_FILE" "$CONF" 15
  rm -f "$ENV_FILE"
}

# service_alive: whether anything up.sh started still runs.
service_alive() { alive "$PID_FILE" "$CONF"; }

# take_lock: one up.sh/down.sh at a time per state dir (parallel `go test`
# processes may call them together).
take_lock() {
  mkdir -p "$STATE"
  exec 9>"$STATE/.lock"
  if ! flock -w 600 9; then
    log "could not lock $STATE/.lock within 600s"
    exit 1
  fi
}

# service_down: the whole of a down.sh; a no-op when nothing runs.
service_down() {
  if [[ ! -d $STATE ]]; then
    log "nothing to stop ($STATE does not exist)"
    return 0
  fi
  take_lock
  if ! service_alive; then
    stop_all # clears stale pid files
    log "nothing running"
    return 0
  fi
  stop_all
  log "stopped"
}
