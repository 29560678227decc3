//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed"
)

// The steps BRICK_TEST_CRASH_AT can kill brick at (attach.Step*), per
// flow. "register"/"unregister" need Ironic and are left to the Ironic
// tests; v3's begin-detach is a no-op in Cinder (the state there is the
// one at disconnect). The legacy flow differs from v3 only in its Cinder
// calls (reserve, initialize_connection, os-attach; begin_detaching,
// terminate_connection + os-detach), so it runs the steps around those.
var (
	crashAttachSteps = map[string][]string{
		"3.54": {"reserve", "export", "connect", "complete", "mkfs", "mount", "done"},
		"3.0":  {"reserve", "export", "complete"},
	}
	crashDetachSteps = map[string][]string{
		"3.54": {"unmount", "disconnect", "cinder-detach", "done"},
		"3.0":  {"begin-detach", "cinder-detach"},
	}
)

// fastShell goes after cinderGuestSetup in guest scripts that read Cinder
// often: its api talks HTTP/1.0 over bash's /dev/tcp instead of starting
// curl (about half a second per read under TCG, and state reads Cinder at
// every step), and these helpers start no process either:
//
//	lines PREFIX FILE [N]  FILE's lines (its first N), each after PREFIX
//	listening HOST PORT    whether HOST:PORT accepts a TCP connection now
const fastShell = `
api() {
	local fd st line body="" hp=${API#http://}
	hp=${hp%%/*}
	{ exec {fd}<>"/dev/tcp/${hp%:*}/${hp##*:}"; } 2>/dev/null || return 1
	printf 'GET /v3/%s/%s HTTP/1.0\r\nHost: %s\r\nX-Auth-Token: brick:%s\r\nOpenStack-API-Version: volume 3.70\r\n\r\n' "$P" "$1" "$hp" "$P" >&"$fd"
	if read -r -t 30 -u "$fd" _ st _ && [[ $st == 2?? ]]; then
		while read -r -t 30 -u "$fd" line && [[ -n ${line%$'\r'} ]]; do :; done
		IFS= read -r -t 30 -d '' -u "$fd" body
	fi
	exec {fd}>&-
	[[ $st == 2?? ]] && printf '%s\n' "$body"
}
lines() {
	local l n=0 max=${3:-0}
	while IFS= read -r l || [[ -n $l ]]; do
		echo "$1 $l"
		n=$((n + 1))
		((max > 0 && n >= max)) && break
	done <"$2"
}
listening() {
	local fd
	{ exec {fd}<>"/dev/tcp/$1/$2"; } 2>/dev/null || return 1
	exec {fd}>&-
}
`

// faultsGuestScript injects issue 11's faults into real local-attach and
// local-detach runs in one boot:
//   - kill -9 (BRICK_TEST_CRASH_AT) at each step of CRASH_ATTACH /
//     CRASH_DETACH ("flow:step" words), each followed by brick cleanup;
//   - Cinder going away right after the export (faultproxy -die-after),
//     both flows, then brick cleanup once Cinder is back;
//   - iscsiadm hanging on login (a sleeping wrapper first in PATH);
//   - a multipath map held open so its flush fails: detach refuses and
//     the volume stays usable; --force completes.
const faultsGuestScript = reliabilityPrelude + fastShell + `
MP=/mnt/crash
# nmnt: how many mounts on $MP; mopts: their options (builtins only).
nmnt() {
	local n=0 l
	while read -r l; do [[ $l == *" $MP "* ]] && n=$((n + 1)); done </proc/self/mountinfo
	echo "$n"
}
mopts() {
	local a b c d m o r
	while read -r a b c d m o r; do [[ $m == "$MP" ]] && echo "$o"; done </proc/self/mountinfo
}

# --- kill -9 at each step, then brick cleanup ---
for fs in $CRASH_ATTACH; do
	f=${fs%%:*} s=${fs#*:} l=ca-$fs
	BRICK_TEST_CRASH_AT=$s $B local-attach "$VOL_C" "${COMMON[@]}" --os-volume-api-version $f --mountpoint $MP --mkfs ext4 >/brick/$l.out 2>&1
	echo "RC $l $?"
	state crashed-$l "$VOL_C"
	t0=$(now)
	$B cleanup "$VOL_C" "${COMMON[@]}" --os-volume-api-version $f -f value >/brick/cleanup-$l.out 2>&1
	echo "RC cleanup-$l $?"
	took cleanup-$l "$t0"
	lines "CLEANUP $l" /brick/cleanup-$l.out 3
	if [[ $s == done ]]; then
		# Killed after the attach finished: the volume is attached, cleanup
		# leaves it so, and local-detach takes it away.
		state cleanedup-$l "$VOL_C"
		$B local-detach "$VOL_C" "${COMMON[@]}" >/brick/detach-$l.out 2>&1
		echo "RC detach-$l $?"
	fi
	state clean-$l "$VOL_C"
	echo "MNT $l $(nmnt)"
done
for fs in $CRASH_DETACH; do
	f=${fs%%:*} s=${fs#*:} l=cd-$fs
	$B local-attach "$VOL_C" "${COMMON[@]}" --os-volume-api-version $f --mountpoint $MP --mkfs ext4 >/brick/att-$l.out 2>&1
	echo "RC att-$l $?"
	echo "MOPTS $l $(mopts)"
	BRICK_TEST_CRASH_AT=$s $B local-detach "$VOL_C" "${COMMON[@]}" >/brick/$l.out 2>&1
	echo "RC $l $?"
	state crashed-$l "$VOL_C"
	t0=$(now)
	$B cleanup "$VOL_C" "${COMMON[@]}" --os-volume-api-version $f -f value >/brick/cleanup-$l.out 2>&1
	echo "RC cleanup-$l $?"
	took cleanup-$l "$t0"
	lines "CLEANUP $l" /brick/cleanup-$l.out 3
	state clean-$l "$VOL_C"
	echo "MNT $l $(nmnt)"
done

# --- Cinder goes away right after the export ---
for f in 3.54 3.0; do
	l=cdie-$f
	export_call=attachment-update
	[[ $f == 3.0 ]] && export_call=os-initialize_connection
	/brick/faultproxy -listen 127.0.0.1:18776 -target http://10.0.2.2:8776 -fail "" -die-after $export_call 2>/brick/faultproxy-$f.log &
	PROXY=$!
	for _ in {1..50}; do listening 127.0.0.1 18776 && break; pause 0.1; done
	t0=$(now)
	BRICK_CINDER_ENDPOINT=http://127.0.0.1:18776/v3 $B local-attach "$VOL_D" "${COMMON[@]}" --os-volume-api-version $f >/brick/$l.out 2>&1
	echo "RC $l $?"
	took $l "$t0"
	lines "ERR $l" /brick/$l.out
	if kill -0 $PROXY 2>/dev/null; then echo "PROXY $l alive"; kill $PROXY; else echo "PROXY $l gone"; fi
	wait $PROXY
	state failed-$l "$VOL_D"
	$B cleanup "$VOL_D" "${COMMON[@]}" --os-volume-api-version $f -f value >/brick/cleanup-$l.out 2>&1
	echo "RC cleanup-$l $?"
	lines "CLEANUP $l" /brick/cleanup-$l.out 3
	state clean-$l "$VOL_D"
done

# --- iscsiadm hangs on login ---
# brick looks programs up in its own fixed PATH only, which starts with
# /usr/local/sbin: the wrapper goes there for this step (the guest's root is
# a throwaway overlay) and no other.
cat >/usr/local/sbin/iscsiadm <<'WRAP'
#!/bin/bash
for a in "$@"; do [[ $a == --login ]] && exec sleep 600; done
exec /usr/sbin/iscsiadm "$@"
WRAP
chmod +x /usr/local/sbin/iscsiadm
t0=$(now)
# Each portal's login run is bounded by the login plus the command timeout
# (1 + 3 s); both portals are tried, then everything is rolled back.
$B local-attach "$VOL_T" "${COMMON[@]}" --iscsi-login-timeout 1s --iscsi-command-timeout 3s >/brick/hang.out 2>&1
echo "RC hang $?"
rm -f /usr/local/sbin/iscsiadm
took hang "$t0"
lines "ERR hang" /brick/hang.out
echo "SLEEPERS hang $(pgrep -xc sleep || true)"
echo "NODES hang $(iscsiadm -m node 2>/dev/null | grep -c . || true)"
state hang "$VOL_T"

# --- multipath flush fails: the map is held open ---
# A flush of a map held open fails whatever the time given; 2 s of
# retries prove the refusal as well as a minute would.
FLUSH=(--multipath --multipath-flush-timeout 2s --iscsi-command-timeout 10s)
$B local-attach "$VOL_M" "${COMMON[@]}" "${FLUSH[@]}" -f json >/brick/mp.json 2>/brick/mp.err
echo "RC mp-attach $?"
dev=$(jget /brick/mp.json path)
echo "DEVICE mp $dev"
dd if=/brick/pattern1 of="$dev" bs=1M seek=4 count=1 oflag=direct conv=notrunc status=none
echo "RC mp-write1 $?"
sleep 3600 <"$dev" &
HOLDER=$!
t0=$(now)
$B local-detach "$VOL_M" "${COMMON[@]}" "${FLUSH[@]}" >/brick/mp-busy.out 2>&1
echo "RC mp-busy $?"
took mp-busy "$t0"
lines "ERR mp-busy" /brick/mp-busy.out
state mp-busy "$VOL_M"
# Still attached and usable: the first pattern reads back, a second one
# is written through the same device.
dd if="$dev" bs=1M skip=4 count=1 iflag=direct status=none | cmp -s - /brick/pattern1
echo "RC mp-read1 $?"
dd if=/brick/pattern2 of="$dev" bs=1M seek=4 count=1 oflag=direct conv=notrunc status=none
echo "RC mp-write2 $?"
dd if="$dev" bs=1M skip=4 count=1 iflag=direct status=none | cmp -s - /brick/pattern2
echo "RC mp-read2 $?"
t0=$(now)
$B local-detach "$VOL_M" "${COMMON[@]}" "${FLUSH[@]}" --force >/brick/mp-force.out 2>&1
echo "RC mp-force $?"
took mp-force "$t0"
lines "ERR mp-force" /brick/mp-force.out
state mp-forced "$VOL_M"
# The forced detach left the held map to device-mapper's deferred
# removal: it goes when its holder closes it.
echo "HELD maps $(ndm)"
for m in $(dmsetup ls --target multipath | cut -f1 | grep -v '^No'); do dmsetup info "$m" 2>&1 | sed 's/^/HELDINFO /'; dmsetup table "$m" 2>&1 | sed 's/^/HELDINFO /'; done
kill $HOLDER; wait $HOLDER
udevadm settle -t 10
echo "LEFTOVER maps $(ndm)"
dmsetup ls --target multipath 2>&1 | sed 's/^/MAPS /'
for m in $(dmsetup ls --target multipath | cut -f1 | grep -v '^No'); do dmsetup info "$m" 2>&1 | sed 's/^/MAPS /'; dmsetup table "$m" 2>&1 | sed 's/^/MAPS /'; done
for m in $(dmsetup ls --target multipath | cut -f1 | grep -v '^No'); do dmsetup remove "$m"; done
state mp-released "$VOL_M"

# --- mkfs on a device with data but no signature: refused ---
# The host wrote 0x5a bytes into VOL_T's first MiB before the boot.
$B local-attach "$VOL_T" "${COMMON[@]}" --mountpoint /mnt/notblank --mkfs ext4 >/brick/notblank.out 2>&1
echo "RC notblank $?"
lines "ERR notblank" /brick/notblank.out
state notblank "$VOL_T"
` + faultsPathScript + `
echo DONE
`

// faultsPathScript injects issue 19's faults into one multipath volume
// (VOL_M, free again by now), each followed by a check that nothing is
// left:
//   - multipathd killed by the first login of a local-attach (a wrapper
//     first in PATH), then restarted, then local-detach;
//   - the host's tgtd killed and restarted (req-tgtd-restart, done by the
//     test) under O_DIRECT|O_SYNC writes; the blocks acknowledged go to
//     the share for the host to compare;
//   - the second portal's NIC dropping every packet (netem loss 100%)
//     under reads: the session fails at the NOP-Out timeout (2 + 3 s,
//     set for this attach), the read stuck on the path fails over once
//     the replacement timeout (recovery_tmo, set to 2 s) has passed; then
//     multipathd is killed and local-detach runs with the path still
//     blackholed.
const faultsPathScript = `
MPF=(--multipath --multipath-map-timeout 20s --multipath-flush-timeout 10s --iscsi-command-timeout 10s)
mpd_start() {
	multipathd
	for _ in {1..100}; do multipathd show daemon >/dev/null 2>&1 && break; pause 0.1; done
}
nmpd() { pidof multipathd | wc -w; }
# mpdetach LABEL: local-detach VOL_M, with its exit code, time, output
# and the state after it.
mpdetach() {
	local t0 rc
	t0=$(now)
	$B local-detach "$VOL_M" "${COMMON[@]}" "${MPF[@]}" >/brick/$1.out 2>&1
	rc=$?
	echo "RC $1 $rc"
	took "$1" "$t0"
	lines "ERR $1" /brick/$1.out 3
	state "$1" "$VOL_M"
}
# pathstates DEV: the dm-multipath path states (A active, F failed).
pathstates() { dmsetup status "$(<"/sys/block/${1##*/}/dm/name")" 2>/dev/null | awk '{for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+:[0-9]+$/) printf "%s", $(i + 1)}'; }

# --- multipathd dies mid-attach: the first login kills it ---
nwwids() { local n; n=$(grep -c '^/' /etc/multipath/wwids 2>/dev/null); echo "${n:-0}"; }
w0=$(nwwids)
cat >/usr/local/sbin/iscsiadm <<'WRAP'
#!/bin/bash
for a in "$@"; do [[ $a == --login ]] && kill -KILL $(pidof multipathd) 2>/dev/null; done
exec /usr/sbin/iscsiadm "$@"
WRAP
chmod +x /usr/local/sbin/iscsiadm
t0=$(now)
$B local-attach "$VOL_M" "${COMMON[@]}" "${MPF[@]}" -f json >/brick/mpd-att.json 2>/brick/mpd-att.err
echo "RC mpd-att $?"
took mpd-att "$t0"
rm -f /usr/local/sbin/iscsiadm
lines "WARN mpd-att" /brick/mpd-att.err 5
echo "MPD mpd-att $(nmpd)"
dev=$(jget /brick/mpd-att.json path)
echo "DEVICE mpd-att $dev"
state mpd-att "$VOL_M"
dd if=/brick/pattern1 of="$dev" bs=1M seek=8 count=1 oflag=direct conv=notrunc status=none
echo "RC mpd-write $?"
# multipathd comes back, as systemd would restart it: brick took back the
# WWID it listed, so no map is built under the single path in use.
mpd_start
udevadm settle -t 10
echo "WWIDS mpd-restarted $(($(nwwids) - w0))"
hoststate mpd-restarted
mpdetach mpd-det

# --- tgtd restarts under writes ---
# This attach's node records (made from iscsid.conf) get NOP-Outs every 2 s
# with a 3 s timeout instead of 5 and 5: the blackholed session below then
# goes FAILED within 5 s instead of 10. The shared guest gets the defaults
# back at once (a session keeps the values of its login).
cp /etc/iscsi/iscsid.conf /tmp/iscsid.conf.orig
sed -i -e 's/^node.conn\[0\].timeo.noop_out_interval = .*/node.conn[0].timeo.noop_out_interval = 2/' \
	-e 's/^node.conn\[0\].timeo.noop_out_timeout = .*/node.conn[0].timeo.noop_out_timeout = 3/' /etc/iscsi/iscsid.conf
$B local-attach "$VOL_M" "${COMMON[@]}" "${MPF[@]}" -f json >/brick/tgt-att.json 2>/brick/tgt-att.err
echo "RC tgt-att $?"
cp /tmp/iscsid.conf.orig /etc/iscsi/iscsid.conf
for c in /sys/class/iscsi_connection/connection*; do echo "NOOP tgt $(<"$c/recv_tmo") $(<"$c/ping_tmo")"; done
dev=$(jget /brick/tgt-att.json path)
echo "DEVICE tgt $dev"
# multipathd sets the replacement timeout to its fast_io_fail_tmo (5 s by
# default); the blackhole below waits for it to pass.
for f in /sys/class/iscsi_session/session*/recovery_tmo; do
	read -r r <"$f"
	((r > 20)) && echo 15 >"$f" && r=15
	echo "RECOVERY_TMO $r"
done
echo "PATHS tgt-before $(pathstates "$dev")"
head -c $((256 * 65536)) /dev/urandom >/tmp/blocks
cp /tmp/blocks /brick/blocks
# Block i of /tmp/blocks goes to 16 MiB + i * 64 KiB; a write that exits 0
# was acknowledged by the target and is listed in /brick/acked.
writer() {
	local i=0 s a b d max=0
	while [[ ! -e /tmp/stop-writer ]] && ((i < 256)); do
		s=$(now)
		if dd if=/tmp/blocks of="$dev" bs=64k skip=$i seek=$((256 + i)) count=1 oflag=direct,sync conv=notrunc status=none 2>>/tmp/werr; then
			echo "$i" >>/brick/acked
		else
			echo "$i" >>/tmp/wfail
		fi
		a=${s/./} b=${EPOCHREALTIME/./} d=$(((10#$b - 10#$a) / 1000))
		((d > max)) && max=$d
		i=$((i + 1))
		pause 0.1
	done
	echo "$i $max" >/tmp/wres
}
rm -f /tmp/stop-writer /tmp/wfail /tmp/werr /brick/acked
: >/brick/acked
writer &
WPID=$!
pause 1
t0=$(now)
: >/brick/req-tgtd-restart
for _ in {1..600}; do [[ -e /brick/ack-tgtd-restart ]] && break; pause 0.1; done
took tgt-restart "$t0"
lines "ACK tgt" /brick/ack-tgtd-restart
# Until both sessions are logged in and multipathd has both paths back.
loggedin() {
	local f st n=0
	for f in /sys/class/iscsi_session/session*/state; do
		read -r st <"$f"
		[[ $st == LOGGED_IN ]] && n=$((n + 1))
	done
	echo "$n"
}
for _ in {1..120}; do
	[[ $(loggedin) == 2 && $(pathstates "$dev") == AA ]] && break
	pause 0.5
done
took tgt-recovered "$t0"
echo "PATHS tgt-after $(pathstates "$dev")"
pause 1
: >/tmp/stop-writer
wait $WPID
read -r n maxms </tmp/wres
nf=0
[[ -e /tmp/wfail ]] && nf=$(grep -c . /tmp/wfail)
echo "WRITES tgt $n $(grep -c . /brick/acked) $nf $maxms"
[[ -s /tmp/werr ]] && lines "WERR tgt" /tmp/werr 3
# What the device reads back now, for the host to compare with the blocks.
dd if="$dev" of=/brick/readback bs=64k skip=256 count=256 iflag=direct status=none
echo "RC tgt-readback $?"
dmesg | grep -E 'connection[0-9:]+ (error|detected)|session recovery|tgtd|Fail|reinstat' | tail -8 | sed 's/^/DMESG tgt /'

# --- one path blackholed past the replacement timeout ---
# The session goes FAILED at the NOP-Out timeout; the reader's stalled read
# ends when the replacement timeout (recovery_tmo) has passed as well.
modprobe sch_netem
bhs=""
for s in /sys/class/iscsi_session/session*; do
	read -r a </sys/class/iscsi_connection/connection${s##*session}:0/persistent_address
	[[ $a == 10.0.3.2 ]] && bhs=$s
done
# The default failover policy sends all I/O to one path group; make it the
# blackholed path's group, or no read ever meets the blackhole.
activate_group_of() {
	local mm g name
	read -r mm <"$(echo "$1"/device/target*/*/block/*/dev)"
	name=$(<"/sys/block/${dev##*/}/dm/name")
	g=$(dmsetup table "$name" | awk -v want="$mm" '{
		i = 4; i += $i + 1; i += $i + 1; ng = $i; i += 2
		for (g = 1; g <= ng; g++) {
			i++; i += $i + 1; np = $i; i++; npa = $i; i++
			for (p = 0; p < np; p++) { if ($i == want) print g; i += npa + 1 }
		}
	}')
	echo "GROUP bh $g"
	dmsetup message "$name" 0 "switch_group $g"
}
[[ -n $bhs ]] && activate_group_of "$bhs"
# A 2 s replacement timeout on the blackholed session (multipathd set
# fast_io_fail_tmo's 5 s): the stalled read waits it out all the same.
[[ -n $bhs ]] && echo 2 >"$bhs/recovery_tmo"
reader() {
	local n=0 e=0 s a b d max=0
	while [[ ! -e /tmp/stop-reader ]]; do
		s=$(now)
		if dd if="$dev" of=/dev/null bs=64k skip=$((256 + n % 64)) count=1 iflag=direct status=none 2>>/tmp/rerr; then
			n=$((n + 1))
		else
			e=$((e + 1))
		fi
		a=${s/./} b=${EPOCHREALTIME/./} d=$(((10#$b - 10#$a) / 1000))
		((d > max)) && max=$d
		pause 0.2
	done
	echo "$n $e $max" >/tmp/rres
}
rm -f /tmp/stop-reader /tmp/rerr
reader &
RPID=$!
pause 1
t0=$(now)
tc qdisc add dev eth1 root netem loss 100%
echo "RC bh-on $?"
st=none
for _ in {1..120}; do
	[[ -n $bhs ]] && read -r st <"$bhs/state"
	[[ $st == FAILED ]] && break
	pause 0.5
done
took bh-failed "$t0"
echo "SESSION bh $st"
# Past the replacement timeout too, then dm's view of the paths.
r=5
[[ -n $bhs ]] && read -r r <"$bhs/recovery_tmo"
echo "TMO bh $r"
pause $((r + 2))
echo "PATHS bh $(pathstates "$dev")"
: >/tmp/stop-reader
wait $RPID
echo "READS bh $(</tmp/rres)"
[[ -s /tmp/rerr ]] && lines "RERR bh" /tmp/rerr 3
# multipathd dies too: the detach runs without it (multipath -f).
kill -KILL $(pidof multipathd)
mpdetach bh-det
tc qdisc del dev eth1 root
echo "NODES bh $(iscsiadm -m node 2>/dev/null | grep -c . || true)"
`

// TestFaults is issue 11's fault proof in one guest boot (see
// faultsGuestScript): every injected fault ends with the Cinder volume
// available and no session, disk, map, record or mount left, and the
// failing commands say which volume and step failed.
func TestFaults(t *testing.T) {
	lane(t, laneServices)
	sharedGuest.prestart() // boots while the host prepares
	c := needCinder(t, guestCinderOptions)
	volC := newVolume(t, c, "brick-e2e-faults-crash")
	volD := newVolume(t, c, "brick-e2e-faults-cinderdies")
	volT := newVolume(t, c, "brick-e2e-faults-hang")
	volM := newVolume(t, c, "brick-e2e-faults-flush")
	// Data without any signature blkid knows (plain dm-crypt would look so).
	bf, err := os.OpenFile(c.BackingFile(volT.ID), os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = bf.WriteAt(bytes.Repeat([]byte{0x5a}, 4096), 64<<10)
	require.NoError(t, err)
	require.NoError(t, bf.Close())
	dir := t.TempDir()
	var patterns [2][]byte
	files := map[string]string{buildFaultProxy(t): "faultproxy"}
	for i := range patterns {
		patterns[i] = make([]byte, 1<<20)
		_, err := rand.Read(patterns[i])
		require.NoError(t, err)
		name := "pattern" + strconv.Itoa(i+1)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), patterns[i], 0o644))
		files[filepath.Join(dir, name)] = name
	}
	var ca, cd []string
	for _, f := range []string{"3.54", "3.0"} {
		for _, s := range crashAttachSteps[f] {
			ca = append(ca, f+":"+s)
		}
		for _, s := range crashDetachSteps[f] {
			cd = append(cd, f+":"+s)
		}
	}
	g := runSharedGuest(t, c, faultsGuestScript, files, map[string]string{
		"VOL_C": volC.ID, "VOL_D": volD.ID, "VOL_T": volT.ID, "VOL_M": volM.ID,
		"CRASH_ATTACH": strings.Join(ca, " "), "CRASH_DETACH": strings.Join(cd, " "),
	}, func(ctx context.Context, share string) { tgtdRestarter(ctx, t, c, share) })
	faults := 0

	// kill -9 at each step, then cleanup.
	for _, fs := range ca {
		l := "ca-" + fs
		require.Equal(t, "137", g.rc(l), "%s: SIGKILL", l)
		require.Equal(t, "1", g.st("crashed-" + l)[5], "%s: the record survives the crash", l)
		require.Equal(t, "0", g.rc("cleanup-"+l), "%s: cleanup %v", l, g.lines["CLEANUP "+l])
		if strings.HasSuffix(fs, ":done") {
			s := g.st("cleanedup-" + l)
			require.Equal(t, "in-use", s[0], "%s: an attach killed after it finished stays attached", l)
			require.Equal(t, "1", s[5], l)
			require.Equal(t, "0", g.rc("detach-"+l), l)
		}
		g.clean("clean-" + l)
		require.Equal(t, []string{"0"}, g.lines["MNT "+l], "%s: nothing mounted", l)
		faults++
		t.Logf("%s: cleanup %v s: %v", l, g.lines["TIME cleanup-"+l], g.lines["CLEANUP "+l])
	}
	for _, fs := range cd {
		l := "cd-" + fs
		require.Equal(t, "0", g.rc("att-"+l), l)
		mopts := strings.Split(strings.Join(g.lines["MOPTS "+l], ""), ",")
		require.Subset(t, mopts, []string{"nosuid", "nodev"}, "%s: volume content mounted nosuid,nodev", l)
		require.Equal(t, "137", g.rc(l), "%s: SIGKILL", l)
		require.Equal(t, "1", g.st("crashed-" + l)[5], "%s: the record survives the crash", l)
		require.Equal(t, "0", g.rc("cleanup-"+l), "%s: cleanup %v", l, g.lines["CLEANUP "+l])
		g.clean("clean-" + l)
		require.Equal(t, []string{"0"}, g.lines["MNT "+l], "%s: nothing mounted", l)
		faults++
		t.Logf("%s: cleanup %v s: %v", l, g.lines["TIME cleanup-"+l], g.lines["CLEANUP "+l])
	}

	// Cinder dies after the export: the host side is rolled back at once,
	// the record stays for cleanup, which finishes once Cinder is back.
	for _, f := range []string{"3.54", "3.0"} {
		l := "cdie-" + f
		require.NotEqual(t, "0", g.rc(l), l)
		msg := strings.Join(g.lines["ERR "+l], " ")
		require.True(t, strings.HasPrefix(msg, "brick: local-attach "+volD.ID+": "), "%s: names the volume: %q", l, msg)
		require.Contains(t, msg, "run brick cleanup "+volD.ID, l)
		require.Equal(t, 1, strings.Count(g.out, "ERR "+l+" "), "%s: the error is one line", l)
		s := g.st("failed-" + l)
		require.Equal(t, []string{"0", "0", "0", "1"}, s[2:], "%s: no session, disk or map; the record is kept", l)
		require.Equal(t, "0", g.rc("cleanup-"+l), "%s: %v", l, g.lines["CLEANUP "+l])
		g.clean("clean-" + l)
		faults++
		t.Logf("%s: failed after %v s (Cinder state %v): %s", l, g.lines["TIME "+l], s[:2], msg)
	}

	// iscsiadm hangs: bounded by login + command timeout, rolled back.
	require.NotEqual(t, "0", g.rc("hang"))
	msg := strings.Join(g.lines["ERR hang"], " ")
	require.True(t, strings.HasPrefix(msg, "brick: local-attach "+volT.ID+": "), "names the volume: %q", msg)
	require.Contains(t, msg, "login")
	require.Contains(t, msg, "timed out after 4s", "each login run is bounded by the login + command timeout (1 + 3 s)")
	took, err := strconv.ParseFloat(g.word("TIME hang", 0), 64)
	require.NoError(t, err)
	require.Less(t, took, 25.0, "two portals at login 1 s + command 3 s each, then rollback")
	require.Equal(t, []string{"0"}, g.lines["NODES hang"], "node records removed")
	require.Equal(t, []string{"0"}, g.lines["SLEEPERS hang"], "the hung iscsiadm was killed")
	g.clean("hang")
	faults++
	t.Logf("iscsiadm hang: failed after %.1f s: %s", took, msg)

	// Multipath flush fails: detach refuses, nothing lost; --force completes.
	require.Equal(t, "0", g.rc("mp-attach"))
	require.Equal(t, "0", g.rc("mp-write1"))
	require.NotEqual(t, "0", g.rc("mp-busy"), "detach of a map held open")
	msg = strings.Join(g.lines["ERR mp-busy"], " ")
	require.True(t, strings.HasPrefix(msg, "brick: local-detach "+volM.ID+": "), "names the volume: %q", msg)
	require.Contains(t, msg, "--force")
	require.Equal(t, []string{"in-use", g.st("mp-busy")[1], "2", "2", "1", "1"}, g.st("mp-busy"), "still attached: 2 sessions, 2 disks, the map, the record")
	require.Equal(t, "0", g.rc("mp-read1"), "data still readable")
	require.Equal(t, "0", g.rc("mp-write2"), "still writable")
	require.Equal(t, "0", g.rc("mp-read2"))
	require.Equal(t, "0", g.rc("mp-force"), "%v", g.lines["ERR mp-force"])
	s := g.st("mp-forced")
	require.Equal(t, []string{"available", "-", "0", "0"}, s[:4], "forced: Cinder detached, no session or disk")
	require.Equal(t, "0", s[5], "no record")
	require.Equal(t, []string{"0"}, g.lines["LEFTOVER maps"], "the held map goes when its holder closes it (deferred removal); MAPS lines: %v", g.lines["MAPS"])
	g.clean("mp-released")
	t.Logf("maps while the holder still had the device open: %v; after it closed: %v", g.lines["HELD maps"], g.lines["LEFTOVER maps"])
	backing, err := os.ReadFile(c.BackingFile(volM.ID))
	require.NoError(t, err)
	require.True(t, bytes.Equal(patterns[1], span(t, backing, patternOffset<<20, (patternOffset+1)<<20, "backing file")), "the write made after the refused detach is in the backing file")
	faults++
	t.Logf("flush refused after %v s: %s; --force took %v s", g.lines["TIME mp-busy"], msg, g.lines["TIME mp-force"])

	// Not blank though blkid finds nothing: mkfs refused, rolled back.
	require.NotEqual(t, "0", g.rc("notblank"))
	msg = strings.Join(g.lines["ERR notblank"], " ")
	require.Contains(t, msg, "not formatting")
	require.Contains(t, msg, "a non-zero byte at offset 65536, in its first MiB")
	g.clean("notblank")
	t.Logf("mkfs on a device holding data without a signature: %s", msg)
	faults += checkPathFaults(t, c, g, volM.ID, patterns[0])
	t.Logf("faults injected and survived: %d", faults)
}

// checkPathFaults checks faultsPathScript's lines and returns how many
// faults it survived.
func checkPathFaults(t *testing.T, c *testbed.Cinder, g *guestRun, vol string, pattern []byte) int {
	backing, err := os.ReadFile(c.BackingFile(vol))
	require.NoError(t, err)

	// multipathd killed by the first login: a single-path attach with a
	// warning, at once rather than after the 20 s map timeout.
	require.Equal(t, "0", g.rc("mpd-att"), "%v", g.lines["WARN mpd-att"])
	warn := strings.Join(g.lines["WARN mpd-att"], " ")
	require.Contains(t, warn, "multipathd is not running")
	require.Contains(t, warn, "using a single path")
	require.Equal(t, []string{"0"}, g.lines["MPD mpd-att"], "the wrapper killed multipathd")
	require.True(t, strings.HasPrefix(g.word("DEVICE mpd-att", 0), "/dev/sd"), "%v", g.lines["DEVICE mpd-att"])
	require.Equal(t, []string{"0", "1"}, g.st("mpd-att")[4:], "no map, the record")
	tookAttach := seconds(t, g, "mpd-att")
	require.Less(t, tookAttach, 20.0, "not the map timeout")
	require.Equal(t, "0", g.rc("mpd-write"))
	require.True(t, bytes.Equal(pattern, span(t, backing, 8<<20, 9<<20, "backing file")), "the write through the single path is in the backing file")
	require.Equal(t, []string{"0"}, g.lines["WWIDS mpd-restarted"], "the WWID brick added for the map that did not come is forgotten")
	require.Equal(t, "0", g.st("mpd-att")[4], "no map")
	require.Equal(t, "0", g.rc("mpd-det"), "%v", g.lines["ERR mpd-det"])
	g.clean("mpd-det")
	t.Logf("multipathd killed mid-attach: attach took %.1f s; after its restart (sessions, sd, maps, records) %v; detach %v s; warning: %s",
		tookAttach, g.lines["HOST mpd-restarted"], g.lines["TIME mpd-det"], warn)

	// tgtd restarted under writes: every acknowledged block is on the
	// target and reads back through the map.
	require.Equal(t, "0", g.rc("tgt-att"))
	require.NotEmpty(t, g.lines["ACK tgt"], "host restart of tgtd")
	require.Equal(t, "ok", g.word("ACK tgt", 0), "host restart of tgtd: %v", g.lines["ACK tgt"])
	require.Equal(t, []string{"AA"}, g.lines["PATHS tgt-after"], "both paths back")
	var tmo []int
	for _, l := range strings.Split(g.out, "\n") {
		if v, ok := strings.CutPrefix(l, "RECOVERY_TMO "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			require.NoError(t, err)
			tmo = append(tmo, n)
		}
	}
	require.Len(t, tmo, 2, "the replacement timeout of both sessions")
	w := g.lines["WRITES tgt"]
	require.Len(t, w, 4, "issued acked failed max-ms")
	blocks, err := os.ReadFile(filepath.Join(g.share, "blocks"))
	require.NoError(t, err)
	readback, err := os.ReadFile(filepath.Join(g.share, "readback"))
	require.NoError(t, err)
	require.Equal(t, "0", g.rc("tgt-readback"))
	acked, err := os.ReadFile(filepath.Join(g.share, "acked"))
	require.NoError(t, err)
	n := 0
	for _, f := range strings.Fields(string(acked)) {
		i, err := strconv.Atoi(f)
		require.NoError(t, err)
		want := span(t, blocks, i<<16, (i+1)<<16, "blocks written")
		require.True(t, bytes.Equal(want, span(t, backing, 16<<20+i<<16, 16<<20+(i+1)<<16, "backing file")), "acknowledged block %d is in the backing file", i)
		require.True(t, bytes.Equal(want, span(t, readback, i<<16, (i+1)<<16, "readback")), "acknowledged block %d reads back through the map", i)
		n++
	}
	require.Positive(t, n)
	require.Equal(t, w[1], strconv.Itoa(n))
	t.Logf("tgtd restart under writes: restart %v, paths before %v after %v (%v s); writes issued %s, acknowledged %s (all on the target), failed %s, longest %s ms; %v %v; session recovery_tmo %v",
		g.lines["ACK tgt"], g.lines["PATHS tgt-before"], g.lines["PATHS tgt-after"], g.lines["TIME tgt-recovered"], w[0], w[1], w[2], w[3],
		g.lines["WERR tgt"], g.lines["DMESG tgt"], tmo)

	// One path blackholed: its session fails at the NOP-Out timeout, the
	// read stuck on it fails over to the other path once the replacement
	// timeout has passed (no read fails), and detach completes with the
	// path still blackholed and multipathd dead.
	require.Equal(t, "0", g.rc("bh-on"))
	require.Len(t, g.lines["GROUP bh"], 1, "the blackholed path's group made active")
	require.Equal(t, []string{"FAILED"}, g.lines["SESSION bh"], "the blackholed session failed")
	r := g.lines["READS bh"]
	require.Len(t, r, 3, "reads errors max-ms")
	require.Equal(t, "0", r[1], "no read failed: %v", g.lines["RERR bh"])
	stall, err := strconv.Atoi(r[2])
	require.NoError(t, err)
	require.Len(t, g.lines["TMO bh"], 1, "the blackholed session's recovery_tmo")
	bhTmo, err := strconv.Atoi(g.word("TMO bh", 0))
	require.NoError(t, err)
	require.Positive(t, bhTmo)
	require.GreaterOrEqual(t, stall, 1000*bhTmo, "a read waited out the replacement timeout (recovery_tmo %v s) and then succeeded", bhTmo)
	require.Equal(t, "0", g.rc("bh-det"), "%v", g.lines["ERR bh-det"])
	g.clean("bh-det")
	require.Equal(t, []string{"0"}, g.lines["NODES bh"], "node records removed")
	t.Logf("blackholed path: path group %v, NOP-Out interval/timeout %v, session FAILED after %v s, recovery_tmo %d s, dm path states after the replacement timeout too %v, reads %s ok, %s failed, longest %s ms; detach with the path blackholed and multipathd dead %v s, output %v",
		g.lines["GROUP bh"], g.lines["NOOP tgt"], g.lines["TIME bh-failed"], bhTmo, g.lines["PATHS bh"], r[0], r[1], r[2], g.lines["TIME bh-det"], g.lines["ERR bh-det"])
	return 4
}

// seconds is a TIME line as a number.
func seconds(t *testing.T, g *guestRun, label string) float64 {
	t.Helper()
	v := g.lines["TIME "+label]
	require.Len(t, v, 1, "TIME %s", label)
	f, err := strconv.ParseFloat(v[0], 64)
	require.NoError(t, err)
	return f
}

// tgtdRestarter restarts the host's tgtd when the guest asks for it
// (req-tgtd-restart in the share) and answers with ack-tgtd-restart: "ok"
// and how long it took, or the error.
func tgtdRestarter(ctx context.Context, t *testing.T, c *testbed.Cinder, share string) {
	req := filepath.Join(share, "req-tgtd-restart")
	for ctx.Err() == nil {
		if _, err := os.Stat(req); err == nil {
			start := time.Now()
			err := restartTgtd(ctx, c)
			msg := "ok " + time.Since(start).Round(time.Millisecond).String()
			if err != nil {
				msg = "error " + err.Error()
			}
			t.Logf("host: tgtd restart: %s", msg)
			_ = os.Remove(req)
			_ = os.WriteFile(filepath.Join(share, "ack-tgtd-restart"), []byte(msg+"\n"), 0o644)
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// restartTgtd kills the test bed's tgtd (tgtd ignores SIGTERM: a crash)
// and starts it again with Cinder's targets, taking the test bed's portal
// last. The new PID goes into the pid file test/cinder/down.sh stops.
func restartTgtd(ctx context.Context, c *testbed.Cinder) error {
	pidFile := filepath.Join(c.StateDir, "tgtd.pid")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return fmt.Errorf("%s: %w", pidFile, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill tgtd %d: %w", pid, err)
	}
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	logFile, err := os.OpenFile(filepath.Join(c.StateDir, "logs", "tgtd.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	// tgtd listens on a spare port first; the test bed's portal comes only
	// once Cinder's targets are back, so no relogin meets a tgtd without
	// its target (open-iscsi then gives the session up for good: seen in
	// a run that set tgtd offline only after its start).
	listen := c.Env["BRICK_TB_TGT_LISTEN"]
	spare, err := sparePort(listen)
	if err != nil {
		return err
	}
	cmd := exec.Command("tgtd", "-f", "--iscsi", "portal="+listen+":"+spare)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start tgtd: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		return err
	}
	run := func(name string, args ...string) error {
		out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, out)
		}
		return nil
	}
	var last error
	for i := 0; i < 200; i++ {
		if last = run("tgtadm", "--op", "show", "--mode", "system"); last == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if last != nil {
		return last
	}
	conf := filepath.Join(c.StateDir, "tgt-restart.conf")
	if err := os.WriteFile(conf, []byte("include "+c.Env["BRICK_TB_CINDER_TGT_DIR"]+"/*\n"), 0o644); err != nil {
		return err
	}
	if err := run("tgt-admin", "-e", "-c", conf); err != nil {
		return err
	}
	if err := run("tgtadm", "--lld", "iscsi", "--op", "new", "--mode", "portal", "--param", "portal="+listen+":"+c.Env["BRICK_TB_TARGET_PORT"]); err != nil {
		return err
	}
	return run("tgtadm", "--lld", "iscsi", "--op", "delete", "--mode", "portal", "--param", "portal="+listen+":"+spare)
}

// sparePort is a TCP port free on addr just now.
func sparePort(addr string) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}
