//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed"
	"github.com/brick-storage/brick/internal/testbed/guest"
)

// testTools holds the test tools (test/e2e/<name>) built by this test
// process, once each.
var testTools struct {
	mu    sync.Mutex
	built map[string]*testTool
}

type testTool struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// buildTool builds the test tool ./name once per test process and returns
// the binary's path.
func buildTool(t *testing.T, name string) string {
	t.Helper()
	testTools.mu.Lock()
	if testTools.built == nil {
		testTools.built = map[string]*testTool{}
	}
	tool := testTools.built[name]
	if tool == nil {
		tool = &testTool{}
		testTools.built[name] = tool
	}
	testTools.mu.Unlock()
	tool.once.Do(func() {
		dir, err := os.MkdirTemp("", "brick-e2e-"+name+"-")
		if err != nil {
			tool.err = err
			return
		}
		tool.path = filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", tool.path, "./"+name)
		tool.out, tool.err = cmd.CombinedOutput()
	})
	if tool.err != nil {
		t.Fatalf("build %s: %v\n%s", name, tool.err, tool.out)
	}
	return tool.path
}

// buildFaultProxy builds test/e2e/faultproxy once per test process.
func buildFaultProxy(t *testing.T) string {
	t.Helper()
	return buildTool(t, "faultproxy")
}

// newVolumes is newVolume for several volumes at once: Cinder creates
// them side by side, and the test's end deletes them side by side (each a
// create or delete plus a status poll, seconds apiece one after another).
func newVolumes(t *testing.T, c *testbed.Cinder, names ...string) []*testbed.Volume {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	vols := make([]*testbed.Volume, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vols[i], errs[i] = c.CreateVolume(ctx, name, 1)
		}()
	}
	wg.Wait()
	t.Cleanup(func() { deleteVolumes(t, c, vols) })
	require.NoError(t, errors.Join(errs...), "create volumes %v", names)
	return vols
}

// deleteVolumes deletes what a test left of vols (nil entries skipped):
// back to available first, whatever state a failed test left, all at once.
func deleteVolumes(t *testing.T, c *testbed.Cinder, vols []*testbed.Volume) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for _, v := range vols {
		if v == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.Request(ctx, "POST", "/volumes/"+v.ID+"/action", "", map[string]any{"os-reset_status": map[string]any{"status": "available", "attach_status": "detached"}}, nil)
			if err := c.DeleteVolume(ctx, v.ID); err != nil {
				t.Logf("cleanup: delete volume %s: %v", v.ID, err)
			}
		}()
	}
	wg.Wait()
}

// patternOffset is where the guest writes the test pattern (MiB).
const patternOffset = 4

// attachGuestScript runs every local-attach/local-detach proof in one boot.
// It prints "STATE <label> <cinder status> <host names> <sessions> <sd
// devices> <multipath maps> <records>" after each step the Go side checks,
// "TIME <label> <seconds>" for timings and "RC <label> <exit code>".
const attachGuestScript = `
set -uo pipefail
` + cinderGuestSetup + `
COMMON=(--nic eth0 --iscsi-login-timeout 8s --device-timeout 10s)
echo "initiator $ISCSI_INITIATOR host $HOSTNAME"
` + debInstallStart + `

# attach_write_detach LABEL VOLUME [extra local-attach flags...]: the happy
# path with the pattern written through the device.
attach_write_detach() {
	local label=$1 vol=$2; shift 2
	local t0; t0=$(now)
	/usr/bin/time -v -o /brick/time-$label.txt $B local-attach "$vol" "${COMMON[@]}" "$@" -f json >/brick/attach-$label.json 2>/brick/attach-$label.err
	echo "RC attach-$label $?"
	took attach-$label "$t0"
	state attached-$label "$vol"
	local dev; dev=$(jget /brick/attach-$label.json path)
	echo "DEVICE $label $dev $(jget /brick/attach-$label.json multipath_id)"
	if [[ $label == v3 ]]; then
		# Secrets: the CHAP password of this live attachment appears in no
		# output and not in the record.
		local att pw leaks
		att=$(jget /brick/attach-$label.json attachment_id)
		pw=$(apiget "attachments/$att" auth_password)
		if [[ -n $pw ]]; then
			leaks=$(grep -lF -- "$pw" /var/lib/brick/volumes/*.json /brick/attach-$label.json /brick/attach-$label.err 2>/dev/null | grep -c . || true)
			echo "SECRET pw_known=yes leaks=$leaks"
		else
			echo "SECRET pw_known=no leaks=?"
		fi
		ls -l /var/lib/brick/volumes/ | sed 's/^/RECORDMODE /'
	fi
	dd if=/brick/pattern of="$dev" bs=1M seek=` + "4" + ` count=1 oflag=direct conv=notrunc status=none
	echo "RC write-$label $?"
	$B list -f value -c volume -c protocol -c phase -c "cinder status" 2>&1 | sed "s/^/LIST $label /"
	$B get-volume-paths "$vol" -f value 2>&1 | sed "s/^/PATHS $label /"
	t0=$(now)
	$B local-detach "$vol" "${COMMON[@]}" "$@" >/brick/detach-$label.out 2>&1
	echo "RC detach-$label $?"
	took detach-$label "$t0"
	state detached-$label "$vol"
}

# 1. legacy flow, 2. v3 flow, 3. multipath over both slirp addresses.
attach_write_detach legacy "$VOL_LEGACY" --os-volume-api-version 3.0
attach_write_detach v3 "$VOL_V3"
attach_write_detach mp "$VOL_MP" --multipath
` + debGuestScript + `
# 4. --mountpoint + --mkfs ext4: a file survives detach and a second attach.
$B local-attach "$VOL_FS" "${COMMON[@]}" --mountpoint /mnt/brickfs --mkfs ext4 -f json >/brick/attach-fs1.json 2>&1
echo "RC attach-fs1 $?"
echo "FORMATTED fs1 $(jget /brick/attach-fs1.json formatted 2>/dev/null || echo none)"
echo "brick was here" >/mnt/brickfs/hello.txt && sync
# On a terminal (script(1) gives it one) brick draws its live status line;
# redirected to a file, as every other step here, it draws none.
script -qec "$B local-detach $VOL_FS ${COMMON[*]}" /brick/detach-fs1.tty >/dev/null 2>&1
echo "RC detach-fs1 $?"
echo "STATUSLINE tty $(grep -c $'\x1b\\[Kbrick: local-detach '"$VOL_FS"': ' /brick/detach-fs1.tty || true)"
echo "STATUSLINE file $(cat /brick/attach-*.err /brick/detach-*.out | grep -c $'\x1b\\[K' || true)"
echo "MOUNTED-AFTER-DETACH $(grep -c ' /mnt/brickfs ' /proc/self/mountinfo || true)"
$B local-attach "$VOL_FS" "${COMMON[@]}" --mountpoint /mnt/brickfs --mkfs ext4 -f json >/brick/attach-fs2.json 2>&1
echo "RC attach-fs2 $?"
echo "FORMATTED fs2 $(jget /brick/attach-fs2.json formatted || echo none)"
echo "FILE fs2 $(cat /mnt/brickfs/hello.txt 2>&1)"
$B local-detach "$VOL_FS" "${COMMON[@]}" >/brick/detach-fs2.out 2>&1
echo "RC detach-fs2 $?"
state fs "$VOL_FS"

# 5. multipathd claims every disk (find_multipaths greedy, as a host with
# multipathd set up for all its SAN disks): a single-path attach with
# --mountpoint runs on multipathd's map; detach flushes the map.
t0=$(now)
cp /etc/multipath.conf /tmp/multipath.conf.brick
printf 'defaults {\n\tuser_friendly_names no\n\tfind_multipaths greedy\n}\n' >/etc/multipath.conf
multipathd reconfigure >/dev/null
# The reconfigure is asynchronous: wait until multipathd runs with it.
for _ in {1..50}; do
	mpconf=$(multipathd show config 2>&1 | grep -m1 -w find_multipaths)
	[[ $mpconf == *greedy* ]] && break
	pause 0.1
done
echo "MPCONF claim $mpconf"
t1=$(now)
$B local-attach "$VOL_CLAIM" "${COMMON[@]}" --mountpoint /mnt/brickclaim --mkfs ext4 -f json >/brick/attach-claim.json 2>/brick/attach-claim.err
echo "RC attach-claim $?"
took attach-claim "$t1"
state attached-claim "$VOL_CLAIM"
claimdev=$(jget /brick/attach-claim.json path)
echo "DEVICE claim $claimdev $(jget /brick/attach-claim.json multipath_id)"
grep -c 'multipathd took' /brick/attach-claim.err | sed 's/^/WARN claim /'
grep -m1 'multipathd took' /brick/attach-claim.err | sed 's/^/WARNLINE claim /'
echo "brick on a claimed disk" >/mnt/brickclaim/hello.txt && sync
echo "FILE claim $(cat /mnt/brickclaim/hello.txt 2>&1)"
echo "MOUNTDEV claim $(findmnt -n -o MAJ:MIN /mnt/brickclaim) $(cat /sys/block/${claimdev#/dev/}/dev 2>&1)"
[[ $claimdev == /dev/dm-* ]] || udevadm info -q property "$claimdev" | grep -E 'MULTIPATH|ID_FS_TYPE' | sed 's/^/UDEV claim /'
$B list -f value -c volume -c device -c "multipath id" 2>&1 | sed "s/^/LIST claim /"
t1=$(now)
$B local-detach "$VOL_CLAIM" "${COMMON[@]}" >/brick/detach-claim.out 2>&1
echo "RC detach-claim $?"
took detach-claim "$t1"
state detached-claim "$VOL_CLAIM"
# Forgotten WWIDs stay as comments ("#/<wwid>/"); only live lines count.
n=$(grep -c "^/$(jget /brick/attach-claim.json multipath_id)/\$" /etc/multipath/wwids 2>/dev/null)
echo "WWIDS claim ${n:-0}"
cp /tmp/multipath.conf.brick /etc/multipath.conf
multipathd reconfigure >/dev/null
took claim "$t0"
` + debRemoveWait + `
echo DONE
`

// attachFailGuestScript injects each failure of issue 5 into a real
// local-attach; every one must end with the volume available and nothing
// left in the guest.
const attachFailGuestScript = `
set -uo pipefail
` + cinderGuestSetup + `
COMMON=(--nic eth0 --iscsi-login-timeout 8s --device-timeout 10s)
` + `# 5a. connect fails: the host's tgtd is put offline (the test on the host
# does it when it sees /brick/req-offline), so every login is refused.
hostdo() {
	rm -f /brick/ack-$1; touch /brick/req-$1
	for ((i = 0; i < 600; i++)); do [[ -e /brick/ack-$1 ]] && return 0; pause 0.2; done
	echo "host did not answer $1"; return 1
}
# A refused login and a device that cannot appear fail whatever the time
# limit, so 5a and 5b wait 3 s where the others allow 8 s and 10 s: the
# proof is the clean failure, not the wait (the ERR lines name the step).
SHORT=(--nic eth0 --iscsi-login-timeout 3s --device-timeout 3s)
hostdo offline
t0=$(now)
$B local-attach "$VOL_FAIL" "${SHORT[@]}" >/brick/fail-connect.out 2>&1
echo "RC fail-connect $?"
took fail-connect "$t0"
hostdo ready
sed 's/^/ERR fail-connect /' /brick/fail-connect.out
state fail-connect "$VOL_FAIL"

# 5b. the device never appears: the LUN logs in and is scanned, but sd_mod
# may not load, so no block device shows up.
echo "install sd_mod /bin/false" >/etc/modprobe.d/brick-nodev.conf
# udevd's module loading keeps the modprobe.d it read at its start (and
# rechecks at most every 3 s): without a reload it may load sd_mod anyway.
udevadm control --reload
rmmod sd_mod 2>/dev/null
echo "SDMOD $(grep -c '^sd_mod ' /proc/modules || true)"
t0=$(now)
# The login itself must succeed here: the usual login limit.
$B local-attach "$VOL_FAIL" --nic eth0 --iscsi-login-timeout 8s --device-timeout 3s >/brick/fail-nodev.out 2>&1
echo "RC fail-nodev $?"
took fail-nodev "$t0"
sed 's/^/ERR fail-nodev /' /brick/fail-nodev.out
state fail-nodev "$VOL_FAIL"
rm /etc/modprobe.d/brick-nodev.conf
modprobe sd_mod

# 5c. the final Cinder call fails (os-complete / os-attach answered 500 by a
# proxy in front of the real Cinder), both flows.
/brick/faultproxy -listen 127.0.0.1:18776 -target http://10.0.2.2:8776 -fail os-complete,os-attach 2>/brick/faultproxy.log &
for ((i = 0; i < 50; i++)); do curl -s -o /dev/null http://127.0.0.1:18776/ && break; pause 0.1; done
for flow in 3.54 3.0; do
	BRICK_CINDER_ENDPOINT=http://127.0.0.1:18776/v3 $B local-attach "$VOL_FAIL" "${COMMON[@]}" --os-volume-api-version $flow >/brick/fail-complete-$flow.out 2>&1
	echo "RC fail-complete-$flow $?"
	sed "s/^/ERR fail-complete-$flow /" /brick/fail-complete-$flow.out
	state fail-complete-$flow "$VOL_FAIL"
done
kill %1

# 5d. kill -9 during attach (after the device is connected, before Cinder is
# told), then brick cleanup; both flows.
for flow in 3.54 3.0; do
	BRICK_TEST_CRASH_AT=complete $B local-attach "$VOL_FAIL" "${COMMON[@]}" --os-volume-api-version $flow >/brick/crash-$flow.out 2>&1
	echo "RC crash-$flow $?"
	state crashed-$flow "$VOL_FAIL"
	$B list -f value -c volume -c phase 2>&1 | sed "s/^/LIST crash-$flow /"
	$B cleanup "$VOL_FAIL" "${COMMON[@]}" --os-volume-api-version $flow -f value >/brick/cleanup-$flow.out 2>&1
	echo "RC cleanup-$flow $?"
	sed "s/^/CLEANUP $flow /" /brick/cleanup-$flow.out
	state cleaned-$flow "$VOL_FAIL"
done
` + `echo DONE
`

// guestRun is one boot's parsed output.
type guestRun struct {
	t     *testing.T
	out   string
	share string
	lines map[string][]string
}

// runAttachGuest boots a guest with 2 slirp NICs running script; onShare,
// when set, runs on the host while the guest runs (it watches the share
// for requests).
func runAttachGuest(t *testing.T, c *testbed.Cinder, script string, files, env map[string]string, onShare func(ctx context.Context, share string)) *guestRun {
	t.Helper()
	return runCinderGuest(t, c, script, files, env, onShare, false)
}

// runSharedGuest is runAttachGuest in the suite's shared guest session
// (sharedGuest in main_test.go): no boot of its own, and the guest must be
// left clean for the next test. BRICK_E2E_SHARED_GUEST=0 boots one instead.
func runSharedGuest(t *testing.T, c *testbed.Cinder, script string, files, env map[string]string, onShare func(ctx context.Context, share string)) *guestRun {
	t.Helper()
	return runCinderGuest(t, c, script, files, env, onShare, sharedGuestOn())
}

func runCinderGuest(t *testing.T, c *testbed.Cinder, script string, files, env map[string]string, onShare func(ctx context.Context, share string), shared bool) *guestRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	share := guestShare(t)
	env["PROJECT"] = c.ProjectID
	files[buildBrick(t)] = "brick"
	var res *guest.Result
	var err error
	if shared {
		res, err = sharedGuest.exec(t, ctx, guest.Exec{Script: script, Files: files, Env: env, Timeout: 20 * time.Minute}, share, onShare)
		if err != nil && res != nil {
			// Which step left state behind is in the script's own lines.
			t.Logf("guest script output:\n%s", res.Output)
		}
	} else {
		stop := watchShare(ctx, share, onShare)
		res, err = guest.Run(ctx, guest.Options{Script: script, Files: files, NICs: 2, Env: env, Timeout: 20 * time.Minute, ShareDir: share})
		stop()
	}
	require.NoError(t, err)
	// The test bed's Cinder is one per host: another test process asking
	// for other settings restarts it, and this run's results are void.
	if env, err := testbed.ParseEnvFile(filepath.Join(c.StateDir, "env")); err != nil || env["BRICK_TB_CINDER_PID"] != c.Env["BRICK_TB_CINDER_PID"] {
		t.Fatalf("the test bed Cinder was stopped or restarted by another process during this test (run it alone): %v\n%s", err, res.Output)
	}
	out := string(res.Output)
	t.Logf("guest: boot %s, script %s, wall %s, exit %d\n%s", res.Boot, res.ScriptTime, res.Duration, res.ExitCode, out)
	require.Equal(t, 0, res.ExitCode)
	require.Contains(t, out, "\nDONE")
	return parseGuestRun(t, share, res.Output)
}

// parseGuestRun indexes a guest script's output lines by their first two
// words (the first ERR line of a label only).
func parseGuestRun(t *testing.T, share string, output []byte) *guestRun {
	g := &guestRun{t: t, out: string(output), share: share, lines: map[string][]string{}}
	sc := bufio.NewScanner(bytes.NewReader(output))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 {
			if _, seen := g.lines[f[0]+" "+f[1]]; seen && f[0] == "ERR" {
				continue // the error line; what follows would be output
			}
			g.lines[f[0]+" "+f[1]] = f[2:]
		}
	}
	return g
}

// watchShare runs onShare (if set) on share until the returned stop is
// called; stop waits for it to return.
func watchShare(ctx context.Context, share string, onShare func(ctx context.Context, share string)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if onShare != nil {
		wg.Add(1)
		go func() { defer wg.Done(); onShare(ctx, share) }()
	}
	return func() { cancel(); wg.Wait() }
}

// guestShare is the directory shared with a guest: a test's temporary
// directory, or with BRICK_E2E_KEEP_SHARES=DIR one kept under DIR (with the
// scripts' outputs and traces) for a look after the run.
func guestShare(t *testing.T) string {
	t.Helper()
	keep := os.Getenv("BRICK_E2E_KEEP_SHARES")
	if keep == "" {
		return t.TempDir()
	}
	require.NoError(t, os.MkdirAll(keep, 0o755))
	dir, err := os.MkdirTemp(keep, strings.ReplaceAll(t.Name(), "/", "_")+"-")
	require.NoError(t, err)
	t.Logf("guest share kept in %s", dir)
	return dir
}

// word is the i-th word after a line's label (its first two words): the
// test fails showing the guest's output when the line is missing or shorter,
// instead of the index panicking the test binary.
func (g *guestRun) word(label string, i int) string {
	g.t.Helper()
	return g.words(label, i+1)[i]
}

// words is a line's words after its label, at least n of them, or the
// test fails showing the guest's output.
func (g *guestRun) words(label string, n int) []string {
	g.t.Helper()
	v, ok := g.lines[label]
	if !ok || len(v) < n {
		g.t.Fatalf("guest output: line %q has %d words after its label, want at least %d (present: %v); output:\n%s", label, len(v), n, ok, g.out)
	}
	return v
}

func (g *guestRun) rc(label string) string {
	g.t.Helper()
	v := g.lines["RC "+label]
	require.Len(g.t, v, 1, "RC %s", label)
	return v[0]
}

// st is a STATE line: status, hosts, sessions, sd devices, dm maps, records.
func (g *guestRun) st(label string) []string {
	g.t.Helper()
	v := g.lines["STATE "+label]
	require.Len(g.t, v, 6, "STATE %s", label)
	return v
}

// clean asserts the volume is available and the guest holds nothing of it.
func (g *guestRun) clean(label string) {
	g.t.Helper()
	require.Equal(g.t, []string{"available", "-", "0", "0", "0", "0"}, g.st(label),
		"after %s: volume available, no session, no sd, no map, no record", label)
}

// TestAttachGuest is the proof of issue 5's happy paths: brick inside a
// qemu guest attaches volumes of the real Cinder on the host through slirp
// with the legacy and the v3 flow, with multipath over both slirp
// addresses, and with --mountpoint + --mkfs; data written in the guest is
// found in the volume's backing file on the host.
func TestAttachGuest(t *testing.T) {
	lane(t, laneServices)
	sharedGuest.prestart() // boots while the host prepares
	c := needCinder(t, guestCinderOptions)
	pattern := make([]byte, 1<<20)
	_, err := rand.Read(pattern)
	require.NoError(t, err)
	patternFile := filepath.Join(t.TempDir(), "pattern")
	require.NoError(t, os.WriteFile(patternFile, pattern, 0o644))
	vols := map[string]*testbed.Volume{}
	env := map[string]string{}
	keys := []string{"LEGACY", "V3", "MP", "FS", "CLAIM"}
	var names []string
	for _, k := range keys {
		names = append(names, "brick-e2e-attach-"+strings.ToLower(k))
	}
	for i, v := range newVolumes(t, c, names...) {
		vols[keys[i]] = v
		env["VOL_"+keys[i]] = v.ID
	}
	deb, debVersion := buildDeb(t)
	g := runSharedGuest(t, c, attachGuestScript, map[string]string{patternFile: "pattern", deb: "brick.deb"}, env, nil)

	for label, key := range map[string]string{"legacy": "LEGACY", "v3": "V3", "mp": "MP"} {
		require.Equal(t, "0", g.rc("attach-"+label), label)
		s := g.st("attached-" + label)
		require.Equal(t, "in-use", s[0], label)
		require.NotEqual(t, "-", s[1], "host_name recorded (%s)", label)
		require.Equal(t, "0", g.rc("write-"+label))
		require.Equal(t, "0", g.rc("detach-"+label))
		g.clean("detached-" + label)
		backing, err := os.ReadFile(c.BackingFile(vols[key].ID))
		require.NoError(t, err)
		require.True(t, bytes.Equal(pattern, span(t, backing, patternOffset<<20, (patternOffset+1)<<20, "backing file")), "pattern of %s in the backing file on the host", label)
		if tv, err := os.ReadFile(filepath.Join(g.share, "time-"+label+".txt")); err == nil {
			for _, l := range strings.Split(string(tv), "\n") {
				if strings.Contains(l, "Maximum resident") || strings.Contains(l, "Elapsed") {
					t.Logf("local-attach %s: %s", label, strings.TrimSpace(l))
				}
			}
		}
		t.Logf("%s: attach %v s, detach %v s", label, g.lines["TIME attach-"+label], g.lines["TIME detach-"+label])
	}
	s := g.st("attached-mp")
	require.Equal(t, "2", s[2], "two iSCSI sessions for multipath")
	require.Equal(t, "1", s[4], "one dm map")
	dev := g.lines["DEVICE mp"]
	require.Len(t, dev, 2)
	require.True(t, strings.HasPrefix(dev[0], "/dev/dm-"), "multipath device %v", dev)

	require.Contains(t, g.out, "SECRET pw_known=yes leaks=0")
	require.Contains(t, g.out, "RECORDMODE -rw------- 1 root root")

	require.Equal(t, "0", g.rc("attach-fs1"))
	require.Equal(t, []string{"ext4"}, g.lines["FORMATTED fs1"])
	require.Equal(t, "0", g.rc("detach-fs1"))
	require.Contains(t, g.out, "MOUNTED-AFTER-DETACH 0")
	require.NotEqual(t, []string{"0"}, g.lines["STATUSLINE tty"], "a terminal shows the live status line")
	require.Equal(t, []string{"0"}, g.lines["STATUSLINE file"], "no status line when stderr is a file")
	require.Equal(t, "0", g.rc("attach-fs2"))
	require.Equal(t, []string{"none"}, g.lines["FORMATTED fs2"], "second attach must not format")
	require.Equal(t, []string{"brick", "was", "here"}, g.lines["FILE fs2"])
	require.Equal(t, "0", g.rc("detach-fs2"))
	g.clean("fs")
	checkClaimed(t, g, vols["CLAIM"].ID)
	checkDeb(t, g, debVersion)
}

// checkClaimed checks step 5: multipathd took the disk of a single-path
// attach (find_multipaths greedy); brick used the map, mounted it, warned once,
// and detach left no map, session or WWID behind.
func checkClaimed(t *testing.T, g *guestRun, volID string) {
	t.Helper()
	require.Equal(t, "0", g.rc("attach-claim"), "single-path attach on a claimed disk: %s", g.out)
	s := g.st("attached-claim")
	require.Equal(t, "in-use", s[0])
	require.Equal(t, []string{"1", "1", "1", "1"}, s[2:], "one session, one sd, one map, one record")
	dev := g.words("DEVICE claim", 2)
	require.True(t, strings.HasPrefix(dev[0], "/dev/dm-"), "the device is multipathd's map: %v", dev)
	require.NotEmpty(t, dev[1], "multipath_id recorded")
	require.Equal(t, []string{"1"}, g.lines["WARN claim"], "one warning naming the map")
	require.Equal(t, []string{"brick", "on", "a", "claimed", "disk"}, g.lines["FILE claim"])
	mnt := g.words("MOUNTDEV claim", 2)
	require.Equal(t, mnt[0], mnt[1], "the mount is on the map")
	require.Equal(t, []string{volID, dev[0], dev[1]}, g.lines["LIST claim"], "brick list shows the map")
	require.Equal(t, "0", g.rc("detach-claim"))
	g.clean("detached-claim")
	require.Equal(t, []string{"0"}, g.lines["WWIDS claim"], "the WWID is forgotten")
	t.Logf("claimed single path: %s; attach %v s, detach %v s, whole step (multipathd reconfigured twice) %v s",
		strings.Join(g.lines["WARNLINE claim"], " "), g.lines["TIME attach-claim"], g.lines["TIME detach-claim"], g.lines["TIME claim"])
}

// TestAttachGuestFailures injects each failure of issue 5 into a real
// local-attach in the guest: the target refusing logins (tgtd offline),
// the device never appearing, the final Cinder call failing (both flows),
// and kill -9 mid-attach followed by brick cleanup (both flows). Each ends
// with the volume available and no session, device, map or record.
func TestAttachGuestFailures(t *testing.T) {
	lane(t, laneServices)
	sharedGuest.prestart() // boots while the host prepares
	c := needCinder(t, guestCinderOptions)
	vol := newVolume(t, c, "brick-e2e-attach-fail")
	// The guest asks for tgtd offline/ready through files in the share.
	tgtd := func(ctx context.Context, share string) {
		for ctx.Err() == nil {
			for _, state := range []string{"offline", "ready"} {
				req := filepath.Join(share, "req-"+state)
				if _, err := os.Stat(req); err == nil {
					out, err := exec.CommandContext(ctx, "tgtadm", "--lld", "iscsi", "--mode", "system", "--op", "update", "--name", "State", "--value", state).CombinedOutput()
					t.Logf("host: tgtd %s: %v %s", state, err, out)
					_ = os.Remove(req)
					_ = os.WriteFile(filepath.Join(share, "ack-"+state), nil, 0o644)
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	t.Cleanup(func() {
		_ = exec.Command("tgtadm", "--lld", "iscsi", "--mode", "system", "--op", "update", "--name", "State", "--value", "ready").Run()
	})
	g := runSharedGuest(t, c, attachFailGuestScript, map[string]string{buildFaultProxy(t): "faultproxy"}, map[string]string{"VOL_FAIL": vol.ID}, tgtd)

	for _, label := range []string{"fail-connect", "fail-nodev", "fail-complete-3.54", "fail-complete-3.0"} {
		require.NotEqual(t, "0", g.rc(label), label)
		g.clean(label)
		msg := strings.Join(g.lines["ERR "+label], " ")
		require.True(t, strings.HasPrefix(msg, "brick: local-attach "+vol.ID+": "), "%s: one line naming the volume and the step: %q", label, msg)
		require.Equal(t, 1, strings.Count(g.out, "ERR "+label+" "), "%s: the error is one line", label)
		t.Logf("%s: %s", label, msg)
	}
	require.Contains(t, strings.Join(g.lines["ERR fail-connect"], " "), "iscsi login", "fail-connect: the login failed")
	require.Contains(t, strings.Join(g.lines["ERR fail-nodev"], " "), "wait for scsi device", "fail-nodev: logged in, no device")
	require.Contains(t, g.out, "SDMOD 0")
	for _, flow := range []string{"3.54", "3.0"} {
		require.Equal(t, "137", g.rc("crash-"+flow), "SIGKILL")
		require.Equal(t, "1", g.st("crashed-" + flow)[5], "the record survives the crash")
		require.Equal(t, "0", g.rc("cleanup-"+flow))
		g.clean("cleaned-" + flow)
	}
	t.Logf("failures: connect %v s, no device %v s", g.lines["TIME fail-connect"], g.lines["TIME fail-nodev"])
}
