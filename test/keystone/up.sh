#!/usr/bin/env bash
# Starts a real Keystone for brick's tests: Debian's python3-keystone (Zed),
# one process serving the public WSGI app on 127.0.0.1, sqlite in WAL mode,
# fernet tokens. The database (keystone-manage bootstrap plus the catalog and
# users of seed.py) and the keys are built once and cached under
# $STATE/dist; a cold start copies them and only starts the server.
#
# Idempotent: when it already runs with the same settings this is a fast
# no-op; with different settings it restarts. Prints the env file (KEY=VALUE)
# on stdout; progress goes to stderr. Needs test/install.sh to have run.
#
# Settings (environment):
#   BRICK_TB_KEYSTONE_STATE             state dir (/var/tmp/brick-testbed/keystone)
#   BRICK_TB_KEYSTONE_PORT              API port on 127.0.0.1             (5000)
#   BRICK_TB_KEYSTONE_TOKEN_EXPIRATION  token lifetime in seconds         (3600)
#   BRICK_TB_KEYSTONE_KEEP              1: keep the database across a restart (0)
#   BRICK_TB_DEBUG                      1: debug logging                  (0)
#   BRICK_TB_KEYSTONE_TIMEOUT           seconds to wait for readiness     (120)
#   BRICK_TB_STARTER                    caller's token, recorded in the env file as
#                                       BRICK_TB_KEYSTONE_STARTED_BY by a cold start only
set -euo pipefail

# shellcheck source=test/keystone/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

started_at=$(date +%s.%N)
fail() {
  log "$*"
  exit 1
}
elapsed() { awk -v a="$started_at" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

[[ $API_PORT =~ ^[0-9]+$ ]] && ((API_PORT > 0 && API_PORT < 65536)) || fail "bad BRICK_TB_KEYSTONE_PORT '$API_PORT'"
[[ $TOKEN_EXPIRATION =~ ^[0-9]+$ ]] || fail "BRICK_TB_KEYSTONE_TOKEN_EXPIRATION must be a number of seconds"
[[ $STATE == /* ]] || fail "BRICK_TB_KEYSTONE_STATE must be an absolute path"
STARTER=${BRICK_TB_STARTER:-manual}
[[ $STARTER =~ ^[0-9A-Za-z_-]+$ ]] || fail "BRICK_TB_STARTER must be a plain token"
case $DEBUG in 1 | true) debug=true ;; *) debug=false ;; esac

take_lock
mkdir -p "$LOGS"

text=$(<"$KEYSTONE_DIR/keystone.conf.in")
text=${text//@STATE@/$STATE}
text=${text//@TOKEN_EXPIRATION@/$TOKEN_EXPIRATION}
text=${text//@DEBUG@/$debug}
printf '%s\n' "$text" >"$CONF.new"

api_url=http://127.0.0.1:$API_PORT

# The seeded database and keys depend on the code, the seed, the port (the
# identity endpoints name it) and nothing else in the config.
seed_key=$( (
  dpkg-query -W -f='${Version}' python3-keystone
  echo "$API_PORT"
  cat "$KEYSTONE_DIR/seed.py" "$KEYSTONE_DIR/keystone.conf.in"
) | sha256sum | cut -c1-16)
seed=$DIST/seed-$seed_key

api_answers() {
  local code
  code=$(curl -s -o /dev/null -m 3 -w '%{http_code}' "$api_url/v3" || true)
  [[ $code == 200 ]]
}

write_env() {
  {
    echo "# Written by test/keystone/up.sh; KEY=VALUE lines (source with: set -a; . $ENV_FILE)."
    echo "# openstackclient: OS_AUTH_URL=\$BRICK_TB_KEYSTONE_AUTH_URL OS_USERNAME=... OS_PASSWORD=... OS_PROJECT_NAME=brick"
    cat "$STATE/seed.env"
    echo "BRICK_TB_KEYSTONE_TOKEN_EXPIRATION=$TOKEN_EXPIRATION"
    echo "BRICK_TB_KEYSTONE_SEED=$seed_key"
    echo "BRICK_TB_KEYSTONE_STATE=$STATE"
    echo "BRICK_TB_KEYSTONE_LOG=$LOGS/keystone.log"
    echo "BRICK_TB_KEYSTONE_PID=$(<"$PID_FILE")"
    echo "BRICK_TB_KEYSTONE_STARTED_BY=$1"
  } >"$ENV_FILE.tmp"
  mv "$ENV_FILE.tmp" "$ENV_FILE"
  cat "$ENV_FILE"
}

if alive "$PID_FILE" "$CONF"; then
  if cmp -s "$CONF.new" "$CONF" && grep -qx "BRICK_TB_KEYSTONE_SEED=$seed_key" "$ENV_FILE" 2>/dev/null && api_answers; then
    rm -f "$CONF.new"
    # A no-op keeps the token of whoever did the cold start (decided under
    # the lock, so racing callers cannot both believe they started it).
    started_by=$(sed -n 's/^BRICK_TB_KEYSTONE_STARTED_BY=//p' "$ENV_FILE")
    write_env "${started_by:-unknown}"
    log "already up (checked in $(elapsed)s)"
    exit 0
  fi
  log "running with other settings (or not answering); restarting"
  # A Go test process holds a shared flock on users.lock while it uses the
  # service (internal/testbed); wait until no other one does.
  exec 8>"$STATE/users.lock"
  users_wait=${BRICK_TB_USERS_WAIT:-240}
  if ! flock -n -x 8; then
    log "another test process is using it; waiting up to ${users_wait}s before restarting"
    flock -x -w "$users_wait" 8 || fail "still in use by another test process after ${users_wait}s; not restarting it with other settings"
  fi
fi
stop_all

for cmd in curl flock setsid keystone-manage; do
  command -v "$cmd" >/dev/null || fail "'$cmd' not found: run test/install.sh"
done
if (exec 3<>"/dev/tcp/127.0.0.1/$API_PORT") 2>/dev/null; then
  fail "127.0.0.1:$API_PORT is already in use by another program"
fi
mkdir -p "$LOGS" "$DIST"
chmod 700 "$STATE"
mv "$CONF.new" "$CONF"

db=$STATE/keystone.sqlite

build_seed() {
  log "building the database and keys (db_sync, fernet_setup, credential_setup, bootstrap, catalog)"
  rm -rf "$db" "$db-wal" "$db-shm" "$STATE/fernet-keys" "$STATE/credential-keys" "$seed.tmp"
  local pids=() p rc=0
  keystone-manage --config-file "$CONF" db_sync >"$LOGS/db_sync.out" 2>&1 &
  pids+=($!)
  keystone-manage --config-file "$CONF" fernet_setup --keystone-user root --keystone-group root >"$LOGS/fernet_setup.out" 2>&1 &
  pids+=($!)
  keystone-manage --config-file "$CONF" credential_setup --keystone-user root --keystone-group root >"$LOGS/credential_setup.out" 2>&1 &
  pids+=($!)
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  ((rc == 0)) || fail "keystone-manage failed; see $LOGS/{db_sync,fernet_setup,credential_setup}.out"
  "$PY" "$KEYSTONE_DIR/seed.py" "$CONF" "$API_PORT" >"$STATE/seed.env" 2>"$LOGS/seed.out" ||
    fail "seed.py failed; see $LOGS/seed.out"
  find "$DIST" -maxdepth 1 -name 'seed-*' ! -name "seed-$seed_key" -exec rm -rf {} +
  mkdir -p "$seed.tmp"
  cp -a "$db" "$STATE/fernet-keys" "$STATE/credential-keys" "$STATE/seed.env" "$seed.tmp/"
  mv "$seed.tmp" "$seed"
}

if [[ ${BRICK_TB_KEYSTONE_KEEP:-0} == 1 && -s $db && -s $STATE/seed.env ]]; then
  log "keeping the database"
elif [[ -s $seed/keystone.sqlite ]]; then
  # Fresh state on every cold start: no application credentials or tokens
  # left over from earlier runs.
  rm -rf "$db" "$db-wal" "$db-shm" "$STATE/fernet-keys" "$STATE/credential-keys"
  cp -a "$seed/keystone.sqlite" "$seed/fernet-keys" "$seed/credential-keys" "$seed/seed.env" "$STATE/"
else
  build_seed
fi
rm -f "$LOGS"/keystone.log "$LOGS"/keystone.out

daemon "$LOGS/keystone.out" "$PY" "$KEYSTONE_DIR/serve.py" "$CONF" "$API_PORT" >"$PID_FILE"

# Ready means the member user gets a project-scoped token.
if ! "$PY" - "$API_PORT" "$(<"$PID_FILE")" "$START_TIMEOUT" "$STATE/seed.env" <<'PYEOF'; then
import json, sys, time, urllib.request
port, pid, timeout, seed = sys.argv[1:]
env = dict(l.split('=', 1) for l in open(seed).read().split('\n') if '=' in l)
deadline = time.monotonic() + float(timeout)
body = json.dumps({'auth': {
    'identity': {'methods': ['password'], 'password': {'user': {
        'name': env['BRICK_TB_KEYSTONE_MEMBER_USER'], 'domain': {'id': 'default'},
        'password': env['BRICK_TB_KEYSTONE_MEMBER_PASSWORD']}}},
    'scope': {'project': {'name': env['BRICK_TB_KEYSTONE_PROJECT'], 'domain': {'id': 'default'}}}}}).encode()

def running():
    try:
        with open('/proc/%s/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] not in ('Z', 'X')
    except OSError:
        return False

why = 'API not answering yet'
while time.monotonic() < deadline:
    if not running():
        sys.exit('keystone exited')
    try:
        req = urllib.request.Request('http://127.0.0.1:%s/v3/auth/tokens' % port, data=body,
                                     headers={'Content-Type': 'application/json'})
        with urllib.request.urlopen(req, timeout=10) as resp:
            if resp.status == 201:
                sys.exit(0)
            why = 'token request: HTTP %d' % resp.status
    except Exception as e:
        why = str(e)
    time.sleep(0.2)
sys.exit('not ready after %ss: %s' % (timeout, why))
PYEOF
  log "not ready; last lines of $LOGS/keystone.log and keystone.out:"
  tail -n 20 "$LOGS/keystone.log" "$LOGS/keystone.out" >&2 2>/dev/null || true
  stop_all
  exit 1
fi

write_env "$STARTER"
log "up in $(elapsed)s (API $api_url/v3, token expiration ${TOKEN_EXPIRATION}s); logs in $LOGS"
