#!/usr/bin/env bash
# Starts a real Barbican for brick's encrypted-volume tests: Debian's
# python3-barbican (Zed) behind keystonemiddleware on the project's Keystone
# (test/keystone/up.sh, started when it is not running), one process on
# 127.0.0.1, sqlite (schema made at start), the simple crypto plugin with a
# key-encryption key made once per state dir. Registers the key-manager
# endpoint in Keystone's catalog (RegionOne, public).
#
# Idempotent: when it already runs with the same settings this is a fast
# no-op; with different settings it restarts. Prints the env file (KEY=VALUE)
# on stdout; progress goes to stderr. Needs test/install.sh to have run.
#
# Settings (environment):
#   BRICK_TB_BARBICAN_STATE    state dir (/var/tmp/brick-testbed/barbican)
#   BRICK_TB_BARBICAN_PORT     API port on 127.0.0.1             (9311)
#   BRICK_TB_DEBUG             1: debug logging                  (0)
#   BRICK_TB_BARBICAN_TIMEOUT  seconds to wait for readiness     (120)
#   BRICK_TB_STARTER           caller's token, recorded as BRICK_TB_BARBICAN_STARTED_BY
#                              by a cold start only
set -euo pipefail

# shellcheck source=test/barbican/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

started_at=$(date +%s.%N)
fail() {
  log "$*"
  exit 1
}
elapsed() { awk -v a="$started_at" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

[[ $API_PORT =~ ^[0-9]+$ ]] && ((API_PORT > 0 && API_PORT < 65536)) || fail "bad BRICK_TB_BARBICAN_PORT '$API_PORT'"
[[ $STATE == /* ]] || fail "BRICK_TB_BARBICAN_STATE must be an absolute path"
STARTER=${BRICK_TB_STARTER:-manual}
[[ $STARTER =~ ^[0-9A-Za-z_-]+$ ]] || fail "BRICK_TB_STARTER must be a plain token"
case $DEBUG in 1 | true) debug=true ;; *) debug=false ;; esac
for cmd in curl flock setsid; do
  command -v "$cmd" >/dev/null || fail "'$cmd' not found: run test/install.sh"
done
"$PY" -c 'import barbican, keystonemiddleware' 2>/dev/null || fail "python3-barbican is missing: run test/install.sh"

# Keystone first (its own lock; a no-op when it runs).
ks_env=$(BRICK_TB_STARTER=$STARTER bash "$BARBICAN_DIR/../keystone/up.sh") || fail "test/keystone/up.sh failed"
ks_get() { sed -n "s/^$1=//p" <<<"$ks_env" | head -1; }

take_lock
mkdir -p "$LOGS"
chmod 700 "$STATE"
kek_file=$STATE/kek
if [[ ! -s $kek_file ]]; then
  (umask 077 && head -c 32 /dev/urandom | base64 >"$kek_file.tmp" && mv "$kek_file.tmp" "$kek_file")
fi

api_url=http://127.0.0.1:$API_PORT
text=$(<"$BARBICAN_DIR/barbican.conf.in")
text=${text//@STATE@/$STATE}
text=${text//@PORT@/$API_PORT}
text=${text//@DEBUG@/$debug}
text=${text//@KEK@/$(<"$kek_file")}
text=${text//@AUTH_URL@/$(ks_get BRICK_TB_KEYSTONE_AUTH_URL)}
text=${text//@ADMIN_USER@/$(ks_get BRICK_TB_KEYSTONE_CLOUD_ADMIN_USER)}
text=${text//@ADMIN_PASSWORD@/$(ks_get BRICK_TB_KEYSTONE_CLOUD_ADMIN_PASSWORD)}
text=${text//@ADMIN_PROJECT@/$(ks_get BRICK_TB_KEYSTONE_CLOUD_ADMIN_PROJECT)}
(umask 077 && printf '%s\n' "$text" >"$CONF.new")
printf '%s\n' "$ks_env" >"$STATE/keystone.env"

write_env() {
  {
    echo "# Written by test/barbican/up.sh; KEY=VALUE lines (source with: set -a; . $ENV_FILE)."
    echo "BRICK_TB_BARBICAN_URL=$api_url"
    echo "BRICK_TB_BARBICAN_STATE=$STATE"
    echo "BRICK_TB_BARBICAN_LOG=$LOGS/barbican.log"
    echo "BRICK_TB_BARBICAN_PID=$(<"$PID_FILE")"
    echo "BRICK_TB_BARBICAN_STARTED_BY=$1"
  } >"$ENV_FILE.tmp"
  mv "$ENV_FILE.tmp" "$ENV_FILE"
  cat "$ENV_FILE"
}

ready() {
  "$PY" "$BARBICAN_DIR/ready.py" "$STATE/keystone.env" "$api_url" "$(<"$PID_FILE")" "$1" 2>>"$LOGS/ready.out"
}

if alive "$PID_FILE" "$CONF" && cmp -s "$CONF.new" "$CONF" && ready 10; then
  rm -f "$CONF.new"
  started_by=$(sed -n 's/^BRICK_TB_BARBICAN_STARTED_BY=//p' "$ENV_FILE")
  write_env "${started_by:-unknown}"
  log "already up (checked in $(elapsed)s)"
  exit 0
fi
stop_all
if (exec 3<>"/dev/tcp/127.0.0.1/$API_PORT") 2>/dev/null; then
  fail "127.0.0.1:$API_PORT is already in use by another program"
fi
mv "$CONF.new" "$CONF"
# Fresh secrets on every cold start: the keys belong to volumes of a Cinder
# whose database does not outlive its own run either.
rm -f "$STATE/barbican.sqlite" "$LOGS/barbican.log" "$LOGS/barbican.out" "$LOGS/ready.out"

daemon "$LOGS/barbican.out" "$PY" "$BARBICAN_DIR/serve.py" "$CONF" "$API_PORT" >"$PID_FILE"

if ! ready "$START_TIMEOUT"; then
  log "not ready; last lines of $LOGS/barbican.log, barbican.out and ready.out:"
  tail -n 20 "$LOGS/barbican.log" "$LOGS/barbican.out" "$LOGS/ready.out" >&2 2>/dev/null || true
  stop_all
  exit 1
fi
write_env "$STARTER"
log "up in $(elapsed)s (API $api_url, Keystone $(ks_get BRICK_TB_KEYSTONE_AUTH_URL)); logs in $LOGS"
