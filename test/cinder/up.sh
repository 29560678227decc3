#!/usr/bin/env bash
# Starts a real Cinder for brick's tests: Debian's python3-cinder running
# api + scheduler + volume in one process (launcher.py), noauth, sqlite, with
# brick_tb_driver.FileVolumeDriver exporting sparse files through Cinder's
# tgtadm helper to a tgtd started here.
#
# Idempotent: when it already runs with the same settings this is a fast
# no-op; with different settings it restarts. Prints the env file (KEY=VALUE)
# on stdout; progress goes to stderr. Needs test/install.sh to have run.
#
# Settings (environment):
#   BRICK_TB_TARGET_IP       portal IP put in connection info   (127.0.0.1)
#   BRICK_TB_SECONDARY_IPS   comma list of more portal IPs        (none)
#   BRICK_TB_TARGET_PORT     iSCSI port                            (3260)
#   BRICK_TB_TGT_LISTEN      address tgtd listens on               (127.0.0.1)
#   BRICK_TB_CHAP            1: targets require CHAP, 0: no auth   (1)
#   BRICK_TB_CINDER_STATE    state dir     (/var/tmp/brick-testbed/cinder)
#   BRICK_TB_CINDER_PORT     API port on 127.0.0.1                 (8776)
#   BRICK_TB_CINDER_KEYSTONE_PORT  port of the same Cinder behind
#                            keystonemiddleware; 0: none            (8786)
#   BRICK_TB_KEYSTONE_PORT   the test bed Keystone's port          (5000)
#   BRICK_TB_PROJECT_ID      project id written to the env file    (32 zeros)
#   BRICK_TB_CINDER_KEEP     1: keep volumes/db across a restart   (0)
#   BRICK_TB_DEBUG           1: debug logging                      (0)
#   BRICK_TB_CINDER_TIMEOUT  seconds to wait for readiness         (180)
#   BRICK_TB_NVMEOF          off: iSCSI through tgtd; old/new: NVMe/TCP
#                            with that connection info format     (off)
#   BRICK_TB_NVMET_DIR       export records for the guest's nvmet
#                            (/var/tmp/brick-testbed/nvmet-share/exports)
#   BRICK_TB_CINDER_KEY_MANAGER  keys of encrypted volume types: fixed
#                            (FIXED_KEY of common.sh), barbican, or both:
#                            fixed for noauth requests, Barbican for
#                            requests through Keystone                (both)
#   BRICK_TB_STARTER         caller's token, recorded in the env file as
#                            BRICK_TB_CINDER_STARTED_BY by a cold start only
set -euo pipefail

# shellcheck source=test/cinder/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

started_at=$(date +%s.%N)

fail() {
  log "$*"
  exit 1
}

elapsed() { awk -v a="$started_at" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# ---- validate settings: they end up in config files and argv ----
ip_re='^[0-9A-Fa-f:.]+$'
[[ $TARGET_IP =~ $ip_re ]] || fail "BRICK_TB_TARGET_IP '$TARGET_IP' is not an IP address"
[[ $TGT_LISTEN =~ $ip_re ]] || fail "BRICK_TB_TGT_LISTEN '$TGT_LISTEN' is not an IP address"
secondary_list=()
if [[ -n $SECONDARY_IPS ]]; then
  IFS=, read -r -a secondary_list <<<"$SECONDARY_IPS"
  for ip in "${secondary_list[@]}"; do
    [[ $ip =~ $ip_re ]] || fail "BRICK_TB_SECONDARY_IPS entry '$ip' is not an IP address"
  done
fi
[[ $KEYSTONE_API_PORT =~ ^[0-9]+$ ]] && ((KEYSTONE_API_PORT < 65536)) || fail "bad port '$KEYSTONE_API_PORT'"
for p in "$API_PORT" "$TARGET_PORT" "$KEYSTONE_PORT"; do
  [[ $p =~ ^[0-9]+$ ]] && ((p > 0 && p < 65536)) || fail "bad port '$p'"
done
[[ $PROJECT_ID =~ ^[0-9a-zA-Z_-]+$ ]] || fail "BRICK_TB_PROJECT_ID '$PROJECT_ID' has characters Cinder will not route"
[[ $USER_ID =~ ^[0-9a-zA-Z_-]+$ ]] || fail "BRICK_TB_USER_ID '$USER_ID' is not a plain name"
[[ $STATE == /* ]] || fail "BRICK_TB_CINDER_STATE must be an absolute path"
[[ $NVMET_DIR =~ ^/[A-Za-z0-9._/-]+$ ]] || fail "BRICK_TB_NVMET_DIR must be a plain absolute path"
STARTER=${BRICK_TB_STARTER:-manual}
[[ $STARTER =~ ^[0-9A-Za-z_-]+$ ]] || fail "BRICK_TB_STARTER must be a plain token"
case $DEBUG in 1 | true) debug=true ;; *) debug=false ;; esac
[[ $KEY_MANAGER =~ ^(fixed|barbican|both)$ ]] || fail "BRICK_TB_CINDER_KEY_MANAGER must be fixed, barbican or both"
if ((CHAP)); then chap=true; else chap=false; fi

take_lock
mkdir -p "$LOGS"

# ---- render the config; its text decides "same settings" ----
render_config() {
  local text
  text=$(<"$CINDER_DIR/cinder.conf.in")
  text=${text//@STATE@/$STATE}
  text=${text//@DIST@/$DIST}
  text=${text//@DATA@/$DATA}
  text=${text//@TGT_DIR@/$TGT_DIR}
  text=${text//@DEBUG@/$debug}
  text=${text//@API_PORT@/$API_PORT}
  text=${text//@KEYSTONE_API_PORT@/$KEYSTONE_API_PORT}
  text=${text//@KEYSTONE_PORT@/$KEYSTONE_PORT}
  text=${text//@TARGET_IP@/$TARGET_IP}
  text=${text//@TARGET_PORT@/$TARGET_PORT}
  text=${text//@SECONDARY_IPS@/$SECONDARY_IPS}
  text=${text//@CHAP@/$chap}
  text=${text//@TGT_PORTAL@/$TGT_LISTEN:$TARGET_PORT}
  # NVMe/TCP: Cinder's nvmet helper, served by the guest (brick_tb_driver.py).
  # Off, the rendered file is the iSCSI one, byte for byte.
  local helper=tgtadm protocol=iscsi prefix=iqn.2010-10.org.openstack: nvme_opts=
  if [[ $NVMEOF != off ]]; then
    # Subsystems are then nqn.nvme-subsystem-1-<volume id>, as with LVM+nvmet.
    helper=nvmet protocol=nvmet_tcp prefix=nvme-subsystem-1
    nvme_opts=$'\nnvmet_port_id = 1\nbrick_tb_nvme_format = '$NVMEOF$'\nbrick_tb_nvmet_dir = '$NVMET_DIR
  fi
  text=${text//@TARGET_HELPER@/$helper}
  text=${text//@TARGET_PROTOCOL@/$protocol}
  text=${text//@TARGET_PREFIX@/$prefix}
  text=${text//$'\n'@NVME_OPTS@/$nvme_opts}
  local km=$'backend = cinder.keymgr.conf_key_mgr.ConfKeyManager\nfixed_key = '$FIXED_KEY
  [[ $KEY_MANAGER == barbican ]] && km='backend = barbican'
  [[ $KEY_MANAGER == both ]] && km=$'backend = brick_tb_keymgr.KeystoneOrFixedKeyManager\nfixed_key = '$FIXED_KEY
  text=${text//@KEY_MANAGER@/$km}
  printf '%s\n' "$text"
}
render_config >"$CONF.new"

api_url=http://127.0.0.1:$API_PORT
keystone_api_url=
((KEYSTONE_API_PORT == 0)) || keystone_api_url=http://127.0.0.1:$KEYSTONE_API_PORT/v3

api_answers() {
  local code
  code=$(curl -s -o /dev/null -m 3 -w '%{http_code}' "$api_url/" || true)
  [[ $code == 200 || $code == 300 ]]
}

write_env() {
  local maxmv=$1 started_by=$2
  cat >"$ENV_FILE.tmp" <<EOF
# Written by test/cinder/up.sh; KEY=VALUE lines (source with: set -a; . $ENV_FILE).
# noauth: send "X-Auth-Token: \$BRICK_TB_CINDER_TOKEN" (<user>:<project>);
# the project in the token must match the one in the URL.
BRICK_CINDER_ENDPOINT=$api_url/v3
BRICK_TB_CINDER_KEYSTONE_ENDPOINT=$keystone_api_url
OS_PROJECT_ID=$PROJECT_ID
OS_USER_ID=$USER_ID
BRICK_TB_CINDER_TOKEN=$USER_ID:$PROJECT_ID
BRICK_TB_CINDER_MAX_MICROVERSION=$maxmv
BRICK_TB_CINDER_STATE=$STATE
BRICK_TB_CINDER_VOLUMES_DIR=$DATA
BRICK_TB_CINDER_TGT_DIR=$TGT_DIR
BRICK_TB_CINDER_LOG=$LOGS/cinder.log
BRICK_TB_TARGET_IP=$TARGET_IP
BRICK_TB_SECONDARY_IPS=$SECONDARY_IPS
BRICK_TB_TARGET_PORT=$TARGET_PORT
BRICK_TB_TGT_LISTEN=$TGT_LISTEN
BRICK_TB_CHAP=$CHAP
BRICK_TB_NVMEOF=$NVMEOF
BRICK_TB_NVMET_DIR=$NVMET_DIR
BRICK_TB_CINDER_KEY_MANAGER=$KEY_MANAGER
BRICK_TB_CINDER_FIXED_KEY=$FIXED_KEY
BRICK_TB_DEBUG=$debug
BRICK_TB_CINDER_PID=$(<"$LAUNCHER_PID")
BRICK_TB_TGTD_PID=$(<"$TGTD_PID")
BRICK_TB_CINDER_STARTED_BY=$started_by
EOF
  mv "$ENV_FILE.tmp" "$ENV_FILE"
  cat "$ENV_FILE"
}

# ---- already up? ----
if alive "$LAUNCHER_PID" "$CONF" && alive "$TGTD_PID" tgtd; then
  if cmp -s "$CONF.new" "$CONF" && [[ -s $ENV_FILE ]] && api_answers; then
    rm -f "$CONF.new"
    maxmv=$(sed -n 's/^BRICK_TB_CINDER_MAX_MICROVERSION=//p' "$ENV_FILE")
    # A no-op keeps the token of whoever did the cold start: under the lock,
    # so racing callers cannot both believe they started it.
    started_by=$(sed -n 's/^BRICK_TB_CINDER_STARTED_BY=//p' "$ENV_FILE")
    write_env "$maxmv" "${started_by:-unknown}"
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
# Stop whatever is left of an earlier start (settings changed, or one of the
# two processes died): a half-running test bed is never reused.
stop_all

# ---- preflight ----
for cmd in tgtd tgt-admin tgtadm privsep-helper curl flock setsid dpkg-deb; do
  command -v "$cmd" >/dev/null || fail "'$cmd' not found: run test/install.sh"
done
"$PY" -c 'import cinder' 2>/dev/null || fail "$PY cannot import cinder: run test/install.sh"
port_busy() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
port_busy 127.0.0.1 "$API_PORT" && fail "127.0.0.1:$API_PORT is already in use by another program"
((KEYSTONE_API_PORT == 0)) || ! port_busy 127.0.0.1 "$KEYSTONE_API_PORT" ||
  fail "127.0.0.1:$KEYSTONE_API_PORT (BRICK_TB_CINDER_KEYSTONE_PORT) is already in use by another program"
# Only one tgtd can own the control socket; one we did not start is not ours
# to configure or stop.
if tgtadm --op show --mode system >/dev/null 2>&1; then
  fail "a tgtd not started by this script is running; stop it first"
fi
port_busy "$TGT_LISTEN" "$TARGET_PORT" && fail "$TGT_LISTEN:$TARGET_PORT is already in use by another program"

# ---- api-paste.ini and resource_filters.json, from the cinder-common .deb ----
# python3-cinder does not ship them and cinder-common would pull in ~170 more
# packages, so take the two files out of the .deb of the same version, once.
ensure_dist() {
  local ver tmp
  ver=$(dpkg-query -W -f='${Version}' python3-cinder)
  if [[ -f $DIST/version && $(<"$DIST/version") == "$ver" &&
    -f $DIST/etc/cinder/api-paste.ini && -f $DIST/etc/cinder/resource_filters.json ]]; then
    return 0
  fi
  log "extracting api-paste.ini and resource_filters.json from cinder-common $ver (once per state dir)"
  tmp=$(mktemp -d "$STATE/dist-tmp.XXXXXX")
  # apt-get download runs as root here; -o APT::Sandbox::User=root avoids the
  # warning about the _apt user not being able to write to $tmp.
  if ! (cd "$tmp" && apt-get download -qq -o APT::Sandbox::User=root "cinder-common=$ver" >"$LOGS/apt-download.log" 2>&1); then
    rm -rf "$tmp"
    fail "apt-get download cinder-common=$ver failed (see $LOGS/apt-download.log)"
  fi
  dpkg-deb -x "$tmp"/cinder-common_*.deb "$tmp/root"
  mkdir -p "$tmp/dist/etc/cinder"
  # The .deb keeps api-paste.ini under /usr/share/cinder-common (its postinst
  # copies it to /etc/cinder); look in both places.
  local f src
  for f in api-paste.ini resource_filters.json; do
    src=
    for src in "$tmp/root/etc/cinder/$f" "$tmp/root/usr/share/cinder-common/$f" ""; do
      [[ -z $src || -f $src ]] && break
    done
    if [[ -z $src ]]; then
      rm -rf "$tmp"
      fail "$f not found in cinder-common $ver"
    fi
    cp "$src" "$tmp/dist/etc/cinder/$f"
  done
  echo "$ver" >"$tmp/dist/version"
  rm -rf "$DIST"
  mv "$tmp/dist" "$DIST"
  rm -rf "$tmp"
}
ensure_dist
cat "$DIST/etc/cinder/api-paste.ini" "$CINDER_DIR/api-paste-keystone.ini" >"$STATE/api-paste.ini"

# ---- fresh state: every cold start begins with no volumes ----
if [[ ${BRICK_TB_CINDER_KEEP:-0} != 1 ]]; then
  rm -rf "$DATA" "$TGT_DIR" "$STATE/coordination" "$STATE/lock" "$STATE/cinder.sqlite"
  rm -f "$LOGS"/*.log "$LOGS"/*.out
fi
mkdir -p "$DATA" "$TGT_DIR" "$STATE/coordination" "$STATE/lock" "$LOGS"
chmod 700 "$STATE" "$DATA" "$TGT_DIR"
mv "$CONF.new" "$CONF"

# ---- tgtd ----
mkdir -p "$(dirname "$TGT_INCLUDE")"
echo "include $TGT_DIR/*" >"$TGT_INCLUDE"
daemon "$LOGS/tgtd.log" tgtd -f --iscsi "portal=$TGT_LISTEN:$TARGET_PORT" >"$TGTD_PID"
for ((i = 0; ; i++)); do
  running "$(<"$TGTD_PID")" || { stop_all; fail "tgtd exited at start; see $LOGS/tgtd.log"; }
  tgtadm --op show --mode system >/dev/null 2>&1 && break
  ((i < 100)) || { stop_all; fail "tgtd did not answer within 10s; see $LOGS/tgtd.log"; }
  sleep 0.1
done

# ---- database: `cinder-manage db sync`, cached as an empty schema ----
# The schema depends only on the Cinder version, so sync once per extracted
# dist (which is per version) and copy it afterwards (saves ~4 s a start).
if [[ ! -s $STATE/cinder.sqlite ]]; then
  if [[ ! -s $DIST/schema.sqlite ]]; then
    log "creating the database schema (cinder-manage db sync)"
    if ! "$PY" -c 'import sys; from cinder.cmd.manage import main; sys.exit(main())' \
      --config-file "$CONF" db sync >"$LOGS/db-sync.out" 2>&1; then
      stop_all
      fail "db sync failed; see $LOGS/db-sync.out"
    fi
    cp "$STATE/cinder.sqlite" "$DIST/schema.sqlite.tmp"
    mv "$DIST/schema.sqlite.tmp" "$DIST/schema.sqlite"
  else
    cp "$DIST/schema.sqlite" "$STATE/cinder.sqlite"
  fi
fi

# ---- cinder: api + scheduler + volume in one process ----
PYTHONPATH=$CINDER_DIR daemon "$LOGS/launcher.out" "$PY" "$CINDER_DIR/launcher.py" \
  --config-file "$CONF" >"$LAUNCHER_PID"

# Ready means: the API answers, cinder-volume reports "up", and the scheduler
# has the backend's pool (before that, a create fails with "No valid backend").
if ! maxmv=$("$PY" - "$API_PORT" "$PROJECT_ID" "$USER_ID:$PROJECT_ID" "$(<"$LAUNCHER_PID")" "$START_TIMEOUT" "$KEYSTONE_API_PORT" <<'EOF'
import json, sys, time, urllib.error, urllib.request
port, project, token, pid, timeout, keystone_port = sys.argv[1:]
deadline = time.monotonic() + float(timeout)
base = 'http://127.0.0.1:%s' % port

def get(path, base=base):
    req = urllib.request.Request(base + path, headers={
        'X-Auth-Token': token, 'Accept': 'application/json'})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return json.load(resp)
    except urllib.error.HTTPError as e:
        # GET / answers "300 Multiple Choices" with the version list.
        if e.code == 300:
            return json.load(e)
        raise

def running():
    try:
        with open('/proc/%s/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] not in ('Z', 'X')
    except OSError:
        return False

why = 'API not answering yet'
while time.monotonic() < deadline:
    if not running():
        sys.exit('launcher exited')
    try:
        services = get('/v3/%s/os-services' % project)['services']
        volumes = [s for s in services if s['binary'] == 'cinder-volume']
        if not volumes or any(s['state'] != 'up' for s in volumes):
            why = 'cinder-volume not up: %s' % volumes
        elif not get('/v3/%s/scheduler-stats/get_pools' % project)['pools']:
            why = 'scheduler has no pool yet'
        elif keystone_port != '0' and not get('/', 'http://127.0.0.1:%s' % keystone_port)['versions']:
            why = 'keystone-mode API lists no versions'
        else:
            for v in get('/')['versions']:
                if v['id'] == 'v3.0':
                    print(v['version'])
            sys.exit(0)
    except Exception as e:  # connection refused, 5xx while starting, ...
        why = str(e)
    time.sleep(0.2)
sys.exit('not ready after %ss: %s' % (timeout, why))
EOF
); then
  log "not ready; last lines of $LOGS/cinder.log and launcher.out:"
  tail -n 20 "$LOGS/cinder.log" "$LOGS/launcher.out" >&2 2>/dev/null || true
  stop_all
  exit 1
fi

write_env "$maxmv" "$STARTER"
log "up in $(elapsed)s (API $api_url, portals $TARGET_IP${SECONDARY_IPS:+,$SECONDARY_IPS}:$TARGET_PORT, CHAP $chap); logs in $LOGS"
