#!/usr/bin/env bash
# Starts a real Ironic for brick's tests: Debian's python3-ironic, API and
# conductor in one process (ironic.cmd.singleprocess, rpc_transport = none),
# noauth (or keystone), sqlite, fake-hardware only, on 127.0.0.1.
#
# Idempotent: when it already runs with the same settings this is a fast
# no-op; with different settings it restarts. Prints the env file (KEY=VALUE)
# on stdout; progress goes to stderr. Needs test/install.sh to have run.
#
# Settings (environment):
#   BRICK_TB_IRONIC_AUTH       noauth, or keystone: tokens checked by
#                              keystonemiddleware at the test bed Keystone,
#                              which must run (test/keystone/up.sh) (noauth)
#   BRICK_TB_IRONIC_STATE      state dir   (/var/tmp/brick-testbed/ironic,
#                              keystone: /var/tmp/brick-testbed/ironic-keystone)
#   BRICK_TB_IRONIC_PORT       API port on 127.0.0.1  (6385, keystone: 6386)
#   BRICK_TB_KEYSTONE_PORT     the test bed Keystone's port          (5000)
#   BRICK_TB_CINDER_PORT       the test bed Cinder's noauth API port,
#                              for the cinder storage interface      (8776)
#   BRICK_TB_IRONIC_MAX_LIMIT  [api] max_limit, the largest page     (1000)
#   BRICK_TB_IRONIC_KEEP       1: keep the database across a restart (0)
#   BRICK_TB_DEBUG             1: debug logging                      (0)
#   BRICK_TB_IRONIC_TIMEOUT    seconds to wait for readiness         (120)
#   BRICK_TB_STARTER           caller's token, recorded in the env file as
#                              BRICK_TB_IRONIC_STARTED_BY by a cold start only
set -euo pipefail

# shellcheck source=test/ironic/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

started_at=$(date +%s.%N)
fail() {
  log "$*"
  exit 1
}
elapsed() { awk -v a="$started_at" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

[[ $API_PORT =~ ^[0-9]+$ ]] && ((API_PORT > 0 && API_PORT < 65536)) || fail "bad BRICK_TB_IRONIC_PORT '$API_PORT'"
[[ $MAX_LIMIT =~ ^[0-9]+$ ]] && ((MAX_LIMIT > 0)) || fail "BRICK_TB_IRONIC_MAX_LIMIT must be a positive integer"
[[ $STATE == /* ]] || fail "BRICK_TB_IRONIC_STATE must be an absolute path"
[[ $AUTH == noauth || $AUTH == keystone ]] || fail "BRICK_TB_IRONIC_AUTH must be noauth or keystone, not '$AUTH'"
[[ $CINDER_PORT =~ ^[0-9]+$ ]] && ((CINDER_PORT > 0 && CINDER_PORT < 65536)) || fail "bad BRICK_TB_CINDER_PORT '$CINDER_PORT'"
[[ $KEYSTONE_PORT =~ ^[0-9]+$ ]] && ((KEYSTONE_PORT > 0 && KEYSTONE_PORT < 65536)) || fail "bad BRICK_TB_KEYSTONE_PORT '$KEYSTONE_PORT'"
STARTER=${BRICK_TB_STARTER:-manual}
[[ $STARTER =~ ^[0-9A-Za-z_-]+$ ]] || fail "BRICK_TB_STARTER must be a plain token"
case $DEBUG in 1 | true) debug=true ;; *) debug=false ;; esac

take_lock
mkdir -p "$LOGS"

text=$(<"$IRONIC_DIR/ironic.conf.in")
text=${text//@STATE@/$STATE}
text=${text//@API_PORT@/$API_PORT}
text=${text//@MAX_LIMIT@/$MAX_LIMIT}
text=${text//@DEBUG@/$debug}
text=${text//@AUTH@/$AUTH}
text=${text//@CINDER_URL@/$CINDER_URL}
keystone_opts=
if [[ $AUTH == keystone ]]; then
  # The ironic service user is made by test/keystone/seed.py.
  keystone_opts="
[keystone_authtoken]
www_authenticate_uri = http://127.0.0.1:$KEYSTONE_PORT/v3
auth_url = http://127.0.0.1:$KEYSTONE_PORT/v3
auth_type = password
username = ironic
password = brick-tb-ironic-pw
project_name = service
user_domain_id = default
project_domain_id = default"
fi
text=${text//$'\n'@KEYSTONE_OPTS@/$keystone_opts}
printf '%s\n' "$text" >"$CONF.new"

api_url=http://127.0.0.1:$API_PORT

api_answers() {
  local code
  code=$(curl -s -o /dev/null -m 3 -w '%{http_code}' "$api_url/" || true)
  [[ $code == 200 ]]
}

write_env() {
  cat >"$ENV_FILE.tmp" <<EOF
# Written by test/ironic/up.sh; KEY=VALUE lines (source with: set -a; . $ENV_FILE).
# $AUTH: noauth needs no token, keystone a token of the test bed Keystone.
# The volume API needs X-OpenStack-Ironic-API-Version >= 1.32.
# The baremetal CLI works (noauth) with: OS_AUTH_TYPE=none OS_ENDPOINT=$api_url
BRICK_IRONIC_ENDPOINT=$api_url
BRICK_TB_IRONIC_AUTH=$AUTH
BRICK_TB_IRONIC_MAX_MICROVERSION=$1
BRICK_TB_IRONIC_MAX_LIMIT=$MAX_LIMIT
BRICK_TB_IRONIC_STATE=$STATE
BRICK_TB_IRONIC_LOG=$LOGS/ironic.log
BRICK_TB_IRONIC_PID=$(<"$PID_FILE")
BRICK_TB_IRONIC_STARTED_BY=$2
EOF
  mv "$ENV_FILE.tmp" "$ENV_FILE"
  cat "$ENV_FILE"
}

if alive "$PID_FILE" "$CONF"; then
  if cmp -s "$CONF.new" "$CONF" && [[ -s $ENV_FILE ]] && api_answers; then
    rm -f "$CONF.new"
    # A no-op keeps the token of whoever did the cold start (decided under
    # the lock, so racing callers cannot both believe they started it).
    started_by=$(sed -n 's/^BRICK_TB_IRONIC_STARTED_BY=//p' "$ENV_FILE")
    write_env "$(sed -n 's/^BRICK_TB_IRONIC_MAX_MICROVERSION=//p' "$ENV_FILE")" "${started_by:-unknown}"
    log "already up (checked in $(elapsed)s)"
    exit 0
  fi
  log "running with other settings (or not answering); restarting"
  # A Go test process holds a shared flock on users.lock while it uses the
  # service (internal/testbed); restarting under it would break its tests
  # midway. Wait until no other test process uses it.
  exec 8>"$STATE/users.lock"
  users_wait=${BRICK_TB_USERS_WAIT:-240}
  if ! flock -n -x 8; then
    log "another test process is using it; waiting up to ${users_wait}s before restarting"
    flock -x -w "$users_wait" 8 || fail "still in use by another test process after ${users_wait}s; not restarting it with other settings"
  fi
fi
stop_all

for cmd in curl flock setsid; do
  command -v "$cmd" >/dev/null || fail "'$cmd' not found: run test/install.sh"
done
"$PY" -c 'import ironic' 2>/dev/null || fail "$PY cannot import ironic: run test/install.sh"
if (exec 3<>"/dev/tcp/127.0.0.1/$API_PORT") 2>/dev/null; then
  fail "127.0.0.1:$API_PORT is already in use by another program"
fi

# Fresh state on every cold start: no nodes left over from earlier runs.
if [[ ${BRICK_TB_IRONIC_KEEP:-0} != 1 ]]; then
  rm -rf "$STATE/ironic.sqlite" "$STATE/lock"
  rm -f "$LOGS"/*.log "$LOGS"/*.out
fi
mkdir -p "$STATE/lock" "$LOGS" "$DIST"
chmod 700 "$STATE"
mv "$CONF.new" "$CONF"

# Schema: `ironic-dbsync create_schema`, cached per ironic version because
# it only depends on the code (saves a few seconds per start).
if [[ ! -s $STATE/ironic.sqlite ]]; then
  ver=$(dpkg-query -W -f='${Version}' python3-ironic)
  schema=$DIST/schema-${ver//[^0-9A-Za-z.+~-]/_}.sqlite
  if [[ ! -s $schema ]]; then
    log "creating the database schema (ironic-dbsync create_schema)"
    if ! "$PY" -c 'import sys; from ironic.cmd.dbsync import main; sys.exit(main())' \
      --config-file "$CONF" create_schema >"$LOGS/dbsync.out" 2>&1; then
      fail "create_schema failed; see $LOGS/dbsync.out"
    fi
    cp "$STATE/ironic.sqlite" "$schema.tmp"
    mv "$schema.tmp" "$schema"
  else
    cp "$schema" "$STATE/ironic.sqlite"
  fi
fi

daemon "$LOGS/ironic.out" "$PY" -c 'import sys; from ironic.cmd.singleprocess import main; sys.exit(main())' \
  --config-file "$CONF" >"$PID_FILE"

# Ready means the API answers and lists the fake-hardware driver (which the
# conductor registers once it has started).
# In keystone mode the driver list needs a token: the ironic service user's.
if ! maxmv=$("$PY" - "$API_PORT" "$(<"$PID_FILE")" "$START_TIMEOUT" "$AUTH" "$KEYSTONE_PORT" <<'EOF'
import json, sys, time, urllib.request
port, pid, timeout, auth, keystone_port = sys.argv[1:]
deadline = time.monotonic() + float(timeout)
base = 'http://127.0.0.1:%s' % port
headers = {'Accept': 'application/json'}

def token():
    body = json.dumps({'auth': {
        'identity': {'methods': ['password'], 'password': {'user': {
            'name': 'ironic', 'domain': {'id': 'default'}, 'password': 'brick-tb-ironic-pw'}}},
        'scope': {'project': {'name': 'service', 'domain': {'id': 'default'}}}}}).encode()
    req = urllib.request.Request('http://127.0.0.1:%s/v3/auth/tokens' % keystone_port, data=body,
                                 headers={'Content-Type': 'application/json'})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.headers['X-Subject-Token']
    except Exception as e:
        sys.exit('no token from the test bed Keystone on port %s (start test/keystone/up.sh first): %s' % (keystone_port, e))

if auth == 'keystone':
    headers['X-Auth-Token'] = token()

def get(path):
    req = urllib.request.Request(base + path, headers=headers)
    with urllib.request.urlopen(req, timeout=5) as resp:
        return json.load(resp)

def running():
    try:
        with open('/proc/%s/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] not in ('Z', 'X')
    except OSError:
        return False

why = 'API not answering yet'
while time.monotonic() < deadline:
    if not running():
        sys.exit('ironic exited')
    try:
        names = [d['name'] for d in get('/v1/drivers')['drivers']]
        if 'fake-hardware' in names:
            print(get('/')['default_version']['version'])
            sys.exit(0)
        why = 'drivers listed: %s' % names
    except Exception as e:
        why = str(e)
    time.sleep(0.2)
sys.exit('not ready after %ss: %s' % (timeout, why))
EOF
); then
  log "not ready; last lines of $LOGS/ironic.log and ironic.out:"
  tail -n 20 "$LOGS/ironic.log" "$LOGS/ironic.out" >&2 2>/dev/null || true
  stop_all
  exit 1
fi

write_env "$maxmv" "$STARTER"
log "up in $(elapsed)s (API $api_url, $AUTH, max_limit $MAX_LIMIT); logs in $LOGS"
