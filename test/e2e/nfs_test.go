//go:build e2e

package e2e

// TestNFS proves the NFS connector (connector/nfs) on a real kernel: an NFS
// server in the qemu guest (test/guest/fixtures/nfs-server.sh), the built
// brick binary's connect and disconnect commands, all checks in one boot:
//
//  1. connect over NFS 4.2 -> write into the file -> disconnect: the share
//     is unmounted, its mount point gone, and the data is in the server's
//     export;
//  2. two volumes on one share: the first disconnect keeps the share for
//     the second (and a disconnect of an open volume is refused until it is
//     closed); the second unmounts it;
//  3. --as-block (and BRICK_NFS_MOUNT_OPTIONS reaching mount): a direct-I/O
//     loop device; a pattern written through it lands in the file on the
//     server; disconnect removes the loop device and unmounts;
//  4. a v3-only server (rpc.nfsd -N 4): 4.2 and 4.1 are refused, the
//     fallback mounts v3, and the data still lands;
//  5. --force with the volume file open: the share is detached (lazily)
//     and its mount point removed;
//  6. an [IPv6]:/path export (::1) mounts, unmounts and keeps the data;
//  7. --as-block online extend (issue 22): the file grows on the server
//     under a writer on the mounted ext4; brick extend --local-only makes
//     the loop device, df and the record show the new size.

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brick-storage/brick/internal/testbed/guest"
)

func TestNFS(t *testing.T) {
	lane(t, laneGuestOnly)
	brick := buildBrick(t)
	dir := t.TempDir()
	pattern := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 8))
	for i := range pattern {
		pattern[i] = byte(rng.Uint32())
	}
	patternFile := filepath.Join(dir, "pattern")
	if err := os.WriteFile(patternFile, pattern, 0o644); err != nil {
		t.Fatal(err)
	}

	files := map[string]string{brick: "brick", patternFile: "pattern"}
	// BRICK_BENCH=1: rounds after check 1, brick against os-brick.
	env, benchFiles, rounds := libBench("BRICK_BENCH_NFS_ROUNDS")
	for k, v := range benchFiles {
		files[k] = v
	}
	benchTime := time.Duration(rounds) * 2 * time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute+benchTime)
	defer cancel()
	start := time.Now()
	res, err := runGuest(t, ctx, guest.Options{
		Script: nfsScript,
		Files:  files,
		Env:    env,
		// About 4 min on an idle host; each brick run costs seconds under
		// TCG, and far more when other guests share the 2 cores.
		Timeout: 12*time.Minute + benchTime,
	})
	if res != nil {
		t.Logf("guest output:\n%s", res.Output)
	}
	requireSuccess(t, res, err)
	out := string(res.Output)
	for _, want := range []string{
		"check 1 ok: vers=4.2, unmounted, data on the export",
		"check 2 ok: share kept for the second volume, busy refused, then unmounted",
		"check 3 ok: loop device with dio, pattern in the file, loop gone, unmounted",
		"check 4 ok: v3-only server, fallback reached vers=3, data on the export",
		"check 5 ok: --force detached the busy share lazily",
		"check 6 ok: IPv6 export mounted, unmounted, data on the export",
		"check 7 ok: --as-block loop device grown online",
		"all nfs checks passed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, m := range regexp.MustCompile(`(?m)(brick \w+ took [0-9.]+s|^timing extend .*$)`).FindAllString(out, -1) {
		t.Log(m)
	}
	if rounds > 0 {
		logLibBench(t, "NFS", out, start)
	}
}

const nfsScript = `
set -Eeuo pipefail` + extendLocalShell + libBenchShell + `
trap 'echo "FAILED (exit $?) at line $LINENO: $BASH_COMMAND"; echo "--- brick log"; cat drive.log 2>/dev/null' ERR
step() { echo "== $* ($(cut -d' ' -f1 /proc/uptime)s)"; }
# A private copy: exec pages come from the guest's tmpfs, not over 9p.
cp /brick/brick /tmp/brick
B=/tmp/brick
OFF=4 # MiB

step "nfs server"
eval "$("$BRICK_FIXTURES/nfs-server.sh" --size 128M)"
modprobe loop
truncate -s 16M "$NFS_EXPORT"/volume-{a,b,c,d}

info() { # export name > file
	printf '{"driver_volume_type":"nfs","data":{"export":"%s","name":"%s","format":"raw"}}\n' "$1" "$2" >"$2.json"
}
# Shell arithmetic, not bc and tee: under TCG every process start costs.
took() {
	local d=$((${EPOCHREALTIME/./} - ${2/./})) line
	printf -v line 'brick %s took %d.%06ds' "$1" $((d / 1000000)) $((d % 1000000))
	echo "$line"
	echo "$line" >>times.log
}
connect() { # name [flags...]: sets DEV_* and keeps the printed device
	local name=$1 t0=$EPOCHREALTIME; shift
	"$B" connect --connection-info "$name.json" -f json "$@" >"$name.dev" 2>>drive.log
	took connect "$t0"
	local vars
	vars=$(jq -r '"DEV_PATH=\(.path)", "DEV_TYPE=\(.type)", (.extra | to_entries[] | "DEV_\(.key | ascii_upcase)=\(.value)")' "$name.dev")
	echo "   ${vars//$'\n'/$'\n'   }"
	eval "$vars"
}
disconnect() { # name [device file] [flags...]
	local name=$1 dev=${2:-} t0=$EPOCHREALTIME; shift; shift || true
	"$B" disconnect --connection-info "$name.json" ${dev:+--device-info "$dev"} "$@" 2>>drive.log
	took disconnect "$t0"
}
# "! cmd" never trips set -e, hence a function.
unmounted() { if mountpoint -q "$1" 2>/dev/null; then echo "$1 is still mounted"; exit 1; fi; [[ ! -e $1 ]]; }
nfs_mounts() {
	local n=0 src mnt type rest
	while read -r src mnt type rest; do
		[[ $type == nfs || $type == nfs4 ]] && n=$((n + 1))
	done </proc/mounts
	echo "$n"
}
on_export() { # name: the pattern sits at OFF MiB in the server's copy of the file
	dd if="$NFS_EXPORT/$1" of=/tmp/readback bs=1M skip=$OFF count=1 status=none
	cmp pattern /tmp/readback
}

step "check 1: connect, write, disconnect over NFS 4.2 ($NFS_V4_SHARE)"
info "$NFS_V4_SHARE" volume-a
connect volume-a
[[ $DEV_NFS_VERSION == 4.2 && $DEV_TYPE == file && -f $DEV_PATH ]]
mp=$DEV_MOUNT_POINT
mountpoint -q "$mp"
dd if=pattern of="$DEV_PATH" bs=1M seek=$OFF conv=notrunc,fsync status=none
disconnect volume-a volume-a.dev
unmounted "$mp"
(( $(nfs_mounts) == 0 ))
on_export volume-a
disconnect volume-a volume-a.dev # idempotent
echo "check 1 ok: vers=4.2, unmounted, data on the export"

if ((${BENCH_ROUNDS:-0} > 0)); then
	step "benchmark: NFS connect+disconnect, brick against os-brick, $BENCH_ROUNDS rounds"
	bench_left() { nfs_mounts; }
	bench_clean() { umount -a -t nfs,nfs4 || true; }
	bench_rounds nfs volume-a.json
fi

step "check 2: two volumes on one share"
info "$NFS_V4_SHARE" volume-a
info "$NFS_V4_SHARE" volume-b
connect volume-a
mp=$DEV_MOUNT_POINT
connect volume-b
[[ $DEV_MOUNT_POINT == "$mp" && $DEV_MOUNT_REUSED == true ]]
(( $(nfs_mounts) == 1 ))
disconnect volume-a volume-a.dev
mountpoint -q "$mp"
[[ -f $DEV_PATH ]]
exec 9<>"$DEV_PATH"
rc=0; "$B" disconnect --connection-info volume-b.json --device-info volume-b.dev 2>busy.err || rc=$?
cat busy.err
(( rc == 1 ))
grep -q "in use by .*(bash).*device busy" busy.err
mountpoint -q "$mp"
exec 9>&-
disconnect volume-b # no device record: found from the state
unmounted "$mp"
(( $(nfs_mounts) == 0 ))
echo "check 2 ok: share kept for the second volume, busy refused, then unmounted"

step "check 3: --as-block"
info "$NFS_V4_SHARE" volume-c
BRICK_NFS_MOUNT_OPTIONS=timeo=900 connect volume-c --as-block
grep -q " nfs4 .*timeo=900" /proc/mounts
[[ $DEV_TYPE == block && $DEV_PATH =~ ^/dev/loop[0-9]+$ && -b $DEV_PATH ]]
loop=$(basename "$DEV_PATH")
losetup -l "$DEV_PATH"
[[ $(cat /sys/block/$loop/loop/dio) == 1 ]]
dd if=pattern of="$DEV_PATH" bs=1M seek=$OFF oflag=direct conv=fsync status=none
disconnect volume-c volume-c.dev
[[ ! -e /sys/block/$loop/loop ]]
(( $(nfs_mounts) == 0 ))
on_export volume-c
echo "check 3 ok: loop device with dio, pattern in the file, loop gone, unmounted"

step "check 4: v3-only server"
rpc.nfsd 0
rpc.nfsd -N 4 2
cat /proc/fs/nfsd/versions
info "$NFS_V3_SHARE" volume-d
connect volume-d --debug
[[ $DEV_NFS_VERSION == 3 ]]
grep -q 'trying an older version.*version=4.2' drive.log
grep -q 'trying an older version.*version=4.1' drive.log
dd if=pattern of="$DEV_PATH" bs=1M seek=$OFF conv=notrunc,fsync status=none
disconnect volume-d volume-d.dev
(( $(nfs_mounts) == 0 ))
on_export volume-d
echo "check 4 ok: v3-only server, fallback reached vers=3, data on the export"

step "check 5: --force with the file open"
info "$NFS_V3_SHARE" volume-a
connect volume-a
mp=$DEV_MOUNT_POINT
exec 9<>"$DEV_PATH"
disconnect volume-a volume-a.dev --force
(( $(nfs_mounts) == 0 ))
unmounted "$mp"
exec 9>&-
grep -q "detaching it lazily" drive.log
echo "check 5 ok: --force detached the busy share lazily"

step "check 6: an [IPv6]:/path export"
echo "$NFS_EXPORT ::1(rw,sync,no_subtree_check,no_root_squash,insecure,fsid=0)" >>/etc/exports
exportfs -ra
info "[::1]:$NFS_EXPORT" volume-b
connect volume-b
[[ $DEV_EXPORT == "[::1]:$NFS_EXPORT" ]]
mp=$DEV_MOUNT_POINT
grep -q "^\[::1\]:$NFS_EXPORT $mp " /proc/mounts
dd if=pattern of="$DEV_PATH" bs=1M seek=$OFF conv=notrunc,fsync status=none
disconnect volume-b volume-b.dev
unmounted "$mp"
(( $(nfs_mounts) == 0 ))
on_export volume-b
echo "check 6 ok: IPv6 export mounted, unmounted, data on the export"

step "check 7: --as-block online extend 16 -> 32 MiB under a writer"
truncate -s 16M "$NFS_EXPORT/volume-e"
info "$NFS_V3_SHARE" volume-e
connect volume-e --as-block
extend_check nfs volume-e.json volume-e.dev $((32 << 20)) truncate -s 32M "$NFS_EXPORT/volume-e"
disconnect volume-e volume-e.dev
(( $(nfs_mounts) == 0 ))
echo "check 7 ok: --as-block loop device grown online"

step "brick log"
grep -v 'level=DEBUG' drive.log || true
echo "all nfs checks passed"
`
