//go:build e2e

package e2e

// TestRBD proves the RBD connector (connector/rbd) on a real kernel against
// a real one-OSD Ceph with cephx on (test/guest/fixtures/ceph.sh), driven
// through the real `brick connect` / `brick disconnect` with --debug. All
// checks share one boot, because building the cluster is the expensive part:
//
//  1. krbd and nbd: connect with the key in the connection info -> write a
//     pattern -> disconnect -> the pattern reads back through a fresh
//     mapping; the temporary keyring existed (0600, in a 0700 dir) only
//     while rbd ran and is gone after; the key is in no --debug output, no
//     printed device and no process's argv (captured while mapping);
//  2. two pools holding an image of the same name, plus a namespace, mapped
//     at once: connecting again reuses the mapping, disconnecting one leaves
//     the others mapped with their data;
//  3. a wrong key: a clear error, nothing mapped, no temporary file left
//     (krbd and nbd);
//  4. disconnect refuses a mounted device and reports EBUSY for an open
//     one; --force unmaps an open one;
//  5. no key in the connection info: the host's /etc/ceph keyring is used;
//  6. without a udev daemon krbd maps and unmaps (noudev) instead of hanging;
//  7. online extend (issue 22), krbd and nbd: the image grows from 32 to
//     64 MiB under a writer on its mounted ext4; brick extend --local-only
//     sees the new size (rbd info), the device, df and the record follow.
//
// Checks 5, 7 (krbd) and 4 share one mapping, made with the host's keyring.
// The script counts mappings in the kernel's records (sysfs; rbd-nbd's pid
// and comm), not with `rbd device list`, which costs 1-4 s per start
// here; check 2 compares the two once.
//
// Run (as root, after test/install.sh; go test's default 10m is too short):
//
//	go test -tags e2e -timeout 45m -run 'TestRBD$' -v ./test/e2e/

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brick-storage/brick/internal/testbed/guest"
)

func TestRBD(t *testing.T) {
	lane(t, laneGuestOnly)
	dir := t.TempDir()
	brick := filepath.Join(dir, "brick")
	build := exec.CommandContext(testContext(t), "go", "build", "-o", brick, "../../cmd/brick")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build brick: %v\n%s", err, out)
	}
	pattern := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	for i := range pattern {
		pattern[i] = byte(rng.Uint32())
	}
	patternFile := filepath.Join(dir, "pattern")
	if err := os.WriteFile(patternFile, pattern, 0o644); err != nil {
		t.Fatal(err)
	}

	// Under TCG every rbd start costs seconds, and far more on a host busy
	// with other guests: a whole run took 13-25 min there.
	// BRICK_BENCH=1: krbd rounds after check 1, brick against os-brick.
	benchEnv, benchFiles, rounds := libBench("BRICK_BENCH_RBD_ROUNDS")
	benchTime := time.Duration(rounds) * 2 * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute+benchTime)
	defer cancel()
	// The fast lane (test/e2e.sh -short) runs check 1 only.
	files := map[string]string{brick: "brick", patternFile: "pattern"}
	env := map[string]string{"BRICK_E2E_SHORT": strconv.FormatBool(testing.Short())}
	// BRICK_E2E_RBD_AB=PATH, a measurement, not a proof: that brick binary
	// (e.g. built from an older commit) and this one connect and
	// disconnect in turns in the same boot, so a busy host skews both alike.
	if ab := os.Getenv("BRICK_E2E_RBD_AB"); ab != "" {
		files[ab] = "brick-ab"
		env["BRICK_E2E_RBD_AB"] = "1"
	}
	for k, v := range benchEnv {
		env[k] = v
	}
	for k, v := range benchFiles {
		files[k] = v
	}
	start := time.Now()
	res, err := runGuest(t, ctx, guest.Options{
		Script:  rbdScript,
		Files:   files,
		Timeout: 32*time.Minute + benchTime,
		Env:     env,
		// BRICK_E2E_SHARE keeps the share (and its live output in
		// .brick/output) where a developer can watch it.
		ShareDir: os.Getenv("BRICK_E2E_SHARE"),
	})
	if res != nil {
		t.Logf("guest output:\n%s", res.Output)
	}
	requireSuccess(t, res, err)
	out := string(res.Output)
	wants := []string{
		"check 1 ok: krbd",
		"check 1 ok: nbd",
		"check 2 ok: same image name in two pools and a namespace",
		"check 3 ok: wrong key (krbd)",
		"check 3 ok: wrong key (nbd)",
		"check 4 ok: mounted refused, open reported busy, forced unmap",
		"check 5 ok: host keyring",
		"check 6 ok: noudev",
		"check 7 ok: extend (krbd)",
		"check 7 ok: extend (nbd)",
		"all rbd checks passed",
	}
	if testing.Short() {
		wants = []string{"check 1 ok: krbd", "check 1 ok: nbd", "rbd check 1 passed; checks 2-6 left to the whole suite"}
	}
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^(timing|secret grep).*$`).FindAllString(out, -1) {
		t.Log(m)
	}
	if rounds > 0 {
		logLibBench(t, "RBD (krbd)", out, start)
	}
	t.Logf("TestRBD wall time %v", time.Since(start).Round(time.Second))
}

const rbdScript = guestShellHelpers + `
set -Eeuo pipefail` + extendLocalShell + libBenchShell + `
trap 'echo "FAILED (exit $?) at line $LINENO: $BASH_COMMAND"; for f in *.err; do echo "--- $f"; tail -n 20 "$f"; done 2>/dev/null' ERR
step() { local up; read -r up _ </proc/uptime; echo "== $* (${up}s)"; }
# Run brick from the guest's tmpfs, as a user runs it from a local disk:
# /brick is 9p without a cache, and each start there re-reads the binary
# (about 2 s of every connect and disconnect under TCG).
cp /brick/brick /tmp/brick
B=/tmp/brick
OFF=4 # MiB

step "ceph cluster"
eval "$("$BRICK_FIXTURES/ceph.sh")"
# A second pool, a namespace in the first, and every image (volumes/vol1,
# volumes/vol2, volumes2/vol1, volumes/ns1/vol1: one name in two pools and
# a namespace) through one python3-rados process: each rbd or ceph CLI
# start costs seconds here.
timeout 180 /usr/bin/python3 - "$CEPH_USER" <<'PY'
import json, sys, rados, rbd
user = sys.argv[1]
c = rados.Rados(conffile="/etc/ceph/ceph.conf", name="client.admin")
c.connect(timeout=60)
def mon(**cmd):
    ret, out, err = c.mon_command(json.dumps(cmd), b"", timeout=60)
    if ret != 0:
        sys.exit("mon command %s failed (%d): %s" % (cmd["prefix"], ret, err))
mon(prefix="osd pool create", pool="volumes2", pg_num=8, pgp_num=8)
mon(prefix="osd pool application enable", pool="volumes2", app="rbd")
mon(prefix="auth caps", entity="client." + user,
    caps=["mon", "profile rbd", "osd", "profile rbd pool=volumes, profile rbd pool=volumes2"])
features = rbd.RBD_FEATURE_LAYERING | rbd.RBD_FEATURE_EXCLUSIVE_LOCK
for pool, ns, name in [("volumes", "", "vol1"), ("volumes", "", "vol2"), ("volumes2", "", "vol1"), ("volumes", "ns1", "vol1")]:
    io = c.open_ioctx(pool)
    if ns:
        if not rbd.RBD().namespace_exists(io, ns):
            rbd.RBD().namespace_create(io, ns)
        io.set_namespace(ns)
    rbd.RBD().create(io, name, 32 << 20, old_format=False, features=features)
    io.close()
c.shutdown()
PY
step "pools, namespace and images made"
KEY=$(sed -n 's/^[[:space:]]*key = //p' "$CEPH_KEYRING")
[[ -n $KEY ]]
# The key must reach rbd only through brick: hide the host's copy of it.
mv "$CEPH_KEYRING" /root/user.keyring
modprobe nbd

info() { # name keyring-key [extra json] > stdout
	local keyring=""
	[[ -n $2 ]] && keyring=$(printf ',"keyring":"[client.%s]\\n\\tkey = %s\\n"' "$CEPH_USER" "$2")
	printf '{"driver_volume_type":"rbd","data":{"name":"%s","hosts":["127.0.0.1"],"ports":["6789"],"cluster_name":"ceph","auth_enabled":true,"auth_username":"%s","secret_type":"ceph","secret_uuid":null,"discard":true,"qos_specs":null,"access_mode":"rw"%s%s}}\n' \
		"$1" "$CEPH_USER" "$keyring" "${3:-}"
}
# took T0: seconds since T0 (now's format), with builtins.
took() {
	local d=$((10#${EPOCHREALTIME/./} - 10#${1/./}))
	printf '%d.%02d' $((d / 1000000)) $((d % 1000000 / 10000))
}
# watch: record every process's argv (whole command lines, read from
# /proc with builtins: a ps per round cost a core under TCG) and the
# temporary credentials while brick runs.
watch_start() {
	: >ps.log; : >creds.log
	( set +e; trap - ERR
	  while :; do
		for f in /proc/[0-9]*/cmdline; do
			mapfile -d '' a <"$f" 2>/dev/null || continue
			((${#a[@]})) && printf '%s\n' "${a[*]}"
		done >>ps.log
		stat -c '%a %U %n' /run/brick/ceph /run/brick/ceph/map-* /run/brick/ceph/map-*/* >>creds.log 2>/dev/null
		pause 0.05 # leave the CPU to rbd; a map lasts seconds
	done ) &
	WATCH=$!
}
watch_stop() { kill "$WATCH"; wait "$WATCH" 2>/dev/null || true; }
no_key_in() { # files...
	if grep -lF -- "$KEY" "$@"; then echo "THE KEY LEAKED into the files above"; exit 1; fi
}
no_creds_left() { [[ -z $(ls -A /run/brick/ceph 2>/dev/null) ]] || { ls -laR /run/brick/ceph; exit 1; }; }
mapped() { rbd device list -t "$1" --format json; }
# nmapped DRIVER: mappings in the kernel's records: krbd's sysfs devices;
# nbd devices served by a live rbd-nbd (by argv[0], as rbd-nbd tells).
nmapped() {
	local n=0 f pid argv0
	if [[ $1 == krbd ]]; then
		for f in /sys/bus/rbd/devices/*/pool; do [[ -e $f ]] && n=$((n + 1)); done
	else
		for f in /sys/block/nbd*/pid; do
			[[ -e $f ]] || continue
			pid="" argv0=()
			read -r pid <"$f" 2>/dev/null || true
			[[ -n $pid ]] && { mapfile -d '' -n 1 argv0 <"/proc/$pid/cmdline"; } 2>/dev/null || true
			[[ ${argv0[0]:-} == */rbd-nbd ]] && n=$((n + 1))
		done
	fi
	echo $n
}
# krbd_has POOL NAMESPACE IMAGE: that image is mapped with krbd.
krbd_has() {
	local d
	for d in /sys/bus/rbd/devices/*; do
		[[ -e $d/pool ]] || continue
		[[ $(<"$d/pool") == "$1" && $(<"$d/pool_ns") == "$2" && $(<"$d/name") == "$3" ]] && return 0
	done
	return 1
}
devpath() { sed -n 's/.*"path": *"\([^"]*\)".*/\1/p' "$1"; }

for drv in krbd nbd; do
	step "check 1 ($drv): connect with the key, write, disconnect, read back"
	img=vol1; [[ $drv == nbd ]] && img=vol2
	info "volumes/$img" "$KEY" >c1-$drv.json
	watch_start
	t0=$(now)
	$B --debug connect --connection-info c1-$drv.json --rbd-driver $drv -f json >dev1-$drv.json 2>c1-$drv.err
	echo "timing $drv connect (map): $(took $t0) s"
	watch_stop
	cat dev1-$drv.json
	dev=$(devpath dev1-$drv.json)
	[[ -b $dev ]]
	grep -q "device map --device-type $drv" ps.log || { echo "the watcher never saw rbd map running"; exit 1; }
	grep -q '^700 root /run/brick/ceph/map-' creds.log || { echo "no private dir seen during the map"; cat creds.log; exit 1; }
	grep -q '^600 root /run/brick/ceph/map-.*/keyring$' creds.log || { echo "no 0600 keyring seen during the map"; cat creds.log; exit 1; }
	if grep -v '^600 \|^700 ' creds.log; then echo "credentials with other modes or owners seen"; exit 1; fi
	no_creds_left
	dd if=pattern of="$dev" bs=1M seek=$OFF oflag=direct conv=fsync status=none
	t0=$(now)
	$B --debug disconnect --connection-info c1-$drv.json --device-info dev1-$drv.json 2>d1-$drv.err
	echo "timing $drv disconnect (unmap): $(took $t0) s"
	(( $(nmapped $drv) == 0 )) || { mapped $drv; exit 1; }
	$B --debug disconnect --connection-info c1-$drv.json 2>>d1-$drv.err # idempotent
	t0=$(now)
	$B --debug connect --connection-info c1-$drv.json --rbd-driver $drv -f json >dev1b-$drv.json 2>c1b-$drv.err
	echo "timing $drv connect (map, no watcher): $(took $t0) s"
	dev=$(devpath dev1b-$drv.json)
	dd if="$dev" of=/tmp/readback bs=1M skip=$OFF count=1 iflag=direct status=none
	cmp pattern /tmp/readback
	t0=$(now)
	$B --debug disconnect --connection-info c1-$drv.json --device-info dev1b-$drv.json 2>>d1-$drv.err
	echo "timing $drv disconnect (unmap, after reading): $(took $t0) s"
	(( $(nmapped $drv) == 0 ))
	no_creds_left
	no_key_in ./*.err ./dev*.json ps.log creds.log
	echo "secret grep ($drv): key found 0 times in $(cat ./*.err | wc -l) debug lines, $(grep -c . ps.log) argv lines captured during the map, the printed device"
	echo "nbd daemon argv after map (if any): $(grep -m1 rbd-nbd ps.log || true)"
	echo "check 1 ok: $drv"
done
if ((${BENCH_ROUNDS:-0} > 0)); then
	step "benchmark: krbd connect+disconnect, brick against os-brick, $BENCH_ROUNDS rounds"
	bench_left() { nmapped krbd; }
	bench_clean() { local d; for d in /sys/bus/rbd/devices/*; do [[ -e $d/pool ]] && rbd device unmap -o force "/dev/rbd${d##*/}"; done; true; }
	bench_rounds rbd c1-krbd.json --rbd-driver krbd
	no_creds_left
fi
if [[ $BRICK_E2E_SHORT == true ]]; then
	echo "rbd check 1 passed; checks 2-6 left to the whole suite"
	exit 0
fi

for drv in krbd nbd; do
	step "check 3 ($drv): wrong key"
	WRONG=$( { printf '\001\000\000\000\000\000\000\000\000\000\020\000'; head -c 16 /dev/urandom; } | base64)
	info volumes/vol1 "$WRONG" >w-$drv.json
	t0=$(now)
	rc=0; $B --debug connect --connection-info w-$drv.json --rbd-driver $drv --rbd-map-timeout 90s >w-$drv.out 2>w-$drv.err || rc=$?
	echo "timing $drv wrong key refused after $(took $t0) s (exit $rc)"
	(( rc == 1 ))
	grep '^brick: ' w-$drv.err | cut -c1-400
	grep -q '^brick: rbd map failed for volumes/vol1' w-$drv.err
	[[ ! -s w-$drv.out ]]
	(( $(nmapped krbd) + $(nmapped nbd) == 0 ))
	no_creds_left
	if grep -lF -- "$WRONG" w-$drv.err w-$drv.out; then echo "the wrong key leaked"; exit 1; fi
	echo "check 3 ok: wrong key ($drv)"
done

step "check 2: same image name in two pools and a namespace"
info volumes/vol1 "$KEY" >a.json
info volumes2/vol1 "$KEY" >b.json
info volumes/ns1/vol1 "$KEY" >n.json
for x in a b n; do $B --debug connect --connection-info $x.json -f json >dev-$x.json 2>c2-$x.err; done
da=$(devpath dev-a.json) db=$(devpath dev-b.json) dn=$(devpath dev-n.json)
echo "volumes/vol1=$da volumes2/vol1=$db volumes/ns1/vol1=$dn"
[[ $da != "$db" && $da != "$dn" && $db != "$dn" ]]
echo pool-b-marker | dd of="$db" bs=512 conv=sync,fsync oflag=direct status=none
$B --debug connect --connection-info a.json -f json >dev-a2.json 2>>c2-a.err
[[ $(devpath dev-a2.json) == "$da" ]]
grep -q '"reused": *"true"' dev-a2.json
(( $(nmapped krbd) == 3 ))
# Once, rbd's own listing must agree with the kernel's records.
mapped krbd | tee list2.json
(( $(grep -o '"device"' list2.json | wc -l) == 3 ))
for x in '"pool":"volumes","namespace":"","name":"vol1"' '"pool":"volumes2","namespace":"","name":"vol1"' '"pool":"volumes","namespace":"ns1","name":"vol1"'; do
	grep -qF "$x" list2.json
done
$B --debug disconnect --connection-info a.json 2>d2-a.err
krbd_has volumes2 "" vol1
krbd_has volumes ns1 vol1
if krbd_has volumes "" vol1; then echo "volumes/vol1 still mapped"; exit 1; fi
[[ $(dd if="$db" bs=512 count=1 iflag=direct status=none | head -c 13) == pool-b-marker ]]
$B --debug disconnect --connection-info b.json 2>d2-b.err
$B --debug disconnect --connection-info n.json 2>d2-n.err
(( $(nmapped krbd) == 0 ))
no_key_in ./*.err ./dev*.json
echo "check 2 ok: same image name in two pools and a namespace"

step "checks 5, 7 (krbd) and 4 on one mapping: the host's keyring, online extend, busy devices"
mv /root/user.keyring "$CEPH_KEYRING"
info volumes/vol1 "" >h.json
t0=$(now)
$B --debug connect --connection-info h.json -f json >dev-h.json 2>c5.err
echo "timing krbd connect (host keyring): $(took $t0) s"
grep -o 'argv="rbd device map[^"]*"' c5.err
dm=$(devpath dev-h.json)
[[ -b $dm ]]
no_creds_left
echo "check 5 ok: host keyring"
extend_check rbd-krbd h.json dev-h.json $((64 << 20)) rbd resize volumes/vol1 --size 64M --no-progress
no_key_in ./ext-*.err ./ext-*.json
echo "check 7 ok: extend (krbd)"
# extend_check left an ext4 on it, unmounted.
mkdir -p /mnt/rbd
mount "$dm" /mnt/rbd
rc=0; $B disconnect --connection-info h.json 2>d4-mounted.err || rc=$?
cat d4-mounted.err
(( rc == 1 )); grep -q 'mounted at /mnt/rbd' d4-mounted.err
[[ -b $dm ]]
umount /mnt/rbd
exec 7<"$dm"
rc=0; $B disconnect --connection-info h.json 2>d4-open.err || rc=$?
cat d4-open.err
(( rc == 1 )); grep -q 'device busy' d4-open.err
[[ -b $dm ]]
t0=$(now)
$B --debug disconnect --connection-info h.json --force 2>d4-force.err
echo "timing krbd disconnect (--force, open): $(took $t0) s"
exec 7<&-
(( $(nmapped krbd) == 0 ))
echo "check 4 ok: mounted refused, open reported busy, forced unmap"

step "check 7 (nbd): online extend 32 -> 64 MiB under a writer"
info volumes/vol2 "$KEY" >x-nbd.json
$B connect --connection-info x-nbd.json --rbd-driver nbd -f json >devx-nbd.json 2>cx-nbd.err
extend_check rbd-nbd x-nbd.json devx-nbd.json $((64 << 20)) rbd resize volumes/vol2 --size 64M --no-progress
$B --debug disconnect --connection-info x-nbd.json --device-info devx-nbd.json 2>dx-nbd.err
(( $(nmapped nbd) == 0 ))
no_key_in ./ext-*.err ./ext-*.json
echo "check 7 ok: extend (nbd)"

if [[ ${BRICK_E2E_RBD_AB:-} == 1 ]]; then
	step "A/B: /brick/brick-ab and this brick in turns, same boot"
	cp /brick/brick-ab /tmp/brick-ab
	for round in 1 2; do
		for drv in krbd nbd; do
			for who in ab this; do
				bin=$B; [[ $who == ab ]] && bin=/tmp/brick-ab
				t0=$(now)
				$bin --debug connect --connection-info c1-$drv.json --rbd-driver $drv -f json >ab.json 2>ab-c.err
				tc=$(took $t0); t0=$(now)
				$bin --debug disconnect --connection-info c1-$drv.json --device-info ab.json 2>ab-d.err
				echo "timing A/B round $round $drv $who: connect $tc s ($(grep -c 'msg=run' ab-c.err) commands), disconnect $(took $t0) s ($(grep -c 'msg=run' ab-d.err) commands)"
			done
		done
	done
	(( $(nmapped krbd) + $(nmapped nbd) == 0 ))
fi

step "check 6: krbd without a udev daemon"
pkill -x systemd-udevd
for _ in $(seq 50); do pidof systemd-udevd >/dev/null || break; sleep 0.1; done
t0=$(now)
$B --debug connect --connection-info h.json -f json >dev-u.json 2>c6.err
echo "timing krbd connect without udev: $(took $t0) s"
grep -o 'argv="rbd device map[^"]*"' c6.err
[[ -b $(devpath dev-u.json) ]]
t0=$(now)
$B --debug disconnect --connection-info h.json 2>d6.err
echo "timing krbd disconnect without udev: $(took $t0) s"
grep -o 'argv="rbd device unmap[^"]*"' d6.err
(( $(nmapped krbd) == 0 ))
echo "check 6 ok: noudev"

step "commands run by the unwatched connect and the disconnects, with their times"
for f in c1b-krbd.err d1-krbd.err c1b-nbd.err d1-nbd.err; do echo "--- $f"; cut -c1-240 "$f"; done
echo "all rbd checks passed"
`
