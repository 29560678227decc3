//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed"
	"github.com/brick-storage/brick/internal/testbed/guest"
)

// localAttachRoundsScript times whole commands against the real Cinder:
// `brick local-attach` + `local-detach` against python-brick-cinderclient-ext's
// v3 flow (bench/cinderext/localattach.py on Debian's cinderclient and
// os-brick), for each mode of MODES (single, mp: iSCSI over one or two
// portals; nvme: NVMe/TCP) on the volume $VOL_<mode>, each command under
// /usr/bin/time for its peak RSS. Each round runs both tools on one mode,
// in turns (brick first in odd rounds), with the host's load average
// before and after it (the test writes /proc/loadavg into the share every
// second); a round whose load is above MAXLOAD (hundredths) is taken
// again, RETRIES times at most. Every run must leave the volume available
// with no session: a run that fails, or leaves anything, is reported
// (FAILED, its stderr as ERR lines) and undone through the API (RESET)
// so that the next run starts clean; the test counts it as failed, never
// as a sample.
//
// Output: RUN <mode> <tool> <attach_s> <detach_s> <total_s> <attach_rss_kb>
// <detach_rss_kb> rc=<attach>/<detach> sessions=<n> status=<volume
// status> load=<before>/<after> try=<n>; REPEAT <mode>
// <round> <before>/<after> and the discarded runs as REPEATED RUN ...;
// FAILED, ERR and RESET lines; FORMAT <the RUN fields> for the untimed
// first attach of an encrypted volume, which formats it.
const localAttachRoundsScript = `
set -uo pipefail
cp /brick/brick /tmp/brick
cp /brick/localattach.py /tmp/localattach.py
B=/tmp/brick
API=http://10.0.2.2:8776/v3
export OS_AUTH_TYPE=noauth BRICK_CONFIG=/dev/null BRICK_CINDER_ENDPOINT=$API PROJECT
export OSLO_LOCK_PATH=/tmp/localattach-locks
if [[ $MODES == nvme ]]; then
	# The guest's kernel nvmet serves the volume the test bed Cinder
	# exports over NVMe/TCP (brick_tb_driver.GuestNVMeT), as in TestNVMeoF.
	eval "$("$BRICK_FIXTURES/nvmet.sh" ports 4420)" >/dev/null
	mkdir -p /brick/exports
	"$BRICK_FIXTURES/nvmet.sh" serve /brick/exports 2>/brick/nvmet.log &
	NVMET_SERVE=$!
else
	eval "$("$BRICK_FIXTURES/iscsi.sh")" >/dev/null
	modprobe -a dm_crypt xts 2>/dev/null
fi
# The extension finds its address from the route towards 8.8.8.8 (a UDP
# connect, no packet sent): give the guest the default route a host has.
ip route replace default via 10.0.2.2 dev eth0
echo "LOAD start $(cut -d' ' -f1-3 /proc/loadavg)"
# nsessions: iSCSI sessions, NVMe controllers and dm-crypt maps.
nsessions() {
	local n c
	n=$(iscsiadm -m session 2>/dev/null | grep -c . || true)
	for c in /sys/class/nvme/nvme*; do [[ -e $c ]] && ((n++)); done
	for c in /sys/block/dm-*/dm/uuid; do [[ -e $c && $(<"$c") == CRYPT-* ]] && ((n++)); done
	echo "$n"
}
api() { curl -sf -m 30 -H "X-Auth-Token: brick:$PROJECT" -H "OpenStack-API-Version: volume 3.70" "$@"; }
# vstatus: a volume's status ("available" between runs).
vstatus() { api "$API/$PROJECT/volumes/$1" | jq -er '.volume.status' 2>/dev/null || echo api-error; }
# reset VOLUME: undoes what a failed run left, so that the next run starts
# from an available volume: maps, sessions and controllers, the volume's
# attachments, then its state (noauth is admin).
reset() {
	local id i
	umount /mnt/steps >/dev/null 2>&1
	for id in $(dmsetup ls --target crypt 2>/dev/null | awk '$1 != "No" { print $1 }'); do cryptsetup close "$id"; done
	multipath -F >/dev/null 2>&1
	iscsiadm -m node --logoutall=all >/dev/null 2>&1
	iscsiadm -m node -o delete >/dev/null 2>&1
	nvme disconnect-all >/dev/null 2>&1
	multipath -F >/dev/null 2>&1
	for id in $(api "$API/$PROJECT/attachments?volume_id=$1" | jq -r '.attachments[].id' 2>/dev/null); do
		api -X DELETE "$API/$PROJECT/attachments/$id" >/dev/null
	done
	api -X POST -H 'Content-Type: application/json' -d '{"os-reset_status":{"status":"available","attach_status":"detached"}}' \
		"$API/$PROJECT/volumes/$1/action" >/dev/null
	for ((i = 0; i < 30; i++)); do [[ $(vstatus "$1") == available ]] && break; sleep 1; done
	echo "RESET $1 status=$(vstatus "$1") sessions=$(nsessions)"
}
# clean LABEL VOLUME: reset VOLUME unless it is available with no session.
clean() {
	[[ $(vstatus "$2") == available && $(nsessions) == 0 ]] && return
	echo "FAILED $1: left the volume $(vstatus "$2") with $(nsessions) sessions; resetting it"
	reset "$2"
}
# hload: the host's 1-minute load average, from the share.
hload() { local l=unknown; [[ -r /brick/hostload ]] && read -r l _ </brick/hostload; echo "${l:-unknown}"; }
# over LOAD: whether LOAD ("12.34") is above MAXLOAD hundredths.
over() { [[ $1 =~ ^([0-9]+)\.([0-9]{2})$ ]] && (( 10#${BASH_REMATCH[1]}${BASH_REMATCH[2]} > MAXLOAD )); }
timed() { # OUT COMMAND...: runs COMMAND, leaves "<seconds> <max RSS KiB> <rc>" in OUT
	local out=$1; shift
	/usr/bin/time -f "%e %M" -o "$out.t" "$@" >"$out.out" 2>"$out.err"
	local rc=$?
	echo "$(tail -n 1 "$out.t") $rc" >"$out"
}
run() { # MODE TOOL VOLUME
	local mode=$1 tool=$2 vol=$3 opt=() as=()
	[[ $mode == mp ]] && opt=(--multipath)
	# luks2: both tools as Keystone's member user (its key is in Barbican).
	[[ $mode == luks2 ]] && as=(env -u OS_AUTH_TYPE -u BRICK_CINDER_ENDPOINT OS_CLOUD=member OS_CLIENT_CONFIG_FILE=/brick/clouds.yaml)
	if [[ $tool == brick ]]; then
		timed /tmp/a "${as[@]}" $B local-attach "$vol" --nic eth0 "${opt[@]}" -f json
		timed /tmp/d "${as[@]}" $B local-detach "$vol" --nic eth0 "${opt[@]}"
	else
		[[ $mode == nvme ]] && opt=(--nvme)
		timed /tmp/a "${as[@]}" /usr/bin/python3 /tmp/localattach.py attach "$vol" "${opt[@]}"
		timed /tmp/d "${as[@]}" /usr/bin/python3 /tmp/localattach.py detach "$vol" "${opt[@]}"
	fi
	local as ar arc ds dr drc
	read -r as ar arc </tmp/a
	read -r ds dr drc </tmp/d
	echo "RUN $mode $tool $as $ds $(awk -v a="$as" -v b="$ds" 'BEGIN{printf "%.2f", a+b}') $ar $dr rc=$arc/$drc sessions=$(nsessions) status=$(vstatus "$vol")"
	if [[ $arc != 0 ]]; then tail -n 6 /tmp/a.err | sed "s/^/ERR $mode $tool attach: /"; fi
	if [[ $drc != 0 ]]; then tail -n 6 /tmp/d.err | sed "s/^/ERR $mode $tool detach: /"; fi
	clean "$mode-$tool" "$vol"
}
# A fresh encrypted volume is formatted at its first attach: do that once,
# untimed, so that every timed run opens an existing LUKS2 header.
# (Right after luksFormat, luksOpen may find the disk still held by udev's
# probe: "in use". A second try opens what the first formatted.)
if [[ $MODES == luks2 ]]; then
	for try in 1 2; do
		run luks2 brick "$VOL_luks2" | sed 's/^RUN /FORMAT /' | tee /tmp/format
		grep -q ' rc=0/0 ' /tmp/format && break
	done
fi
for ((i = 1; i <= ROUNDS; i++)); do
	order="brick ext"
	((i % 2)) || order="ext brick"
	for mode in $MODES; do
		v=VOL_$mode
		vol=${!v}
		for ((try = 1; ; try++)); do
			l0=$(hload)
			: >/tmp/round
			for tool in $order; do run $mode $tool "$vol" >>/tmp/round; done
			l1=$(hload)
			if (over "$l0" || over "$l1") && ((try <= RETRIES)); then
				echo "REPEAT $mode $i $l0/$l1"
				sed 's/^/REPEATED /' /tmp/round
				continue
			fi
			sed "/^RUN /s|\$| load=$l0/$l1 try=$try|" /tmp/round
			break
		done
	done
done
`

// localAttachStepsScript follows the iSCSI rounds: one attach + detach of
// each tool with its steps timed (brick's --debug log, the Python flow's
// STEP lines), and (EXECS=1) the programs each tool starts. Output: STEPT0
// <tool>-<action> <epoch s>; DEBUG <action> <a --debug line of brick>;
// STEP <action> <name> <s>; WALL <tool>-<action> <s>; EXECVE <tool> <n>
// <programs>.
const localAttachStepsScript = `
# One attach + detach of each tool, steps timed (single path, as a user's
# first attach: brick also makes a filesystem and mounts it).
t0=$EPOCHREALTIME; echo "STEPT0 brick-attach $t0"
$B --debug local-attach "$VOL_single" --nic eth0 --mkfs ext4 --mountpoint /mnt/steps -f json >/dev/null 2>/tmp/steps-a.err
rc=$?
echo "RC steps-brick-attach $rc"
((rc == 0)) || grep -v 'level=DEBUG' /tmp/steps-a.err | tail -5 | sed "s/^/ERR steps-brick-attach /"
echo "WALL brick-attach $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.3f", b-a}')"
t0=$EPOCHREALTIME; echo "STEPT0 brick-detach $t0"
$B --debug local-detach "$VOL_single" --nic eth0 >/dev/null 2>/tmp/steps-d.err
rc=$?
echo "RC steps-brick-detach $rc"
((rc == 0)) || grep -v 'level=DEBUG' /tmp/steps-d.err | tail -5 | sed "s/^/ERR steps-brick-detach /"
echo "WALL brick-detach $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.3f", b-a}')"
clean steps-brick "$VOL_single"
sed 's/^/DEBUG attach /' /tmp/steps-a.err
sed 's/^/DEBUG detach /' /tmp/steps-d.err
for action in attach detach; do
	t0=$EPOCHREALTIME
	BENCH_T0=$t0 BENCH_STEPS=1 /usr/bin/python3 /tmp/localattach.py $action "$VOL_single" >/dev/null 2>/tmp/steps-p.err
	rc=$?
	echo "RC steps-ext-$action $rc"
	((rc == 0)) || grep -v '^STEP ' /tmp/steps-p.err | tail -8 | sed "s/^/ERR steps-ext-$action /"
	echo "WALL ext-$action $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.3f", b-a}')"
	grep '^STEP ' /tmp/steps-p.err | sed "s/^STEP /STEP $action /"
done
clean steps-ext "$VOL_single"
execs() { # TOOL COMMAND: the programs COMMAND started, without sh and the tool's own two
	strace -f -qq -e trace=execve -o /tmp/st-$1 sh -c "$3" >/dev/null 2>&1
	local progs; progs=$(grep -E 'execve\(.*= 0$' /tmp/st-$1 | sed -E 's/.*execve\("([^"]*)".*/\1/' |
		awk -v tool="$2" '!sh && $0 ~ /\/sh$/ { sh = 1; next } $0 == tool && n < 2 { n++; next } { print }')
	echo "EXECVE $1 $(printf '%s' "$progs" | grep -c . || true) $(printf '%s\n' "$progs" | xargs -rn1 basename | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}')"
}
# The Python flow under strace -f takes minutes under TCG: only on request.
if [[ ${EXECS:-0} == 1 ]]; then
	execs brick "$B" "$B local-attach $VOL_single --nic eth0; $B local-detach $VOL_single --nic eth0"
	clean execs-brick "$VOL_single"
	execs ext /usr/bin/python3 "/usr/bin/python3 /tmp/localattach.py attach $VOL_single; /usr/bin/python3 /tmp/localattach.py detach $VOL_single"
	clean execs-ext "$VOL_single"
fi
`

// localAttachEndScript ends each script.
const localAttachEndScript = `
[[ -z ${NVMET_SERVE:-} ]] || kill "$NVMET_SERVE"
echo "LEFT sessions=$(nsessions)"
echo "LOAD end $(cut -d' ' -f1-3 /proc/loadavg)"
echo DONE
`

// TestLocalAttachBenchmark is the whole-command benchmark (opt-in,
// BRICK_BENCH=1; BRICK_BENCH_LA_ROUNDS rounds, default 5;
// BRICK_BENCH_MAX_LOAD, default 4.00, the host load above which a round
// is taken again, BRICK_BENCH_RETRIES times at most, default 3): see
// localAttachRoundsScript. In one guest boot: iSCSI single path and
// multipath with the steps of one attach and detach (unless
// BRICK_BENCH_LA_ISCSI=0); then (unless
// BRICK_BENCH_LA_LUKS=0) a LUKS2 volume whose key is in Barbican, both
// tools as Keystone's member user; then (with BRICK_BENCH_LA_NVME=1)
// the test bed Cinder restarted to export over NVMe/TCP and the nvme
// rounds. BRICK_BENCH_LA_EXECS=1 adds the programs each tool starts
// (strace -f; minutes for the Python flow under TCG). It logs one LOCALATTACH line per mode with
// both tools' medians, min/max, the ratio and peak RSS.
func TestLocalAttachBenchmark(t *testing.T) {
	lane(t, laneServices)
	if os.Getenv("BRICK_BENCH") == "" {
		t.Skip("set BRICK_BENCH=1 to run the local-attach benchmark")
	}
	rounds := max(1, benchInt("BRICK_BENCH_LA_ROUNDS", 5))
	maxLoad, err := strconv.ParseFloat(cmpOr(os.Getenv("BRICK_BENCH_MAX_LOAD"), "4"), 64)
	require.NoError(t, err, "BRICK_BENCH_MAX_LOAD")
	ext, err := filepath.Abs("../../bench/cinderext/localattach.py")
	require.NoError(t, err)
	// No deadline for the wait for the guest slot, which a busy machine's
	// suites hold for an hour: each script has its limit, go test -timeout
	// bounds the rest.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The share also carries Cinder's NVMe export records (exports/).
	share := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(share, "exports"), 0o755))
	stop := writeHostLoad(ctx, filepath.Join(share, "hostload"))
	defer stop()
	s, err := guest.Start(ctx, guest.Options{NICs: 2, ShareDir: share})
	require.NoError(t, err, "boot the guest")
	defer func() { require.NoError(t, s.Close(), "power the guest off") }()
	// Cinder after the boot, which waits for the machine's guest slot: a
	// suite holding the slot meanwhile restarts Cinder as its tests need.
	c := needCinder(t, guestCinderOptions)
	vs, vm := newVolume(t, c, "brick-bench-la-single"), newVolume(t, c, "brick-bench-la-mp")
	// Keystone and Barbican start before the rounds, not beside them.
	var bb *barbicanSide
	var bbErr error
	if os.Getenv("BRICK_BENCH_LA_LUKS") != "0" {
		bb, bbErr = luksSide(t, c, share)
	}
	t.Logf("HOSTLOAD start %s", hostLoad())
	files := map[string]string{buildBrick(t): "brick", ext: "localattach.py"}
	env := func(kv ...string) map[string]string {
		m := map[string]string{"ROUNDS": strconv.Itoa(rounds), "MAXLOAD": strconv.Itoa(int(maxLoad * 100)),
			"RETRIES": strconv.Itoa(benchInt("BRICK_BENCH_RETRIES", 3))}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	// One round of a mode (four whole Python processes) took 12 minutes
	// under TCG with the host's load at 25.
	limit := time.Duration(10+8*rounds) * time.Minute
	var out string
	if os.Getenv("BRICK_BENCH_LA_ISCSI") != "0" {
		out = localAttachExec(t, ctx, s, guest.Exec{
			Script: localAttachRoundsScript + localAttachStepsScript + localAttachEndScript, Files: files, Timeout: 2 * limit,
			Env: env("PROJECT", c.ProjectID, "VOL_single", vs.ID, "VOL_mp", vm.ID, "MODES", "single mp", "EXECS", os.Getenv("BRICK_BENCH_LA_EXECS")),
		})
		logLocalAttachRounds(t, out, []string{"single", "mp"})
	}
	if bbErr != nil {
		t.Errorf("LOCALATTACH luks2: no row, Keystone/Barbican side: %v", bbErr)
	} else if bb != nil {
		lout := localAttachExec(t, ctx, s, guest.Exec{
			Script: localAttachRoundsScript + localAttachEndScript, Files: files, Timeout: limit,
			Env: env("PROJECT", bb.project, "VOL_luks2", bb.volID, "MODES", "luks2"),
		})
		logLocalAttachRounds(t, lout, []string{"luks2"})
	}
	// NVMe/TCP is opt-in: os-brick's connect_volume has not completed in
	// this guest yet (VolumeDeviceNotFound after nvme connect).
	if os.Getenv("BRICK_BENCH_LA_NVME") == "1" {
		cctx, ccancel := context.WithTimeout(ctx, serviceStartTimeout)
		defer ccancel()
		cn, err := testbed.EnsureCinderNVMeExports(cctx, testbed.CinderOptions{TargetIP: "127.0.0.1", SecondaryIPs: []string{"127.0.0.2"}},
			testbed.NVMeNew, 4420, filepath.Join(share, "exports"))
		require.NoError(t, err, "restart Cinder exporting over NVMe/TCP")
		vn := nvmeVolume(t, cn, testbed.NVMeNew)
		nout := localAttachExec(t, ctx, s, guest.Exec{
			Script: localAttachRoundsScript + localAttachEndScript, Files: files, Timeout: limit,
			Env: env("PROJECT", cn.ProjectID, "VOL_nvme", vn.ID, "MODES", "nvme"),
		})
		logLocalAttachRounds(t, nout, []string{"nvme"})
	}
	t.Logf("HOSTLOAD end %s", hostLoad())
	if out != "" {
		logSteps(t, out)
	}
}

// luksSide starts Keystone and Barbican and has Keystone's member user
// create a LUKS2 volume, its key ordered from Barbican by Cinder, as
// TestEncryptedVolumes does (barbicanSide); the guest then finds
// /brick/clouds.yaml.
func luksSide(t *testing.T, c *testbed.Cinder, share string) (*barbicanSide, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), serviceStartTimeout)
	defer cancel()
	bb := &barbicanSide{c: c, luks2: cryptType(ctx, t, c, "luks2")}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if bb.volID != "" {
			_ = c.InProject(bb.project).DeleteVolume(ctx, bb.volID)
		}
		if bb.other != nil {
			_ = bb.other(ctx)
		}
		if bb.started {
			_ = exec.CommandContext(ctx, "../barbican/down.sh").Run()
		}
	})
	return bb, bb.prepare(ctx, t, share)
}

// localAttachExec runs one of the benchmark's scripts in s, logs its
// output and returns it; the script must end with DONE.
func localAttachExec(t *testing.T, ctx context.Context, s *guest.Session, e guest.Exec) string {
	t.Helper()
	res, err := s.Exec(ctx, e)
	if res != nil {
		t.Logf("guest exec: wall %s, exit %d, leftovers %q; output:\n%s", res.Duration.Round(time.Millisecond), res.ExitCode, res.Leftovers, res.Output)
	}
	requireSuccess(t, res, err)
	out := string(res.Output)
	require.Contains(t, out, "\nDONE")
	return out
}

// cmpOr is v, or def when v is empty.
func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// writeHostLoad copies /proc/loadavg into path every second until the
// returned stop is called or ctx ends (the guest cannot see the host's).
func writeHostLoad(ctx context.Context, path string) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if b, err := os.ReadFile("/proc/loadavg"); err == nil {
				tmp := path + ".tmp"
				if os.WriteFile(tmp, b, 0o644) == nil {
					_ = os.Rename(tmp, path)
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}()
	return func() { cancel(); <-done }
}

// laRun is one RUN line of localAttachRoundsScript.
type laRun struct {
	mode, tool string
	total, rss float64 // attach+detach seconds; the larger peak RSS, KiB
	ok         bool    // both exited 0 and left the volume available, no session
}

// parseLARun parses a RUN line; ok is false for a line that is not one.
func parseLARun(line string) (laRun, bool) {
	f := strings.Fields(line)
	if len(f) < 11 || f[0] != "RUN" {
		return laRun{}, false
	}
	tot, err := strconv.ParseFloat(f[5], 64)
	ra, err1 := strconv.ParseFloat(f[6], 64)
	rd, err2 := strconv.ParseFloat(f[7], 64)
	r := laRun{mode: f[1], tool: f[2], total: tot, rss: max(ra, rd)}
	r.ok = err == nil && err1 == nil && err2 == nil &&
		f[8] == "rc=0/0" && f[9] == "sessions=0" && f[10] == "status=available"
	return r, true
}

// logLocalAttachRounds logs each mode's medians, min/max, ratio and peak
// RSS over the runs that succeeded, and fails the test naming every run
// that did not (those are never counted).
func logLocalAttachRounds(t *testing.T, out string, modes []string) {
	type agg struct{ total, rss []float64 }
	runs := map[string]*agg{}
	var failed []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "REPEAT ") {
			t.Logf("round taken again, host load above the threshold: %s", line)
		}
		r, isRun := parseLARun(line)
		if !isRun {
			continue
		}
		if !r.ok {
			failed = append(failed, line)
			continue
		}
		k := r.mode + " " + r.tool
		if runs[k] == nil {
			runs[k] = &agg{}
		}
		runs[k].total = append(runs[k].total, r.total)
		runs[k].rss = append(runs[k].rss, r.rss)
	}
	for _, mode := range modes {
		b, e := runs[mode+" brick"], runs[mode+" ext"]
		if b == nil || e == nil {
			t.Errorf("LOCALATTACH %s: no successful run of brick (%v) or of the Python flow (%v)", mode, b != nil, e != nil)
			continue
		}
		bm, em := nvmeMedian(b.total), nvmeMedian(e.total)
		t.Logf("LOCALATTACH %s attach+detach median of %d/%d: brick %.2f s (%.2f-%.2f, peak RSS %.1f MB), ext %.2f s (%.2f-%.2f, peak RSS %.1f MB), ratio %.3f",
			mode, len(b.total), len(e.total), bm, slices.Min(b.total), slices.Max(b.total), slices.Max(b.rss)/1024,
			em, slices.Min(e.total), slices.Max(e.total), slices.Max(e.rss)/1024, bm/em)
	}
	if len(failed) > 0 {
		t.Errorf("%d runs failed or left the volume attached (not counted; their ERR/RESET lines are in the guest output):\n%s",
			len(failed), strings.Join(failed, "\n"))
	}
}

// errLines is what the script printed as "ERR <label> ..." lines: the
// stderr of a step that failed.
func errLines(out, label string) string {
	var b strings.Builder
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "ERR "+label+" "); ok {
			b.WriteString(rest + "\n")
		}
	}
	return b.String()
}

// debugLine is one line of brick's --debug log (slog's text format): its
// time, what ran (a command or an HTTP request) and how long it took.
var (
	debugTime  = regexp.MustCompile(`^time=(\S+)`)
	debugArgv  = regexp.MustCompile(`msg=run argv="?([^" ]+)`)
	debugHTTP  = regexp.MustCompile(`msg=http method=(\S+) url=(\S+)`)
	debugTook  = regexp.MustCompile(` (?:took|duration)=(\S+)`)
	hexOrUUID  = regexp.MustCompile(`/[0-9a-fA-F-]{16,}`)
	stepPrefix = map[string]string{"attach": "DEBUG attach ", "detach": "DEBUG detach "}
)

// stepOf names the step a command or request of brick's belongs to.
func stepOf(line string) string {
	if m := debugHTTP.FindStringSubmatch(line); m != nil {
		path := m[2]
		if i := strings.Index(path, "/v3/"); i >= 0 {
			path = path[i:]
		}
		path = hexOrUUID.ReplaceAllString(path, "/{id}")
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		return "cinder " + m[1] + " " + path
	}
	m := debugArgv.FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	switch name := filepath.Base(m[1]); {
	case name == "iscsiadm":
		return "iscsi (iscsiadm)"
	case name == "udevadm":
		return "udev (udevadm)"
	case name == "multipath" || name == "multipathd" || name == "dmsetup":
		return "map (" + name + ")"
	case strings.HasPrefix(name, "mkfs") || name == "blkid" || name == "wipefs":
		return "mkfs (" + name + ")"
	case name == "mount" || name == "umount":
		return "mount (" + name + ")"
	default:
		return "other commands (" + name + ")"
	}
}

// logSteps logs where one attach and one detach of each tool spent their
// wall time: brick's from its --debug log (every command and request with
// its duration; the first one's start less the process's is start-up and
// settings), the Python flow's from its STEP lines.
func logSteps(t *testing.T, out string) {
	g := parseGuestRun(t, "", []byte(out))
	for _, action := range []string{"attach", "detach"} {
		require.Equal(t, "0", g.rc("steps-brick-"+action), "brick --debug local-%s:\n%s", action, errLines(out, "steps-brick-"+action))
		require.Equal(t, "0", g.rc("steps-ext-"+action), "localattach.py %s:\n%s", action, errLines(out, "steps-ext-"+action))
		t0, err := strconv.ParseFloat(g.word("STEPT0 brick-"+action, 0), 64)
		require.NoError(t, err)
		wall := g.word("WALL brick-"+action, 0)
		sums := map[string]time.Duration{}
		var first time.Time // when the first command or request started
		for _, line := range strings.Split(out, "\n") {
			line, ok := strings.CutPrefix(line, stepPrefix[action])
			if !ok {
				continue
			}
			step, took := stepOf(line), debugTook.FindStringSubmatch(line)
			if step == "" || took == nil {
				continue
			}
			d, err := time.ParseDuration(took[1])
			if err != nil {
				continue
			}
			sums[step] += d
			if m := debugTime.FindStringSubmatch(line); m != nil && first.IsZero() {
				if at, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
					first = at.Add(-d) // logged when it ended
				}
			}
		}
		var b strings.Builder
		if !first.IsZero() {
			fmt.Fprintf(&b, "\n  %-48s %8.3f s", "start-up and settings (to the first request)", first.Sub(time.UnixMicro(int64(t0*1e6))).Seconds())
		}
		keys := make([]string, 0, len(sums))
		for k := range sums {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "\n  %-48s %8.3f s", k, sums[k].Seconds())
		}
		t.Logf("STEPS brick local-%s: %s s wall; commands and requests (the rest is brick's own work and waits):%s", action, wall, b.String())
		b.Reset()
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) == 4 && f[0] == "STEP" && f[1] == action {
				fmt.Fprintf(&b, "\n  %-48s %8s s", f[2], f[3])
			}
		}
		t.Logf("STEPS python flow %s: %s s wall:%s", action, g.word("WALL ext-"+action, 0), b.String())
	}
}
