//go:build e2e

package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// reliabilityPrelude is the shell set-up the concurrency and fault guest
// scripts share: cinderGuestSetup with a step trace and 20 s for devices.
//
//	STATE <label> <cinder status> <host names> <sessions> <sd> <maps> <records>
//	HOST <label> <sessions> <sd> <maps> <records>
//	TIME <label> <seconds>
//	RC <label> <exit code>
const reliabilityPrelude = `
set -uo pipefail
# A trace in the share shows on the host how far a long run got, with the
# time of every step (BRICK_E2E_KEEP_SHARES keeps it after the test).
exec 19>>/brick/trace.log
BASH_XTRACEFD=19
PS4='+ $EPOCHREALTIME '
set -x
` + cinderGuestSetup + `
COMMON=(--nic eth0 --iscsi-login-timeout 8s --device-timeout 20s)
`

// cinderGuestSetup is what every guest script attaching the host's Cinder
// volumes starts with: brick on the guest's tmpfs, Cinder's address, the
// initiator, guestShellHelpers, and helpers printing what the Go side
// checks (state, hoststate), all without Python or other process starts
// where a builtin does.
const cinderGuestSetup = `
# Run brick from the guest's tmpfs: exec'ing it from the 9p share pages the
# 14 MB binary in over 9p on every run.
cp /brick/brick /tmp/brick
B=/tmp/brick
P=$PROJECT
API=http://10.0.2.2:8776/v3
export OS_AUTH_TYPE=noauth BRICK_CONFIG=/dev/null BRICK_CINDER_ENDPOINT=$API
eval "$("$BRICK_FIXTURES/iscsi.sh")"
` + guestShellHelpers + `
api() { curl -sf -m 30 -H "X-Auth-Token: brick:$P" -H "OpenStack-API-Version: volume 3.70" "$API/$P/$1"; }
# apiget PATH KEY: the string KEY of Cinder's answer at PATH.
apiget() {
	local j re="\"$2\": *\"([^\"]*)\""
	j=$(api "$1") || return 1
	[[ $j =~ $re ]] && echo "${BASH_REMATCH[1]}"
}
# vstatus: "<status> <host names>" of a volume. Bash regexes, no Python:
# its start-up from the 9p root costs seconds under TCG. Only the volume
# itself has a "status" key ("replication_status" and the like do not match).
vstatus() {
	local j st hosts=() re='"status": *"([^"]*)"' rh='"host_name": *"([^"]*)"'
	j=$(api "volumes/$1") || { echo "api-error -"; return; }
	[[ $j =~ $re ]] && st=${BASH_REMATCH[1]}
	while [[ $j =~ $rh ]]; do
		hosts+=("${BASH_REMATCH[1]}")
		j=${j#*"${BASH_REMATCH[0]}"}
	done
	local IFS=,
	hosts=${hosts[*]}
	echo "${st:-unknown} ${hosts:--}"
}
nsessions() { nglob /sys/class/iscsi_session/session*; }
nsd() { nglob /sys/block/sd*; }
# ndm counts multipath maps: multipathd names their dm uuid mpath-<wwid>.
ndm() {
	local u n=0 f
	for f in /sys/block/dm-*/dm/uuid; do
		[[ -e $f ]] || continue
		read -r u <"$f"
		[[ $u == mpath-* ]] && n=$((n + 1))
	done
	echo "$n"
}
nrec() { nglob /var/lib/brick/volumes/*.json; }
hoststate() { echo "HOST $1 $(nsessions) $(nsd) $(ndm) $(nrec)"; }
state() { echo "STATE $1 $(vstatus "$2") $(nsessions) $(nsd) $(ndm) $(nrec)"; }
`

// guestShellHelpers are shell functions for guest scripts that cost no
// process start (under TCG each exec costs a noticeable fraction of a
// second, Python's start-up from the 9p root seconds):
//
//	now                  the time as seconds.microseconds
//	took LABEL T0        prints "TIME LABEL <seconds since T0>"
//	jget FILE KEY        a string value of a flat JSON object (brick -f json)
//	nglob PATTERN...     how many of the expanded paths exist
//	pause SECONDS        sleep without a process
const guestShellHelpers = `
now() { echo "$EPOCHREALTIME"; }
took() {
	local a=${2/./} b=${EPOCHREALTIME/./} d
	d=$((10#$b - 10#$a))
	printf 'TIME %s %d.%02d\n' "$1" $((d / 1000000)) $((d % 1000000 / 10000))
}
jget() {
	local j="" re="\"$2\": *\"([^\"]*)\""
	read -r -d '' j <"$1"
	[[ $j =~ $re ]] && echo "${BASH_REMATCH[1]}"
}
nglob() {
	local n=0 p
	for p in "$@"; do [[ -e $p ]] && n=$((n + 1)); done
	echo "$n"
}
[[ -p /tmp/.pause ]] || mkfifo /tmp/.pause
pause() { read -r -t "$1" _ <>/tmp/.pause || true; }
`

// concurrencyGuestScript attaches VOLS (8 volumes) in parallel, reads each
// in a loop with O_DIRECT while the others are detached (one at a time,
// then two at once) and re-attached, then detaches all 8 in parallel; then
// the same with 4 of them over multipath. A reader counts good
// reads and failed or wrong ones (each volume holds its own pattern).
const concurrencyGuestScript = reliabilityPrelude + `
read -ra V <<<"$VOLS"
# vstatuses LABEL: every volume of V with its status (the 8 API calls side
# by side: each is a curl start).
vstatuses() {
	local out=() pids=() i st
	for i in "${!V[@]}"; do
		vstatus "${V[i]}" >/tmp/vst-$i &
		pids+=($!)
	done
	# Only these jobs: the readers run on in the background.
	wait "${pids[@]}"
	for i in "${!V[@]}"; do
		read -r st _ </tmp/vst-$i
		out+=("${V[i]}=$st")
	done
	echo "VSTATUS $1 ${out[*]}"
}

# par_attach LABEL VOLUME-ARRAY-NAME FLAGS... -- INDEXES: local-attach the
# volumes at INDEXES at once; each job leaves its rc and time in /tmp.
par() {
	local op=$1 label=$2 arr=$3; shift 3
	local flags=() idx=()
	while [[ $1 != -- ]]; do flags+=("$1"); shift; done; shift
	idx=("$@")
	local -n vols=$arr
	local t0 pids=(); t0=$(now)
	for i in "${idx[@]}"; do
		(
			s=$(now)
			$B "$op" "${vols[i]}" "${COMMON[@]}" "${flags[@]}" --debug -f json >/brick/$label-$i.out 2>/brick/$label-$i.err
			echo $? >/tmp/rc-$label-$i
			took $label-$i "$s" >/tmp/t-$label-$i
		) &
		pids+=($!)
	done
	# Only these jobs: the readers run on in the background.
	wait "${pids[@]}"
	took $label "$t0"
	local rc tm
	for i in "${idx[@]}"; do
		read -r rc </tmp/rc-$label-$i
		read -r tm </tmp/t-$label-$i
		echo "RC $label-$i $rc"
		echo "$tm"
		errlines "$label-$i" /brick/$label-$i.err
	done
	dupsessions "$label"
}

# errlines LABEL FILE: the first 3 lines of FILE that are not brick's debug
# log, as ERR lines (a loop of builtins: no process per job; untraced, as
# the trace's every line is a write to the 9p share).
errlines() {
	local -
	set +x
	local l n=0 re='^time=.* level=DEBUG '
	while ((n < 3)) && IFS= read -r l; do
		[[ $l =~ $re ]] && continue
		echo "ERR $1 $l"
		n=$((n + 1))
	done <"$2"
}

# dupsessions LABEL: two sessions to one target through one portal are a
# leak; name them and show what the brick runs of LABEL did with the target.
dupsessions() {
	local iqn s c tgt addr port dup=()
	# sysfs first, with builtins: the commands below run only for a leak.
	local -A seen=()
	for s in /sys/class/iscsi_session/session*; do
		[[ -e $s ]] || continue
		c=/sys/class/iscsi_connection/connection${s##*session}:0
		read -r tgt <"$s/targetname" || continue
		read -r addr <"$c/persistent_address" || continue
		read -r port <"$c/persistent_port" || continue
		[[ -n ${seen["$tgt $addr:$port"]:-} ]] && dup+=("$tgt")
		seen["$tgt $addr:$port"]=1
	done
	((${#dup[@]})) || return 0
	for iqn in $(printf '%s\n' "${dup[@]}" | sort -u); do
		iscsiadm -m session 2>/dev/null | awk -v t="$iqn" '$4 == t {print $3}' | sort | uniq -d | grep -q . || continue
		echo "DUPSESSION $1 $iqn"
		iscsiadm -m session 2>/dev/null | grep -F "$iqn" | sed "s/^/DUPSESSION $1 /"
		ls -R /etc/iscsi/nodes/"$iqn" 2>&1 | sed "s/^/DUPSESSION $1 nodes /"
		grep -F "$iqn" /brick/"$1"-*.err | grep -E 'msg=run|iscsi' | sed "s/^/DUPSESSION $1 /" | head -30
	done
}

# Each volume gets its own 1 MiB pattern at 4 MiB; a reader compares what
# it reads with O_DIRECT with it, so a read of the wrong volume counts as
# an error too. A reader is one directreader process for its whole life
# (a dd and a cmp per read cost the attaches under test their CPU), paced
# at a read per 0.5 s: 8 readers in tight loops starve a 2-CPU TCG guest.
cp /brick/directreader /tmp/directreader
declare -A RPID DEV
prepare() { # KEY DEVICE
	DEV[$1]=$2
	head -c 1048576 /dev/urandom >/tmp/pat-$1
	dd if=/tmp/pat-$1 of="$2" bs=1M seek=4 count=1 oflag=direct conv=notrunc status=none
	echo "RC write-$1 $?"
}
start_reader() {
	rm -f /tmp/rres-$1 /tmp/rprog-$1
	/tmp/directreader -dev "${DEV[$1]}" -pattern /tmp/pat-$1 -offset $((4 << 20)) -interval 0.5s \
		-progress /tmp/rprog-$1 >/tmp/rres-$1 2>>/tmp/rerr-$1 &
	RPID[$1]=$!
}
# reads KEY: how many reads (good or bad) KEY's reader has done, in R.
reads() {
	local -
	set +x
	local n=0 e=0
	[[ -e /tmp/rprog-$1 ]] && read -r n e </tmp/rprog-$1
	R=$((n + e))
}
# await_reads N KEY...: wait (60 s at most each) until every reader named
# has done N more reads than when called; a poll, not a fixed sleep
# (untraced: its polls would flood the trace).
await_reads() {
	local -
	set +x
	local n=$1 k i
	shift
	local -A base=()
	for k; do reads "$k"; base[$k]=$R; done
	for k; do
		for ((i = 0; i < 600; i++)); do
			reads "$k"
			((R >= base[$k] + n)) && break
			pause 0.1
		done
	done
}
stop_reader() {
	local res
	kill -TERM "${RPID[$1]}"
	wait "${RPID[$1]}"
	read -r res </tmp/rres-$1
	echo "READER $1 $res"
	[[ -s /tmp/rerr-$1 ]] && sed "s/^/READERR $1 /" /tmp/rerr-$1 | head -3
	return 0
}

dmesg -C
# --- single path: 8 volumes on the one portal ---
ALL=(0 1 2 3 4 5 6 7)
par local-attach att1 V -- "${ALL[@]}"
hoststate attached
vstatuses attached
for i in "${ALL[@]}"; do prepare s$i "$(jget /brick/att1-$i.out path)"; done
for i in "${ALL[@]}"; do start_reader s$i; done
# Let every reader get going before the first detach.
await_reads 2 s0 s1 s2 s3 s4 s5 s6 s7
# One at a time while the other readers run ...
for i in 0 1; do
	stop_reader s$i
	par local-detach det1 V -- $i
done
vstatuses det1
# ... two at once ...
stop_reader s2; stop_reader s3
par local-detach det2 V -- 2 3
hoststate det2
# ... and attach them again, still under the other readers.
par local-attach att2 V -- 0 1 2 3
hoststate att2
for i in 0 1 2 3; do prepare t$i "$(jget /brick/att2-$i.out path)"; done
for i in 0 1 2 3; do start_reader t$i; done
await_reads 2 t0 t1 t2 t3
for i in 4 5 6 7; do stop_reader s$i; done
for i in 0 1 2 3; do stop_reader t$i; done
# All 8 at once.
par local-detach det3 V -- "${ALL[@]}"
hoststate det3
vstatuses det3

# --- multipath: 2 volumes over both slirp addresses ---
MV=("${V[@]:0:2}")
par local-attach matt MV --multipath -- 0 1
hoststate matt
for i in 0 1; do prepare m$i "$(jget /brick/matt-$i.out path)"; done
for i in 0 1; do start_reader m$i; done
await_reads 2 m0 m1
stop_reader m0
par local-detach mdet1 MV --multipath -- 0
hoststate mdet1
# m1 reads on after m0's map went away.
await_reads 2 m1
stop_reader m1
par local-detach mdet2 MV --multipath -- 1
hoststate mdet2
vstatuses mdet2
echo "IOERRORS all $(dmesg | grep -ci 'i/o error' || true)"
dmesg | grep -i 'i/o error' | head -5 | sed 's/^/DMESG /'
echo DONE
`

// TestConcurrency is issue 11's concurrency proof against the real Cinder:
// 8 parallel local-attaches of different volumes behind the one tgtd
// portal all succeed; a background O_DIRECT reader on every attached volume
// stays error-free while others are detached one at a time, two at once
// and attached again; then 8 parallel local-detaches all succeed and
// nothing is left. Then 2 volumes over multipath.
func TestConcurrency(t *testing.T) {
	lane(t, laneServices)
	sharedGuest.prestart() // boots while the host prepares
	c := needCinder(t, guestCinderOptions)
	var names, vols []string
	for i := 0; i < 8; i++ {
		names = append(names, fmt.Sprintf("brick-e2e-conc-%d", i))
	}
	for _, v := range newVolumes(t, c, names...) {
		vols = append(vols, v.ID)
	}
	g := runSharedGuest(t, c, concurrencyGuestScript, map[string]string{buildTool(t, "directreader"): "directreader"}, map[string]string{"VOLS": strings.Join(vols, " ")}, nil)

	rcs := func(label string, idx ...int) {
		t.Helper()
		for _, i := range idx {
			require.Equal(t, "0", g.rc(fmt.Sprintf("%s-%d", label, i)), "%s of volume %d: %v", label, i, g.lines[fmt.Sprintf("ERR %s-%d", label, i)])
		}
		var each []string
		for _, i := range idx {
			each = append(each, strings.Join(g.lines[fmt.Sprintf("TIME %s-%d", label, i)], ""))
		}
		t.Logf("%s: %d at once, wall %v s, each %s s", label, len(idx), g.lines["TIME "+label], strings.Join(each, " "))
	}
	host := func(label string) []string {
		t.Helper()
		v := g.lines["HOST "+label]
		require.Len(t, v, 4, "HOST %s", label)
		return v
	}
	// status checks the Cinder status of volumes idx at a VSTATUS line.
	status := func(label, want string, idx ...int) {
		t.Helper()
		got := map[string]string{}
		for _, kv := range g.lines["VSTATUS "+label] {
			if k, v, ok := strings.Cut(kv, "="); ok {
				got[k] = v
			}
		}
		for _, i := range idx {
			require.Equal(t, want, got[vols[i]], "%s: volume %d (%s)", label, i, vols[i])
		}
	}
	readers := func(keys ...string) {
		t.Helper()
		for _, k := range keys {
			v := g.lines["READER "+k]
			require.Len(t, v, 2, "READER %s", k)
			n, err := strconv.Atoi(v[0])
			require.NoError(t, err)
			require.Positive(t, n, "reader %s read nothing", k)
			require.Equal(t, "0", v[1], "reader %s: failed or wrong reads (%d good): %v", k, n, g.lines["READERR "+k])
		}
	}
	all := []int{0, 1, 2, 3, 4, 5, 6, 7}

	rcs("att1", all...)
	// A duplicate session is what a racy login leaves; name it before the
	// counts below say only that there is one too many.
	var dups []string
	for _, l := range strings.Split(g.out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "DUPSESSION ") {
			dups = append(dups, strings.TrimSpace(l))
		}
	}
	require.Empty(t, dups, "two sessions to one target through one portal")
	for _, l := range strings.Split(g.out, "\n") {
		if strings.Contains(l, "a second session to the target appeared") {
			t.Logf("duplicate session dropped by brick: %s", strings.TrimSpace(l))
		}
	}
	require.Equal(t, []string{"8", "8", "0", "8"}, host("attached"), "8 sessions, 8 disks, no map, 8 records")
	status("attached", "in-use", all...)
	for _, i := range all {
		require.Equal(t, "0", g.rc(fmt.Sprintf("write-s%d", i)))
	}
	rcs("det1", 0)
	rcs("det1", 1)
	status("det1", "available", 0, 1)
	status("det1", "in-use", 2, 3, 4, 5, 6, 7)
	rcs("det2", 2, 3)
	require.Equal(t, []string{"4", "4", "0", "4"}, host("det2"))
	rcs("att2", 0, 1, 2, 3)
	require.Equal(t, []string{"8", "8", "0", "8"}, host("att2"))
	readers("s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "t0", "t1", "t2", "t3")
	for i := 0; i < 4; i++ {
		require.Equal(t, "0", g.rc(fmt.Sprintf("write-t%d", i)))
	}
	rcs("det3", all...)
	require.Equal(t, []string{"0", "0", "0", "0"}, host("det3"), "no session, disk, map or record")
	status("det3", "available", all...)

	rcs("matt", 0, 1)
	require.Equal(t, []string{"4", "4", "2", "2"}, host("matt"), "2 sessions and 2 disks per volume, 2 maps, 2 records")
	readers("m0", "m1")
	rcs("mdet1", 0)
	require.Equal(t, []string{"2", "2", "1", "1"}, host("mdet1"))
	rcs("mdet2", 1)
	require.Equal(t, []string{"0", "0", "0", "0"}, host("mdet2"), "no session, disk, map or record")
	status("mdet2", "available", all...)
	require.Equal(t, []string{"0"}, g.lines["IOERRORS all"], "kernel I/O errors (DMESG lines in the log)")
	for _, k := range []string{"s0", "s4", "s7", "t0", "m0", "m1"} {
		t.Logf("reader %s: %v good/bad reads", k, g.lines["READER "+k])
	}
}
