//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/brick-storage/brick/internal/testbed"
)

// cryptGuestScript proves encrypted attaches in one script, run in the
// suite's shared guest (issue 23).
// First the standalone (noauth) Cinder's fixed key: a luks round trip
// (first attach formats, mkfs, write, detach; re-attach reads back) and
// two refusals (no key file; an unknown provider). Then, once the host has
// Barbican up and a luks2 volume whose key Cinder ordered from it
// (/brick/bb.env), the same round trip as Keystone's member user; that
// volume and a fresh luks one go as ciphertext (--no-decrypt) to one
// Python process (started first, niced) in which os-brick's encryptors
// open what brick formatted and format what brick then opens; a project
// member outside the key's ACL is refused by Barbican (403) and, after the
// host stopped Barbican, an unreachable key manager. ps snapshots (argv of
// every process, from /proc) run during the formatting attaches, and
// luksDump reads the headers they wrote; the key patterns are grepped for
// at the end. Lines: "RC label code", "KV label
// value...", "STATE label status hosts sessions sd crypt-maps records",
// "TIME label s".
const cryptGuestScript = reliabilityPrelude + `
{ set +x; } 2>/dev/null
umask 077
printf '%s\n' "$FIXED_KEY" >/tmp/fixed_key
unset FIXED_KEY
# The guest may be shared with later tests: no key or password stays.
trap 'rm -f /tmp/fixed_key /root/clouds.yaml /tmp/osb.py' EXIT
set -x
modprobe -a dm_crypt xts 2>/dev/null
C=("${COMMON[@]}")
K=(--fixed-key-file /tmp/fixed_key)
ncrypt() {
	local u n=0 f
	for f in /sys/block/dm-*/dm/uuid; do
		[[ -e $f ]] || continue
		read -r u <"$f"
		[[ $u == CRYPT-* ]] && n=$((n + 1))
	done
	echo "$n"
}
cstate() { echo "STATE $1 $(vstatus "$2") $(nsessions) $(nsd) $(ncrypt) $(nrec)"; }
mountsrc() {
	local d m r
	while read -r d m r; do [[ $m == "$1" ]] && echo "$d"; done </proc/mounts
}
# bn: brick against the standalone (noauth) Cinder; bk CLOUD: as a Keystone
# user of /root/clouds.yaml (catalog region RegionGuest).
bn() { "$B" "$@"; }
bk() { (
	unset OS_AUTH_TYPE BRICK_CINDER_ENDPOINT
	export OS_CLOUD=$1 OS_CLIENT_CONFIG_FILE=/root/clouds.yaml
	shift
	exec "$B" "$@"
); }
bmember() { bk member "$@"; }
bother() { bk other "$@"; }
# pswatch LABEL / psstop LABEL: snapshots of every process's argv every
# 0.2 s, read from /proc with builtins, into /brick/ps-LABEL.txt.
pswatch() {
	(
		set +x
		local f a n=0
		while [[ ! -e /tmp/ps-stop-$1 ]]; do
			for f in /proc/[0-9]*/cmdline; do
				mapfile -d '' a <"$f" 2>/dev/null || continue
				((${#a[@]})) && printf '%s\n' "${a[*]}"
			done
			n=$((n + 1))
			pause 0.2
		done >"/brick/ps-$1.txt"
		echo "$n" >"/tmp/ps-$1.n"
	) 2>/dev/null &
	PSPID=$!
}
psstop() {
	: >"/tmp/ps-stop-$1"
	wait "$PSPID"
	local n
	read -r n <"/tmp/ps-$1.n"
	echo "KV ps-$1 $n $(grep -c cryptsetup "/brick/ps-$1.txt")"
}
# luksdump LABEL MAPPING: luksDump of the device under an open mapping,
# into /brick/dump-LABEL.txt.
luksdump() {
	local k v dev=""
	while read -r k v; do [[ $k == device: ]] && dev=$v; done < <(cryptsetup status "$2" 2>&1)
	cryptsetup luksDump "$dev" >"/brick/dump-$1.txt" 2>&1
	echo "RC luksdump-$1 $?"
}
# attach1 LABEL RUNNER VOL FLAGS...: the first attach formats, mkfs and
# mounts; a file is written; detach.
attach1() {
	local l=$1 run=$2 vol=$3 t0
	shift 3
	pswatch "$l"
	t0=$(now)
	$run local-attach "$vol" "${C[@]}" "$@" --mountpoint "/mnt/$l" --mkfs ext4 --debug -f json >"/brick/a1-$l.json" 2>"/brick/a1-$l.err"
	echo "RC attach1-$l $?"
	took "attach1-$l" "$t0"
	psstop "$l"
	echo "KV path-$l $(jget "/brick/a1-$l.json" path)"
	echo "KV encryption-$l $(jget "/brick/a1-$l.json" encryption)"
	echo "KV mounted-$l $(mountsrc "/mnt/$l")"
	luksdump "$l" "$(jget "/brick/a1-$l.json" path)"
	echo "$PLAIN-$l" >"/mnt/$l/secret.txt"
	t0=$(now)
	$run local-detach "$vol" "${C[@]}" --debug >"/brick/d1-$l.out" 2>&1
	echo "RC detach1-$l $?"
	took "detach1-$l" "$t0"
	cstate "detached1-$l" "$vol"
}
# readback LABEL RUNNER VOL FLAGS...: attach again, read the file, detach.
readback() {
	local l=$1 run=$2 vol=$3 t0 got=""
	shift 3
	t0=$(now)
	$run local-attach "$vol" "${C[@]}" "$@" --mountpoint "/mnt/$l-r" -f json >"/brick/a2-$l.json" 2>"/brick/a2-$l.err"
	echo "RC attach2-$l $?"
	took "attach2-$l" "$t0"
	read -r got <"/mnt/$l-r/secret.txt"
	echo "KV readback-$l $got"
	[[ $l == luks ]] && $run list -f value -c volume -c device >"/brick/list-$l.out" 2>&1
	$run local-detach "$vol" "${C[@]}" >"/brick/d2-$l.out" 2>&1
	echo "RC detach2-$l $?"
	cstate "detached2-$l" "$vol"
}
# refuse LABEL RUNNER VOL FLAGS...: an attach brick must refuse, with one
# error line and nothing left.
refuse() {
	local l=$1 run=$2 vol=$3 t0 line n=0 first=""
	shift 3
	t0=$(now)
	$run local-attach "$vol" "${C[@]}" "$@" --debug >"/brick/r-$l.out" 2>&1
	echo "RC refuse-$l $?"
	took "refuse-$l" "$t0"
	while read -r line; do
		[[ $line == brick:* && $line != "brick: warning:"* && $line != "brick: note:"* ]] || continue
		n=$((n + 1))
		[[ -n $first ]] || first=$line
	done <"/brick/r-$l.out"
	echo "KV refuse-$l-lines $n"
	echo "KV refuse-$l-line $first"
	cstate "refused-$l" "$vol"
}
nodecrypt() {
	local l=$1 run=$2 vol=$3
	$run local-attach "$vol" "${C[@]}" --no-decrypt -f json >"/brick/nd-$l.json" 2>"/brick/nd-$l.err"
	echo "RC nodecrypt-$l $?"
	local line w=0
	while read -r line; do [[ $line == *ciphertext* ]] && w=$((w + 1)); done <"/brick/nd-$l.err"
	echo "KV nodecrypt-warning-$l $w"
	ln -sf "$(jget "/brick/nd-$l.json" path)" "/tmp/osb-$l"
}

# One Python process for os-brick's side, started now so that its imports
# overlap the steps before it is needed (/tmp/osb-go: go or skip).
read -r -d '' OSB <<'PYEOF'
import binascii, os, sys
from oslo_concurrency import processutils as pu
from os_brick.encryptors import luks
import time

print('TIME osbrick-imports %.2f' % (time.time() - float(os.environ['PYT0'])), flush=True)
while not os.path.exists('/tmp/osb-go'):
    time.sleep(0.1)
if open('/tmp/osb-go').read().strip() != 'go':
    sys.exit(0)

def encryptor(cls, link, keyfile):
    key = binascii.unhexlify(open(keyfile).read().strip())
    class Key:
        def get_encoded(self):
            return key
    class KeyManager:
        def get(self, ctx, key_id):
            return Key()
    return cls(root_helper=None, connection_info={'data': {'device_path': link}}, keymgr=KeyManager(),
               execute=pu.execute, encryption_key_id='00000000-0000-0000-0000-000000000000')

def opens_brick_volume():
    e = encryptor(luks.Luks2Encryptor, '/tmp/osb-b', '/brick/bkey.hex')
    e.attach_volume(None)
    try:
        os.makedirs('/mnt/osb-b', exist_ok=True)
        pu.execute('mount', '-o', 'ro', '/dev/mapper/crypt-osb-b', '/mnt/osb-b')
        try:
            print('KV osbrick-read', open('/mnt/osb-b/secret.txt').read().strip(), flush=True)
        finally:
            pu.execute('umount', '/mnt/osb-b')
    finally:
        e.detach_volume()

def formats_volume():
    e = encryptor(luks.LuksEncryptor, '/tmp/osb-c', '/tmp/fixed_key')
    e.attach_volume(None)
    try:
        pu.execute('mkfs.ext4', '-q', '/dev/mapper/crypt-osb-c')
        os.makedirs('/mnt/osb-c', exist_ok=True)
        pu.execute('mount', '/dev/mapper/crypt-osb-c', '/mnt/osb-c')
        try:
            with open('/mnt/osb-c/secret.txt', 'w') as f:
                f.write(os.environ['PLAIN'] + '-osbrick\n')
        finally:
            pu.execute('umount', '/mnt/osb-c')
    finally:
        e.detach_volume()

for name, step in (('osbrick-open', opens_brick_volume), ('osbrick-format', formats_volume)):
    try:
        step()
        print('RC', name, 0, flush=True)
    except Exception as e:
        print('RC', name, 1, flush=True)
        print(name, type(e).__name__, str(e)[:400], file=sys.stderr)
PYEOF
printf '%s\n' "$OSB" >/tmp/osb.py
# nice: its imports (seconds of CPU under TCG) yield to the steps before.
PYT0=$EPOCHREALTIME nice -n 19 /usr/bin/python3 /tmp/osb.py 2>/brick/osbrick.err &
PYPID=$!

# Standalone Cinder, fixed key.
attach1 luks bn "$VOL_A" "${K[@]}"
readback luks bn "$VOL_A" "${K[@]}"
refuse nokey bn "$VOL_A"
refuse provider bn "$VOL_U" "${K[@]}"

# Barbican through Keystone: the host starts it during the steps above.
t0=$(now)
for ((i = 0; i < 1500; i++)); do
	[[ -e /brick/bb.env || -e /brick/bb.err ]] && break
	pause 0.2
done
took wait-barbican "$t0"
if [[ ! -e /brick/bb.env ]]; then
	echo "KV barbican-error $(</brick/bb.err)"
	echo skip >/tmp/osb-go
	wait "$PYPID"
	echo DONE
	exit 0
fi
source /brick/bb.env
{ set +x; } 2>/dev/null
printf '%s\n' "$(</brick/clouds.yaml)" >/root/clouds.yaml
set -x
P=$KSP
attach1 luks2 bmember "$VOL_B"
nodecrypt c bn "$VOL_C"
nodecrypt b bmember "$VOL_B"
# os-brick, started early (its imports from the 9p root take a while):
# it opens the luks2 volume brick formatted (Barbican's key) and formats
# the fresh luks one (the fixed key) that brick opens next.
t0=$(now)
echo go >/tmp/osb-go
wait "$PYPID"
took osbrick "$t0"
bmember local-detach "$VOL_B" "${C[@]}" >/brick/nd-b-detach.out 2>&1
echo "RC nodecrypt-detach-b $?"
bn local-detach "$VOL_C" "${C[@]}" >/brick/nd-c-detach.out 2>&1
echo "RC nodecrypt-detach-c $?"
readback luks2 bmember "$VOL_B"
P=$PROJECT
readback osb bn "$VOL_C" "${K[@]}"
P=$KSP
refuse acl bother "$VOL_B"
# The host stops Barbican; the member's key fetch then finds nobody.
: >/brick/stop-barbican
for ((i = 0; i < 300; i++)); do
	[[ -e /brick/barbican-stopped ]] && break
	pause 0.2
done
read -r stopped </brick/barbican-stopped
echo "KV barbican-stopped $stopped"
[[ $stopped == stopped ]] && refuse unreachable bmember "$VOL_B"

# The keys and passphrases (the hex) in no record, lock or temporary file
# (the host checks the share: outputs, debug logs, ps snapshots, trace).
set +x
echo "KV guest-leaks $(grep -rlF -f /brick/keypats /var/lib/brick /run/lock /tmp --exclude=fixed_key 2>/dev/null | grep -c . || true)"
echo DONE
`

// cryptType makes the encrypted volume type brick-e2e-crypt-PROVIDER once.
func cryptType(ctx context.Context, t *testing.T, c *testbed.Cinder, provider string) string {
	t.Helper()
	name := "brick-e2e-crypt-" + provider
	var types struct {
		VolumeTypes []struct{ ID, Name string } `json:"volume_types"`
	}
	require.NoError(t, c.Request(ctx, "GET", "/types", "", nil, &types))
	for _, vt := range types.VolumeTypes {
		if vt.Name == name {
			return name
		}
	}
	var made struct {
		VolumeType struct{ ID string } `json:"volume_type"`
	}
	require.NoError(t, c.Request(ctx, "POST", "/types", "", map[string]any{"volume_type": map[string]any{"name": name}}, &made))
	require.NoError(t, c.Request(ctx, "POST", "/types/"+made.VolumeType.ID+"/encryption", "", map[string]any{"encryption": map[string]any{
		"provider": provider, "cipher": "aes-xts-plain64", "key_size": 256, "control_location": "front-end"}}, nil))
	return name
}

// cryptVolumes creates one volume of each encrypted type through the
// noauth API (so with Cinder's fixed key) and waits for all of them.
func cryptVolumes(t *testing.T, c *testbed.Cinder, providers ...string) []*testbed.Volume {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ids := make([]string, len(providers))
	for i, p := range providers {
		var v struct{ Volume testbed.Volume }
		require.NoError(t, c.Request(ctx, "POST", "/volumes", "3.0", map[string]any{"volume": map[string]any{
			"size": 1, "name": fmt.Sprintf("brick-e2e-crypt-%d", i), "volume_type": cryptType(ctx, t, c, p)}}, &v))
		ids[i] = v.Volume.ID
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = c.DeleteVolume(ctx, v.Volume.ID)
		})
	}
	vols := make([]*testbed.Volume, len(ids))
	for i, id := range ids {
		v, err := c.WaitVolume(ctx, id, "available")
		require.NoError(t, err)
		vols[i] = v
	}
	return vols
}

// barbicanSide runs beside the guest: Barbican (and Keystone) up, a luks2
// volume created by Keystone's member user (Cinder orders its key from
// Barbican), its key fetched as the member, then /brick/bb.env for the
// guest; later it stops Barbican when the guest asks (only a Barbican this
// test started). Errors go to /brick/bb.err and to the returned state.
type barbicanSide struct {
	c       *testbed.Cinder
	luks2   string // the volume type
	project string // the member's project
	started bool
	stopped bool
	volID   string
	keyID   string
	other   func(context.Context) error // deletes the second member
	key     []byte
	err     error
	ready   time.Duration
}

const barbicanStarter = "e2ecrypt"

func (b *barbicanSide) run(ctx context.Context, t *testing.T, share string, begin time.Time) {
	b.err = b.prepare(ctx, t, share)
	b.ready = time.Since(begin)
	if b.err != nil {
		_ = os.WriteFile(filepath.Join(share, "bb.err"), []byte(b.err.Error()+"\n"), 0o644)
		return
	}
	for ctx.Err() == nil {
		if _, err := os.Stat(filepath.Join(share, "stop-barbican")); err == nil {
			what := "skipped"
			if b.started {
				if out, err := exec.CommandContext(ctx, "../barbican/down.sh").CombinedOutput(); err != nil {
					what = "down.sh-failed"
					t.Logf("barbican down.sh: %v\n%s", err, out)
				} else {
					what, b.stopped = "stopped", true
				}
			}
			_ = os.WriteFile(filepath.Join(share, "barbican-stopped"), []byte(what+"\n"), 0o644)
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (b *barbicanSide) prepare(ctx context.Context, t *testing.T, share string) error {
	k, err := testbed.EnsureKeystone(ctx, testbed.KeystoneOptions{})
	if err != nil {
		return fmt.Errorf("keystone: %w", err)
	}
	cmd := exec.CommandContext(ctx, "../barbican/up.sh")
	cmd.Env = append(os.Environ(), "BRICK_TB_STARTER="+barbicanStarter)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("test/barbican/up.sh: %w\n%s", err, stderr.String())
	}
	env := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			env[k] = v
		}
	}
	b.started = env["BRICK_TB_BARBICAN_STARTED_BY"] == barbicanStarter
	t.Logf("barbican: %s", strings.TrimSpace(stderr.String()))
	tok, err := k.Token(ctx, k.Member)
	if err != nil {
		return err
	}
	vols := b.c.KeystoneEndpoint + "/" + k.ProjectID + "/volumes"
	var v struct{ Volume struct{ ID, Status string } }
	if err := ksJSON(ctx, "POST", vols, tok, map[string]any{"volume": map[string]any{"size": 1, "name": "brick-e2e-crypt-barbican", "volume_type": b.luks2}}, &v); err != nil {
		return fmt.Errorf("create a volume as the member: %w", err)
	}
	b.volID, b.project = v.Volume.ID, k.ProjectID
	for v.Volume.Status != "available" {
		if v.Volume.Status == "error" {
			return fmt.Errorf("volume %s: status error (Cinder's log: %s)", b.volID, b.c.LogFile)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
		if err := ksJSON(ctx, "GET", vols+"/"+b.volID, tok, nil, &v); err != nil {
			return err
		}
	}
	var enc struct {
		KeyID string `json:"encryption_key_id"`
	}
	if err := ksJSON(ctx, "GET", vols+"/"+b.volID+"/encryption", tok, nil, &enc); err != nil {
		return err
	}
	if enc.KeyID == "" || enc.KeyID == "00000000-0000-0000-0000-000000000000" {
		return fmt.Errorf("volume %s: key ID %q is not one of Barbican's", b.volID, enc.KeyID)
	}
	b.keyID = enc.KeyID
	req, err := http.NewRequestWithContext(ctx, "GET", env["BRICK_TB_BARBICAN_URL"]+"/v1/secrets/"+enc.KeyID+"/payload", nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Auth-Token", tok)
	req.Header.Set("Accept", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b.key, _ = io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK || len(b.key) == 0 {
		return fmt.Errorf("key %s as the member: HTTP %d", enc.KeyID, resp.StatusCode)
	}
	other, err := b.privateKey(ctx, k, tok, env["BRICK_TB_BARBICAN_URL"])
	if err != nil {
		return err
	}
	guestAuth := strings.Replace(k.AuthURL, "127.0.0.1", testbed.GuestHostIP, 1)
	cloud := func(u testbed.KeystoneUser) string {
		return "  " + u.Name + ":\n    auth:\n      auth_url: " + guestAuth + "\n      username: " + u.Name +
			"\n      password: " + u.Password + "\n      project_name: " + k.Project +
			"\n    region_name: RegionGuest\n    identity_api_version: 3\n"
	}
	files := []struct{ name, text string }{
		{"bkey.hex", hex.EncodeToString(b.key) + "\n"},
		{"keypats", strings.Join(keyPatterns(b.c.Env["BRICK_TB_CINDER_FIXED_KEY"], b.key), "\n") + "\n"},
		{"clouds.yaml", "clouds:\n" + strings.Replace(cloud(k.Member), k.Member.Name+":", "member:", 1) +
			strings.Replace(cloud(other), other.Name+":", "other:", 1)},
		{"bb.env", "VOL_B=" + b.volID + "\nKSP=" + k.ProjectID + "\n"},
	}
	for _, f := range files { // bb.env last: the guest waits for it
		tmp := filepath.Join(share, "."+f.name)
		if err := os.WriteFile(tmp, []byte(f.text), 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(share, f.name)); err != nil {
			return err
		}
	}
	return nil
}

// privateKey makes the volume's key private to its creator (Barbican's
// ACL, as the member who owns it) and a second member of the project,
// who may attach the volume in Cinder but not read the key: Barbican's
// 403 for a user without key access. (A reader is refused by Cinder
// itself before brick asks Barbican.)
func (b *barbicanSide) privateKey(ctx context.Context, k *testbed.Keystone, memberToken, barbicanURL string) (testbed.KeystoneUser, error) {
	u := testbed.KeystoneUser{Name: fmt.Sprintf("brick-e2e-crypt-%d", time.Now().UnixNano())}
	if err := ksJSON(ctx, "PUT", barbicanURL+"/v1/secrets/"+b.keyID+"/acl", memberToken,
		map[string]any{"read": map[string]any{"project-access": false}}, nil); err != nil {
		return u, fmt.Errorf("make the key private: %w", err)
	}
	admin, err := ksToken(ctx, k.AuthURL, k.Env["BRICK_TB_KEYSTONE_CLOUD_ADMIN_USER"],
		k.Env["BRICK_TB_KEYSTONE_CLOUD_ADMIN_PASSWORD"], k.Env["BRICK_TB_KEYSTONE_CLOUD_ADMIN_PROJECT"])
	if err != nil {
		return u, fmt.Errorf("cloud admin token: %w", err)
	}
	var roles struct{ Roles []struct{ ID string } }
	if err := ksJSON(ctx, "GET", k.AuthURL+"/roles?name=member", admin, nil, &roles); err != nil || len(roles.Roles) != 1 {
		return u, fmt.Errorf("role member: %v (%d found)", err, len(roles.Roles))
	}
	u.Password = hex.EncodeToString([]byte(u.Name))[:24]
	var made struct{ User struct{ ID string } }
	if err := ksJSON(ctx, "POST", k.AuthURL+"/users", admin, map[string]any{"user": map[string]any{
		"name": u.Name, "password": u.Password, "domain_id": "default"}}, &made); err != nil {
		return u, err
	}
	u.ID = made.User.ID
	b.other = func(ctx context.Context) error {
		return ksJSON(ctx, "DELETE", k.AuthURL+"/users/"+u.ID, admin, nil, nil)
	}
	return u, ksJSON(ctx, "PUT", k.AuthURL+"/projects/"+k.ProjectID+"/users/"+u.ID+"/roles/"+roles.Roles[0].ID, admin, nil, nil)
}

func ksToken(ctx context.Context, authURL, user, password, project string) (string, error) {
	body, _ := json.Marshal(map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{
			"user": map[string]any{"name": user, "domain": map[string]any{"id": "default"}, "password": password}}},
		"scope": map[string]any{"project": map[string]any{"name": project, "domain": map[string]any{"id": "default"}}},
	}})
	req, err := http.NewRequestWithContext(ctx, "POST", authURL+"/auth/tokens", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("token for %s: HTTP %d", user, resp.StatusCode)
	}
	return resp.Header.Get("X-Subject-Token"), nil
}

// keyPatterns are what must not show up anywhere: each key as the
// passphrase (lowercase hex) and upper-case hex, and the raw key in base64
// (what a JSON encoding of the bytes would hold).
func keyPatterns(fixedHex string, barbicanKey []byte) []string {
	var pats []string
	fixed, _ := hex.DecodeString(fixedHex)
	for _, k := range [][]byte{fixed, barbicanKey} {
		h := hex.EncodeToString(k)
		pats = append(pats, h, strings.ToUpper(h), base64.StdEncoding.EncodeToString(k))
	}
	return pats
}

func ksJSON(ctx context.Context, method, url, token string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: HTTP %d: %.300s", method, url, resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

func TestEncryptedVolumes(t *testing.T) {
	lane(t, laneServices)
	sharedGuest.prestart() // boots while the host prepares
	start := time.Now()
	c := needCinder(t, guestCinderOptions)
	fixedKey := c.Env["BRICK_TB_CINDER_FIXED_KEY"]
	require.Equal(t, "both", c.Env["BRICK_TB_CINDER_KEY_MANAGER"],
		"the test bed Cinder's key manager: the fixed key for noauth requests, Barbican through Keystone (test/cinder/brick_tb_keymgr.py)")
	vols := cryptVolumes(t, c, "luks", "luks", "luks3")
	volA, volC, volU := vols[0], vols[1], vols[2]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	bb := &barbicanSide{c: c, luks2: cryptType(ctx, t, c, "luks2")}
	cancel()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if bb.volID != "" {
			_ = c.InProject(bb.project).DeleteVolume(ctx, bb.volID) // noauth: the test bed keeps its key in Barbican
		}
		if bb.other != nil {
			_ = bb.other(ctx)
		}
		if bb.started && !bb.stopped {
			_ = exec.CommandContext(ctx, "../barbican/down.sh").Run()
		}
	})
	plain := "brick-crypt-plaintext-" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
	prep := time.Since(start)
	g := runSharedGuest(t, c, cryptGuestScript, map[string]string{}, map[string]string{
		"VOL_A": volA.ID, "VOL_C": volC.ID, "VOL_U": volU.ID, "FIXED_KEY": fixedKey, "PLAIN": plain,
	}, func(ctx context.Context, share string) { bb.run(ctx, t, share, start) })
	require.NoError(t, bb.err, "Barbican side")
	t.Logf("host: volumes ready after %s; Barbican, its volume and key ready after %s", prep.Round(100*time.Millisecond), bb.ready.Round(100*time.Millisecond))
	kv := func(label string) string { return strings.Join(g.lines["KV "+label], " ") }
	tm := func(label string) string { return strings.Join(g.lines["TIME "+label], " ") }
	clean := func(t *testing.T, label string) {
		t.Helper()
		require.Equal(t, []string{"available", "-", "0", "0", "0", "0"}, g.lines["STATE "+label],
			"after %s: volume available, no session, no sd, no dm-crypt map, no record", label)
	}
	header := func(t *testing.T, vol, typ string) {
		t.Helper()
		file := c.BackingFile(vol)
		out, err := exec.Command("cryptsetup", "isLuks", "--type", typ, file).CombinedOutput()
		require.NoError(t, err, "%s: %s header: %s", vol, typ, out)
		found, err := sparseContains(file, []byte(plain))
		require.NoError(t, err)
		require.False(t, found, "plaintext found in the raw volume %s", vol)
	}
	for _, p := range []struct{ label, provider, header, vol, auth string }{
		{"luks", "luks", "luks1", volA.ID, "fixed key, noauth Cinder"},
		{"luks2", "luks2", "luks2", bb.volID, "Barbican, Keystone member"},
	} {
		t.Run("round trip "+p.label+" ("+p.auth+")", func(t *testing.T) {
			mapper := "/dev/mapper/crypt-" + p.vol
			require.Equal(t, "0", g.rc("attach1-"+p.label), "%s", readShare(g.share, "a1-"+p.label+".err"))
			require.Equal(t, mapper, kv("path-"+p.label))
			require.Equal(t, p.provider, kv("encryption-"+p.label))
			require.Equal(t, mapper, kv("mounted-"+p.label))
			require.Equal(t, "0", g.rc("detach1-"+p.label), "%s", readShare(g.share, "d1-"+p.label+".out"))
			clean(t, "detached1-"+p.label)
			require.Equal(t, "0", g.rc("attach2-"+p.label), "%s", readShare(g.share, "a2-"+p.label+".err"))
			require.Equal(t, plain+"-"+p.label, kv("readback-"+p.label))
			require.Equal(t, "0", g.rc("detach2-"+p.label))
			clean(t, "detached2-"+p.label)
			header(t, p.vol, p.header)
			t.Logf("%s: attach+luksFormat+mkfs %ss, detach %ss, re-attach %ss", p.label, tm("attach1-"+p.label), tm("detach1-"+p.label), tm("attach2-"+p.label))
			t.Logf("%s: the first attach's commands of 0.5 s or more: %s", p.label, slowCommands(readShare(g.share, "a1-"+p.label+".err"), 500*time.Millisecond))
		})
	}
	for _, l := range []string{"luks", "luks2"} {
		t.Run("a random key's slot is not stretched ("+l+")", func(t *testing.T) {
			dump := readShare(g.share, "dump-"+l+".txt")
			require.Equal(t, "0", g.rc("luksdump-"+l), "cryptsetup luksDump:\n%s", dump)
			kdf, iter := keySlot0KDF(dump)
			require.Equal(t, []string{"pbkdf2", "1000"}, []string{kdf, iter},
				"key slot 0's PBKDF and iterations for a 256-bit key; cryptsetup luksDump:\n%s", dump)
		})
	}
	t.Run("brick list shows the dm-crypt device", func(t *testing.T) {
		require.Contains(t, readShare(g.share, "list-luks.out"), "/dev/mapper/crypt-"+volA.ID)
	})
	t.Run("os-brick opens what brick formatted", func(t *testing.T) {
		require.Equal(t, "0", g.rc("nodecrypt-b"), "%s", readShare(g.share, "nd-b.err"))
		require.NotEqual(t, "0", kv("nodecrypt-warning-b"), "--no-decrypt warns")
		require.Equal(t, "0", g.rc("osbrick-open"), "%s", readShare(g.share, "osbrick.err"))
		require.Equal(t, plain+"-luks2", kv("osbrick-read"))
		require.Equal(t, "0", g.rc("nodecrypt-detach-b"))
	})
	t.Run("brick opens what os-brick formatted", func(t *testing.T) {
		require.Equal(t, "0", g.rc("nodecrypt-c"), "%s", readShare(g.share, "nd-c.err"))
		require.Equal(t, "0", g.rc("osbrick-format"), "%s", readShare(g.share, "osbrick.err"))
		require.Equal(t, "0", g.rc("nodecrypt-detach-c"))
		require.Equal(t, "0", g.rc("attach2-osb"), "%s", readShare(g.share, "a2-osb.err"))
		require.Equal(t, plain+"-osbrick", kv("readback-osb"))
		require.Equal(t, "0", g.rc("detach2-osb"))
		clean(t, "detached2-osb")
		header(t, volC.ID, "luks1")
	})
	for _, r := range []struct{ label, vol, want, why string }{
		{"nokey", volA.ID, "fixed key file", "no key access (standalone Cinder, no fixed key file)"},
		{"provider", volU.ID, "luks3", "unknown provider"},
		{"acl", bb.volID, "HTTP 403", "no key access (Barbican 403: a project member outside the key's ACL)"},
		{"unreachable", bb.volID, "cannot reach the key manager", "key manager unreachable (Barbican stopped)"},
	} {
		t.Run("refusal: "+r.why, func(t *testing.T) {
			if r.label == "unreachable" && kv("barbican-stopped") != "stopped" {
				t.Skipf("Barbican was not started by this test, so it was not stopped (%s)", kv("barbican-stopped"))
			}
			out := readShare(g.share, "r-"+r.label+".out")
			require.NotEqual(t, "0", g.rc("refuse-"+r.label), "%s", out)
			require.Equal(t, "1", kv("refuse-"+r.label+"-lines"), "%s", out)
			line := kv("refuse-" + r.label + "-line")
			require.Contains(t, line, "crypt-key: encrypted volume "+r.vol, "refused before the connect")
			require.Contains(t, line, r.want)
			clean(t, "refused-"+r.label)
			t.Logf("%s (%ss): %s", r.label, tm("refuse-"+r.label), line)
		})
	}
	t.Run("no key or passphrase in outputs, logs, records, ps snapshots", func(t *testing.T) {
		pats := keyPatterns(fixedKey, bb.key)
		snaps, seen := 0, 0
		for _, l := range []string{"luks", "luks2"} {
			var n, c int
			_, err := fmt.Sscan(kv("ps-"+l), &n, &c)
			require.NoError(t, err, "ps-%s", l)
			snaps, seen = snaps+n, seen+c
		}
		require.Positive(t, snaps, "ps snapshots taken")
		require.Positive(t, seen, "the snapshots caught cryptsetup at work")
		inputs := map[string]bool{"bkey.hex": true, "keypats": true, "clouds.yaml": true, "bb.env": true}
		checked := 0
		require.NoError(t, filepath.WalkDir(g.share, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || inputs[d.Name()] || strings.Contains(path, "/.brick/") || d.Name() == "brick" {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			checked++
			for _, p := range pats {
				require.False(t, bytes.Contains(b, []byte(p)), "%s holds a key pattern", path)
			}
			return nil
		}))
		for _, p := range pats {
			require.NotContains(t, g.out, p, "guest output")
		}
		require.Equal(t, "0", kv("guest-leaks"), "records, locks, /tmp in the guest")
		t.Logf("%d files of the share checked, %d ps snapshots (%d cryptsetup argv lines seen)", checked, snaps, seen)
	})
	t.Logf("guest steps: wait for Barbican %ss, os-brick's imports %ss (beside the steps before), its open and format %ss",
		tm("wait-barbican"), tm("osbrick-imports"), tm("osbrick"))
	t.Logf("TestEncryptedVolumes wall time %v", time.Since(start).Round(time.Second))
}

// keySlot0KDF reads key slot 0's PBKDF and iteration count from cryptsetup
// luksDump's text ("" for what it does not find). LUKS1 prints a slot as
// "Key Slot 0: ENABLED" with no PBKDF line (it has only PBKDF2); LUKS2
// lists slots as "  0: luks2" under "Keyslots:", their fields tab-indented.
func keySlot0KDF(dump string) (kdf, iter string) {
	section, slot := "", ""
	for _, l := range strings.Split(dump, "\n") {
		switch {
		case l == "":
		case !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "\t"):
			section, slot = strings.TrimSpace(l), ""
			if strings.HasPrefix(section, "Key Slot 0: ENABLED") {
				slot, kdf = "0", "pbkdf2"
			}
		case strings.HasPrefix(l, "  ") && section == "Keyslots:":
			slot, _, _ = strings.Cut(strings.TrimSpace(l), ":")
		case strings.HasPrefix(l, "\t") && slot == "0":
			k, v, _ := strings.Cut(strings.TrimSpace(l), ":")
			switch k {
			case "PBKDF":
				kdf = strings.TrimSpace(v)
			case "Iterations":
				iter = strings.TrimSpace(v)
			}
		}
	}
	return kdf, iter
}

// slowCommands lists the commands of a brick --debug log (slog's text
// lines: argv="..." ... took=1.5s) that took at least min, each as its
// program, first non-flag argument and time ("none" when none did).
func slowCommands(log string, min time.Duration) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		_, argv, ok := strings.Cut(l, ` argv="`)
		_, took, ok2 := strings.Cut(l, " took=")
		if !ok || !ok2 {
			continue
		}
		argv, _, _ = strings.Cut(argv, `"`)
		took, _, _ = strings.Cut(took, " ")
		d, err := time.ParseDuration(took)
		if err != nil || d < min {
			continue
		}
		name := ""
		for _, f := range strings.Fields(argv) {
			if name == "" || !strings.HasPrefix(f, "-") {
				name += " " + f
			}
			if strings.Count(name, " ") == 2 {
				break
			}
		}
		out = append(out, strings.TrimSpace(name)+" "+took)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// sparseContains reports whether the file holds needle, reading only its
// data extents (SEEK_DATA/SEEK_HOLE): holes read as zeros and cannot hold
// it, and a 1 GiB volume file with a few MiB written took grep 2 s.
func sparseContains(path string, needle []byte) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	fd := int(f.Fd())
	buf := make([]byte, 1<<20)
	var off int64
	for {
		start, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			return false, nil // no data after off
		}
		if err != nil {
			return false, fmt.Errorf("%s: seek data: %w", path, err)
		}
		end, err := unix.Seek(fd, start, unix.SEEK_HOLE)
		if err != nil {
			return false, fmt.Errorf("%s: seek hole: %w", path, err)
		}
		// Extents are read whole; a needle across a hole would hold zeros.
		r := io.NewSectionReader(f, start, end-start)
		tail := []byte{}
		for {
			n, err := r.Read(buf)
			chunk := append(tail, buf[:n]...)
			if bytes.Contains(chunk, needle) {
				return true, nil
			}
			tail = append([]byte{}, chunk[max(0, len(chunk)-len(needle)+1):]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				return false, fmt.Errorf("%s: %w", path, err)
			}
		}
		off = end
	}
}

func readShare(share, name string) string {
	b, _ := os.ReadFile(filepath.Join(share, name))
	return string(b)
}
