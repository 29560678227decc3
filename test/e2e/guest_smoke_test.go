//go:build e2e

package e2e

// Smoke tests for the qemu test guest (internal/testbed/guest) and the
// fixtures in test/guest/fixtures. Each one fails when a layer the protocol
// tests stand on is broken: the boot, the exit-code path, the hang guard,
// and each protocol's kernel + daemon stack. Checks share boots where they
// can, because every boot costs 10-16 s of wall time under TCG.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brick-storage/brick/internal/testbed/guest"
)

// runGuest boots a guest and logs the timings the test bed documents.
// Shared with the protocol e2e tests in this package.
func runGuest(t *testing.T, ctx context.Context, opts guest.Options) (*guest.Result, error) {
	t.Helper()
	start := time.Now()
	res, err := guest.Run(ctx, opts)
	if res != nil {
		t.Logf("guest %s: wall %v (qemu %v), boot %v, script %v, exit %d",
			res.KernelVersion, time.Since(start).Round(time.Millisecond), res.Duration.Round(time.Millisecond),
			res.Boot.Round(time.Millisecond), res.ScriptTime.Round(time.Millisecond), res.ExitCode)
	}
	return res, err
}

// runSmokeGuest runs opts's script in the suite's shared guest session
// (sharedGuest), which must be left clean, or with BRICK_E2E_SHARED_GUEST=0
// in a boot of its own; outputs end up in opts.ShareDir either way.
func runSmokeGuest(t *testing.T, ctx context.Context, opts guest.Options) (*guest.Result, error) {
	t.Helper()
	if !sharedGuestOn() {
		return runGuest(t, ctx, opts)
	}
	return sharedGuest.exec(t, ctx, guest.Exec{Script: opts.Script, Files: opts.Files, Env: opts.Env, Timeout: opts.Timeout}, opts.ShareDir, nil)
}

// requireSuccess fails the test unless the guest ran the script to exit 0.
// Shared with the protocol e2e tests in this package.
func requireSuccess(t *testing.T, res *guest.Result, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("guest script exited %d; output:\n%s\nconsole tail:\n%s", res.ExitCode, res.Output, guestTail(res.Console, 30))
	}
}

func guestTail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// testContext bounds one e2e test (15 min) and is cancelled when it ends.
// Shared with the other e2e tests in this package.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestGuestBoot: the guest boots Debian's kernel, runs a script as root with
// the caller's environment and files, and both output and exit code come
// back; a file written to $BRICK_SHARE is visible on the host. Its fails
// fast/... subtests (TestGuestFailsFast until they were merged here) prove
// that a hanging script, a kernel panic and a guest that overruns the
// caller's deadline each end the run with an error that carries the
// console's tail, without waiting for the runner's hard limit.
//
// Each case is a guest of its own: the deadline case first, alone (its
// deadline must go to qemu, not to a wait for the guest slot when go test
// runs outside test/e2e.sh), then the other three side by side, which on
// the 2-core host costs little more than the longest of them.
func TestGuestBoot(t *testing.T) {
	lane(t, laneGuestOnly)
	for _, tt := range failsFastCases {
		if tt.deadline > 0 {
			t.Run("fails fast/"+tt.name, func(t *testing.T) { checkFailsFast(t, tt) })
		}
	}
	// A group that returns when its parallel subtests have ended, so go
	// test's time for TestGuestBoot (the suite's times table) counts them.
	t.Run("side by side", func(t *testing.T) {
		t.Run("script", func(t *testing.T) {
			t.Parallel()
			checkGuestBoot(t)
		})
		for _, tt := range failsFastCases {
			if tt.deadline == 0 {
				t.Run("fails fast/"+tt.name, func(t *testing.T) {
					t.Parallel()
					checkFailsFast(t, tt)
				})
			}
		}
	})
}

// checkGuestBoot runs TestGuestBoot's script: output, exit code, files
// and environment in, an artifact out.
func checkGuestBoot(t *testing.T) {
	share := t.TempDir()
	input := filepath.Join(t.TempDir(), "input.txt")
	if err := os.WriteFile(input, []byte("from the host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := runGuest(t, testContext(t), guest.Options{
		Script: `
echo "hello from $(uname -r) as $(id -u) on $(hostname)"
echo "env=$SMOKE_VALUE"
echo "input=$(cat in/input.txt)"
ls "$BRICK_FIXTURES/iscsi.sh" >/dev/null && echo fixtures-ok
echo artifact >"$BRICK_SHARE/artifact"
echo to-stderr >&2
exit 7
`,
		Env:      map[string]string{"SMOKE_VALUE": `it's "quoted" $HOME`},
		Files:    map[string]string{input: "in/input.txt"},
		ShareDir: share,
		Timeout:  time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Output)
	for _, want := range []string{
		"hello from " + res.KernelVersion + " as 0 on " + guest.Hostname,
		`env=it's "quoted" $HOME`,
		"input=from the host",
		"fixtures-ok",
		"to-stderr",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if res.ExitCode != 7 {
		t.Errorf("exit code = %d, want 7", res.ExitCode)
	}
	if b, err := os.ReadFile(filepath.Join(share, "artifact")); err != nil || string(b) != "artifact\n" {
		t.Errorf("artifact on the host = %q, %v", b, err)
	}
}

// failsFastCase is a guest run that must fail, and how. Bounds are on what
// the runner controls (the guest-side timeout, qemu exiting on its own, the
// kill at the caller's deadline), not on boot speed, which varies 10x with
// the host's load.
type failsFastCase struct {
	name      string
	script    string
	timeout   time.Duration
	deadline  time.Duration // the caller's context; 0: the test's
	wantErr   error
	wantIn    string        // expected in the error (console tail or output)
	notIn     string        // must not be in the error
	maxScript time.Duration // bound on the script's run time in the guest
	maxWall   time.Duration // bound on the host's wall time
}

var failsFastCases = []failsFastCase{
	{
		name:      "hanging script",
		script:    "echo about to hang; sleep 3600",
		timeout:   time.Second,
		wantErr:   guest.ErrTimeout,
		wantIn:    "about to hang",
		maxScript: 15 * time.Second, // 1 s plus the runner's TERM-to-KILL grace
	},
	{
		name:    "kernel panic",
		script:  "echo c >/proc/sysrq-trigger; sleep 3600",
		timeout: time.Minute,
		wantErr: guest.ErrNoExitCode,
		wantIn:  "Kernel panic",
		notIn:   "qemu killed", // qemu left by itself (panic=-1, -no-reboot)
	},
	{
		name:     "caller deadline",
		script:   "sleep 3600",
		timeout:  time.Minute,
		deadline: 4 * time.Second,
		wantErr:  guest.ErrNoExitCode,
		wantIn:   "context",
		maxWall:  15 * time.Second,
	},
}

func checkFailsFast(t *testing.T, tt failsFastCase) {
	ctx := testContext(t)
	if tt.deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, tt.deadline)
		defer cancel()
	}
	start := time.Now()
	res, err := runGuest(t, ctx, guest.Options{Script: tt.script, Timeout: tt.timeout})
	wall := time.Since(start)
	t.Logf("error as a test sees it: %v", err)
	if !errors.Is(err, tt.wantErr) {
		t.Fatalf("err = %v, want %v", err, tt.wantErr)
	}
	msg := err.Error()
	if !strings.Contains(msg, tt.wantIn) || !strings.Contains(msg, "console tail") {
		t.Errorf("error lacks %q or the console tail", tt.wantIn)
	}
	if tt.notIn != "" && strings.Contains(msg, tt.notIn) {
		t.Errorf("error contains %q", tt.notIn)
	}
	if tt.maxScript > 0 && (res == nil || res.ScriptTime > tt.maxScript) {
		t.Errorf("script ran %v in the guest, want at most %v", res.ScriptTime, tt.maxScript)
	}
	if tt.maxWall > 0 && wall > tt.maxWall {
		t.Errorf("took %v, want at most %v", wall, tt.maxWall)
	}
}

// testBedSelfTest skips a test of the test bed itself (the guest's storage
// stack without brick) unless BRICK_E2E_TESTBED=1: brick's protocol tests
// build the same stack through the same fixtures and fail naming the step,
// so in the whole suite these only cost time; they are for diagnosing a
// broken test bed on a new machine or kernel.
func testBedSelfTest(t *testing.T) {
	t.Helper()
	if os.Getenv("BRICK_E2E_TESTBED") != "1" {
		t.Skip("a test of the test bed itself: set BRICK_E2E_TESTBED=1 to run it (TestISCSI, TestRBD, TestNFS and TestFC build the same stack)")
	}
}

// TestGuestISCSI: iscsid, multipathd and udev work in the guest (the
// shared one: runSmokeGuest). It logs in
// to a CHAP-protected tgt target over two portals (discovery with discovery
// CHAP), gets both by-path links, forms one dm-multipath map over the two
// paths once the WWID is added, writes a pattern through the map with
// O_DIRECT, reads it back after one path is gone, tears everything down, and
// the host then finds the pattern in the target's backing file.
func TestGuestISCSI(t *testing.T) {
	lane(t, laneGuestOnly)
	testBedSelfTest(t)
	sharedGuest.prestart() // boots while the host prepares
	share := t.TempDir()
	pattern := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for i := range pattern {
		pattern[i] = byte(rng.Uint32())
	}
	patternFile := filepath.Join(t.TempDir(), "pattern")
	if err := os.WriteFile(patternFile, pattern, 0o644); err != nil {
		t.Fatal(err)
	}
	const offsetMiB = 4

	res, err := runSmokeGuest(t, testContext(t), guest.Options{
		Script:   iscsiSmokeScript,
		Files:    map[string]string{patternFile: "pattern"},
		ShareDir: share,
		Env:      map[string]string{"OFFSET_MIB": "4"},
		Timeout:  4 * time.Minute,
	})
	requireSuccess(t, res, err)
	t.Logf("guest output:\n%s", res.Output)
	for _, want := range []string{"by-path links: 2", "map paths: 2", "read back after failover: ok", "teardown: ok"} {
		if !strings.Contains(string(res.Output), want) {
			t.Errorf("output lacks %q", want)
		}
	}

	backing, err := os.ReadFile(filepath.Join(share, "tgt", "target1-lun1.img"))
	if err != nil {
		t.Fatalf("read the backing file on the host: %v", err)
	}
	off := offsetMiB << 20
	if len(backing) < off+len(pattern) {
		t.Fatalf("backing file is %d bytes, want at least %d", len(backing), off+len(pattern))
	}
	if !bytes.Equal(backing[off:off+len(pattern)], pattern) {
		t.Fatal("the pattern written through the multipath map is not in the backing file")
	}
}

// iscsiSmokeScript runs in the guest; see TestGuestISCSI. The target's
// backing file lives in the share so the host can check it after power-off.
const iscsiSmokeScript = `
set -euo pipefail
step() { local up _; read -r up _ </proc/uptime; echo "== $* (${up}s)"; }
# pause SECONDS: a sleep without a process (each costs under TCG).
[[ -p /tmp/.pause ]] || mkfifo /tmp/.pause
pause() { read -r -t "$1" _ <>/tmp/.pause || true; }

step setup
eval "$("$BRICK_FIXTURES/iscsi.sh")"
eval "$("$BRICK_FIXTURES/tgt-target.sh" --size 16M --dir "$BRICK_SHARE/tgt" \
	--chap smoke-user:smoke-secret-1 --discovery-chap smoke-disc:smoke-secret-2)"

step "discover and log in on $TGT_PORTALS"
for p in $TGT_PORTALS; do
	iscsiadm -m discoverydb -t st -p "$p" -o new >/dev/null
	iscsiadm -m discoverydb -t st -p "$p" -o update -n discovery.sendtargets.auth.authmethod -v CHAP
	iscsiadm -m discoverydb -t st -p "$p" -o update -n discovery.sendtargets.auth.username -v smoke-disc
	iscsiadm -m discoverydb -t st -p "$p" -o update -n discovery.sendtargets.auth.password -v smoke-secret-2
	iscsiadm -m discoverydb -t st -p "$p" --discover
	iscsiadm -m node -T "$TGT_IQN" -p "$p" -o update -n node.session.auth.authmethod -v CHAP
	iscsiadm -m node -T "$TGT_IQN" -p "$p" -o update -n node.session.auth.username -v smoke-user
	iscsiadm -m node -T "$TGT_IQN" -p "$p" -o update -n node.session.auth.password -v smoke-secret-1
	iscsiadm -m node -T "$TGT_IQN" -p "$p" --login
done

step "wait for by-path links"
links=()
for p in $TGT_PORTALS; do
	link=/dev/disk/by-path/ip-$p-iscsi-$TGT_IQN-lun-1
	for _ in {1..100}; do [[ -e $link ]] && break; pause 0.1; done
	[[ -b $link ]] || { echo "no $link"; ls -l /dev/disk/by-path/ || true; exit 1; }
	links+=("$link")
done
echo "by-path links: ${#links[@]}"

step "multipath map"
wwid=$(/lib/udev/scsi_id -g -u -d "${links[0]}")
multipath -a "$wwid"
# The paths came before the WWID was known: have multipathd look again.
for l in "${links[@]}"; do multipathd add path "$(basename "$(readlink -f "$l")")" >/dev/null; done
map=/dev/mapper/$wwid
for _ in {1..100}; do [[ -e $map ]] && break; pause 0.1; done
[[ -b $map ]] || { echo "no map $map"; multipath -ll; exit 1; }
dm=$(basename "$(readlink -f "$map")")
for _ in {1..100}; do
	slaves=(/sys/block/"$dm"/slaves/*)
	n=${#slaves[@]}
	((n == 2)) && break
	pause 0.1
done
multipath -ll "$wwid"
echo "map paths: $n"

step "write with O_DIRECT"
dd if=pattern of="$map" bs=64k seek=$((OFFSET_MIB * 16)) oflag=direct conv=fsync status=none

step "fail over: log out of the second portal and read back"
second=${TGT_PORTALS#* }
iscsiadm -m node -T "$TGT_IQN" -p "$second" --logout >/dev/null
dd if="$map" of=/tmp/readback bs=64k skip=$((OFFSET_MIB * 16)) count=16 iflag=direct status=none
cmp pattern /tmp/readback
echo "read back after failover: ok"

step teardown
udevadm settle
# Right after I/O, udev's blkid probe can hold the map for a moment.
for i in {1..20}; do multipath -f "$wwid" && break; pause 0.5; done
[[ ! -e $map ]]
iscsiadm -m node -T "$TGT_IQN" --logout >/dev/null
iscsiadm -m node -T "$TGT_IQN" -o delete
# What a fresh boot lacks goes too (a shared guest checks): the discovery
# records and the WWID, which a later target with the same tid would reuse.
for p in $TGT_PORTALS; do iscsiadm -m discoverydb -t st -p "$p" -o delete; done
multipath -w "$wwid" >/dev/null
echo "teardown: ok"
step done
`

// guestStackSections are the protocol checks that share one boot in
// TestGuestStorageStack. Each runs in its own bash with -euo pipefail, so one
// broken layer fails its own subtest and the others still run.
var guestStackSections = []struct{ name, script string }{
	{"nfs", `
eval "$("$BRICK_FIXTURES/nfs-server.sh")"
step "nfs: server up"
mkdir -p /mnt/nfs3 /mnt/nfs4
mount -t nfs -o vers=3 "$NFS_V3_SHARE" /mnt/nfs3
mount -t nfs4 -o vers=4.2 "$NFS_V4_SHARE" /mnt/nfs4
grep -E ' /mnt/nfs(3 nfs .*vers=3|4 nfs4 .*vers=4.2)' /proc/mounts
echo "written over v3" >/mnt/nfs3/volume-smoke
sync
[[ $(cat /mnt/nfs4/volume-smoke) == "written over v3" ]]
umount /mnt/nfs3 /mnt/nfs4
`},
	{"rbd", `
eval "$("$BRICK_FIXTURES/ceph.sh" --image smoke --size 32M)"
step "rbd: cluster ready"
grep -q '^auth client required = cephx' "$CEPH_CONF"
# cephx is really on: without the user's key the map is refused.
if rbd map "$CEPH_POOL/smoke" --id "$CEPH_USER" --keyring /dev/null 2>/dev/null; then
	echo "rbd map without a key succeeded"; exit 1
fi
dev=$(rbd map "$CEPH_POOL/smoke" --id "$CEPH_USER" --keyring "$CEPH_KEYRING")
step "rbd: mapped $dev"
udevadm settle
[[ $(readlink -f "/dev/rbd/$CEPH_POOL/smoke") == "$dev" ]]
head -c 1M /dev/urandom >/tmp/rbd-pattern
dd if=/tmp/rbd-pattern of="$dev" bs=64k oflag=direct conv=fsync status=none
rbd unmap "$dev"
# Read back through a fresh mapping: the data went to the OSD.
dev=$(rbd map "$CEPH_POOL/smoke" --id "$CEPH_USER" --keyring "$CEPH_KEYRING")
cmp /tmp/rbd-pattern <(dd if="$dev" bs=64k count=16 iflag=direct status=none)
rbd unmap "$dev"
`},
	{"fc", `
eval "$("$BRICK_FIXTURES/fcoe-target.sh" --luns 2 --size 16M)"
step "fc: fabric up"
echo "initiator $FC_INITIATOR_HOST $FC_INITIATOR_WWPN -> target $FC_TARGET_WWPN via $FC_RPORT"
[[ $(cat /sys/class/fc_host/$FC_INITIATOR_HOST/port_state) == Online ]]
# The kernel scans the new rport itself; wait for both LUNs' disks.
n=${FC_INITIATOR_HOST#host}
for _ in $(seq 300); do
	disks=(/sys/class/fc_transport/target$n:*/device/$n:*/block/*)
	[[ -e ${disks[0]} && ${#disks[@]} -eq 2 ]] && break
	sleep 0.1
done
((${#disks[@]} == 2)) || { echo "FC disks: ${disks[*]}"; exit 1; }
step "fc: disks found"
target=$(ls -d /sys/class/fc_transport/target$n:*)
[[ $(cat "$target/port_name") == "$FC_TARGET_WWPN" ]]
lun1=$(basename /sys/class/fc_transport/target$n:*/device/$n:*:1/block/*)
echo "LUN 1 is /dev/$lun1 ($(cat /sys/block/$lun1/device/vendor))"
head -c 1M /dev/urandom >/tmp/fc-pattern
dd if=/tmp/fc-pattern of=/dev/$lun1 bs=64k oflag=direct conv=fsync status=none
cmp /tmp/fc-pattern <(head -c 1M "$FC_BACKING_1")
`},
}

// TestGuestStorageStack: in one boot, the NFS server and v3/v4.2 client
// mounts, a cephx-protected Ceph cluster with krbd mapping, and a software
// FCoE fabric with LIO FC LUNs each work, with data checked end to end.
// The three sections run side by side: they share nothing but the kernel,
// and the NFS and FC set-ups mostly wait (for nfsd, for VN2VN's address
// claim) while the Ceph cluster keeps the CPUs busy.
func TestGuestStorageStack(t *testing.T) {
	lane(t, laneGuestOnly)
	testBedSelfTest(t)
	var script strings.Builder
	// step prints guest uptime stamps, so a slow layer shows in the log.
	script.WriteString("step() { echo \"== $* ($(cut -d' ' -f1 /proc/uptime)s)\"; }\nexport -f step\n")
	for _, s := range guestStackSections {
		// Each section gets its own bash so a failure stays in its
		// section, and its own output file, printed whole below; the
		// RESULT line is what the subtests read.
		fmt.Fprintf(&script, "(\n\tstep %[1]s\n\tbash -euo pipefail -c %[2]s\n\techo \"RESULT %[1]s rc=$?\"\n) >/tmp/section-%[1]s.out 2>&1 &\n",
			s.name, guestShellQuote(s.script))
	}
	script.WriteString("wait\n")
	for _, s := range guestStackSections {
		fmt.Fprintf(&script, "cat /tmp/section-%s.out\n", s.name)
	}
	script.WriteString("step done\n")

	res, err := runGuest(t, testContext(t), guest.Options{Script: script.String(), Timeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("guest output:\n%s", res.Output)
	for _, s := range guestStackSections {
		t.Run(s.name, func(t *testing.T) {
			if !strings.Contains(string(res.Output), "RESULT "+s.name+" rc=0\n") {
				t.Fatalf("section %s failed; see the guest output above", s.name)
			}
		})
	}
}

func guestShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
