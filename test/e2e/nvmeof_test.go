//go:build e2e

package e2e

// TestNVMeoF proves connector/nvmeof on a real kernel (issue 21): the test
// bed Cinder exports volumes over NVMe/TCP (brick_tb_driver.GuestNVMeT)
// from the guest's own kernel nvmet (test/guest/fixtures/nvmet.sh serves
// Cinder's export records), and brick inside the guest attaches what Cinder
// answers. One guest boot and one Cinder start serve both connection info
// formats (a guest.Session, booted while Cinder starts; each volume asks
// for its format in its metadata, brick_tb_nvme_format; the first script
// must leave no controller for the second):
//
//   - old (nqn/target_portal, as Cinder Zed sends it) and new
//     (target_nqn/vol_uuid/portals): local-attach, write a pattern,
//     local-detach, nothing left in /sys/class/nvme, re-attach, the pattern
//     reads back, detach;
//   - new, two portals: two controllers, one head nvmeXnY; a reader on the
//     head while each port's ANA group goes inaccessible and back: 0 errors;
//   - new: a dead portal (black hole) beside a live one: brick connect
//     succeeds within the per-portal timeout + 1 s;
//   - new: two namespaces of one subsystem: disconnecting one leaves the
//     controllers and the other's I/O alone; the last one removes them;
//   - new: kill -9 of local-attach (after the connect, and from outside
//     while the kernel connects), then brick cleanup: no controller left;
//   - new: RDMA (RoCEv2) over soft-RoCE (rxe.sh on eth0, nvmet-rdma):
//     connect, I/O, disconnect;
//   - new: online extend (issue 22): a 1 GiB namespace behind both portals
//     grows to 2 GiB (its backing file; nvmet re-reads the size on the
//     Identify the host's rescan sends) under a writer on its mounted ext4;
//     brick extend --local-only rescans both controllers, waits for the
//     head and both paths, grows the ext4.
//
// Run: test/e2e.sh -run '^TestNVMeoF$'

import (
	"context"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed"
	"github.com/brick-storage/brick/internal/testbed/guest"
)

// deadPortalTimeout is the per-portal timeout (--nvme-portal-timeout)
// the dead-portal connect runs with: the bound it must keep is the flag's,
// whatever its value; a short one keeps the black hole's wait short (the
// default, 10 s, cost the suite 10 s per run).
const deadPortalTimeout = 4 * time.Second

const nvmeGuestScript = guestShellHelpers + `
set -uo pipefail
cp /brick/brick /tmp/brick
B=/tmp/brick
P=$PROJECT
API=http://10.0.2.2:8776/v3
export OS_AUTH_TYPE=noauth BRICK_CONFIG=/dev/null BRICK_CINDER_ENDPOINT=$API
COMMON=(--nic eth0)
api() { curl -sf -m 30 -H "X-Auth-Token: brick:$P" -H "OpenStack-API-Version: volume 3.70" "$API/$P/$1"; }
# vstatus: a volume's status, with a bash regex (Python's start-up from the
# 9p root costs seconds under TCG; only the volume itself has a "status" key).
vstatus() {
	local j re='"status": *"([^"]*)"'
	j=$(api "volumes/$1") || { echo api-error; return; }
	[[ $j =~ $re ]] && echo "${BASH_REMATCH[1]}" || echo api-error
}
nctrl() { nglob /sys/class/nvme/*; }
# waitfor PRESENT|GONE FILE: up to 10 s, builtins only.
waitfor() {
	local i
	for ((i = 0; i < 100; i++)); do
		if [[ $1 == PRESENT ]]; then [[ -e $2 ]] && return 0; else [[ -e $2 ]] || return 0; fi
		pause 0.1
	done
	return 1
}

eval "$("$BRICK_FIXTURES/nvmet.sh" ports 4420)"
mkdir -p /brick/exports
"$BRICK_FIXTURES/nvmet.sh" serve /brick/exports 2>/brick/nvmet.log &
read -r hostnqn </etc/nvme/hostnqn
read -r native </sys/module/nvme_core/parameters/multipath
echo "host nqn $hostnqn native multipath $native"

attach() { # LABEL
	local t0; t0=$(now)
	$B local-attach "$VOL" "${COMMON[@]}" -f json >/brick/attach-$1.json 2>/brick/attach-$1.err
	echo "RC attach-$1 $?"
	took attach-$1 "$t0"
	DEV=$(jget /brick/attach-$1.json path)
	local att; att=$(jget /brick/attach-$1.json attachment_id)
	echo "DEVICE $1 $DEV ctrls=$(nctrl) status=$(vstatus "$VOL")"
	# jq, one C process: the connection info's protocol keys, sorted.
	api "attachments/$att" | jq -r '.attachment.connection_info | keys | map(select(IN("nqn", "target_portal", "target_port", "transport_type", "ns_id", "target_nqn", "vol_uuid", "portals", "volume_nguid", "host_nqn"))) | "CONNINFO " + join(" ")'
	local c tr ad hn
	for c in /sys/class/nvme/nvme*; do
		[[ -e $c ]] || continue
		read -r tr <"$c/transport"; read -r ad <"$c/address"; read -r hn <"$c/hostnqn"
		echo "CTRL $1 ${c##*/} $tr $ad hostnqn=$hn"
	done
}
detach() { # LABEL
	local t0; t0=$(now)
	$B local-detach "$VOL" "${COMMON[@]}" >/brick/detach-$1.out 2>&1
	echo "RC detach-$1 $?"
	took detach-$1 "$t0"
	echo "LEFT $1 ctrls=$(nctrl) status=$(vstatus "$VOL") exports=$(nglob /brick/exports/*)"
}

attach 1
dd if=/brick/pattern of="$DEV" bs=1M seek=4 count=1 oflag=direct conv=notrunc status=none
echo "RC write $?"
$B list -f value -c volume -c protocol 2>&1 | sed 's/^/LIST /'
$B get-volume-paths "$VOL" -f value 2>&1 | sed 's/^/PATHS /'
detach 1
attach 2
dd if="$DEV" of=/tmp/back bs=1M skip=4 count=1 iflag=direct status=none
cmp -s /tmp/back /brick/pattern
echo "RC readback $?"

if [[ $FORMAT == new ]]; then
	head=${DEV##*/}
	paths=(/sys/block/${head%n*}c*n*)
	echo "HEAD $head ${paths[*]##*/}"
	# anastates: every path's ANA state, one line.
	anastates() {
		local p s out=()
		for p in "${paths[@]}"; do read -r s <"$p/ana_state"; out+=("$s"); done
		echo "${out[*]}"
	}
	# A reader on the head while each port in turn turns inaccessible; it
	# leaves its counts in /tmp/reader after every read.
	rm -f /tmp/stop-reader
	echo "0 0" >/tmp/reader
	(
		reads=0 errs=0
		while [[ ! -e /tmp/stop-reader ]]; do
			if dd if="$DEV" of=/dev/null bs=1M count=16 iflag=direct status=none; then reads=$((reads + 1)); else errs=$((errs + 1)); fi
			echo "$reads $errs" >/tmp/reader
		done
	) &
	rpid=$!
	# readsfrom N: wait (up to 20 s) until the reader has done N more reads.
	readsfrom() {
		local r="" e want i
		until [[ -n $r ]]; do read -r r e </tmp/reader; done
		want=$((r + $1))
		for ((i = 0; i < 200; i++)); do
			read -r r e </tmp/reader
			((r >= want)) && return 0
			pause 0.1
		done
		return 1
	}
	# anawait WORD|-WORD: until some path's state is WORD (or none is), up to 10 s.
	anawait() {
		local i s
		for ((i = 0; i < 100; i++)); do
			s=" $(anastates) "
			if [[ $1 == -* ]]; then [[ $s != *" ${1#-} "* ]] && return 0; else [[ $s == *" $1 "* ]] && return 0; fi
			pause 0.1
		done
		return 1
	}
	readsfrom 2
	for port in 1 2; do
		"$BRICK_FIXTURES/nvmet.sh" ana $port inaccessible
		anawait inaccessible
		# Reads go on while the path is inaccessible (the head uses the other).
		readsfrom 3
		echo "ANA port$port $(anastates)"
		"$BRICK_FIXTURES/nvmet.sh" ana $port optimized
		anawait -inaccessible
		readsfrom 1
	done
	touch /tmp/stop-reader
	wait $rpid
	echo "READER $(</tmp/reader)"
fi
detach 2

if [[ $FORMAT == new ]]; then
	modprobe dummy && ip link add bh0 type dummy && ip link set bh0 up && ip addr add 192.0.2.1/24 dev bh0
	NQN=nqn.2014-08.org.brick:e2e-shared
	for n in 1 2; do
		printf 'NQN=%s\nNSID=%d\nUUID=%s\nSIZE=%d\n' "$NQN" $n "${UUIDS[$n]}" $((64 << 20)) >/brick/exports/${UUIDS[$n]}.export
	done
	for n in 1 2; do waitfor PRESENT /brick/exports/${UUIDS[$n]}.ready; done
	conn() { # N PORTALS
		echo "{\"driver_volume_type\":\"nvmeof\",\"target_nqn\":\"$NQN\",\"vol_uuid\":\"${UUIDS[$1]}\",\"portals\":$2}" >/tmp/conn$1.json
	}
	conn 1 '[["192.0.2.2",4420,"tcp"],["127.0.0.1",4420,"tcp"]]'
	conn 2 '[["127.0.0.1",4420,"tcp"],["127.0.0.2",4420,"tcp"]]'
	t0=$(now)
	# The per-portal timeout from the flag: what the dead portal may cost.
	$B connect --connection-info /tmp/conn1.json --nvme-portal-timeout $DEAD_PORTAL_TIMEOUT -f json >/brick/dead.json 2>/brick/dead.err
	echo "RC dead-connect $?"
	took dead-connect "$t0"
	echo "DEADCTRLS $(nctrl)"
	t0=$(now)
	$B connect --connection-info /tmp/conn2.json -f json >/brick/shared2.json 2>/brick/shared2.err
	echo "RC shared-connect $?"
	took shared-connect "$t0"
	D1=$(jget /brick/dead.json path) D2=$(jget /brick/shared2.json path)
	echo "SHARED $D1 $D2 ctrls=$(nctrl)"
	$B disconnect --connection-info /tmp/conn1.json >/brick/shared-d1.err 2>&1
	echo "RC shared-disconnect1 $?"
	dd if="$D2" of=/dev/null bs=1M count=8 iflag=direct status=none
	echo "RC shared-read2 $?"
	echo "SHAREDAFTER1 ctrls=$(nctrl) d1=$([[ -e $D1 ]] && echo present || echo gone)"
	# The target drops the first namespace, as Cinder does after a detach.
	rm /brick/exports/${UUIDS[1]}.export
	waitfor GONE "$D1"
	$B disconnect --connection-info /tmp/conn2.json >/brick/shared-d2.err 2>&1
	echo "RC shared-disconnect2 $?"
	echo "SHAREDAFTER2 ctrls=$(nctrl)"
	rm /brick/exports/${UUIDS[2]}.export
fi

if [[ $FORMAT == new ]]; then
	# Online extend: brick connect makes no record, extend_check writes one.
	XNQN=nqn.2014-08.org.brick:e2e-extend XU=5a5a5a5a-0000-4000-8000-0000000000e0
	t0=$(now)
	printf 'NQN=%s\nNSID=1\nUUID=%s\nSIZE=%d\n' "$XNQN" $XU $((1 << 30)) >/brick/exports/$XU.export
	waitfor PRESENT /brick/exports/$XU.ready
	echo "{\"driver_volume_type\":\"nvmeof\",\"data\":{\"target_nqn\":\"$XNQN\",\"vol_uuid\":\"$XU\",\"portals\":[[\"127.0.0.1\",4420,\"tcp\"],[\"127.0.0.2\",4420,\"tcp\"]]}}" >/tmp/ext.json
	$B connect --connection-info /tmp/ext.json -f json >/brick/ext-dev.json 2>/brick/ext-connect.err
	echo "RC ext-connect $?"
	XDEV=$(jget /brick/ext-dev.json path)
	xgrow() { truncate -s 2G /tmp/nvmet/$XU.img; }
	( set -e; cd /tmp; extend_check nvme /tmp/ext.json /brick/ext-dev.json $((2 << 30)) xgrow ) >/tmp/ext.out 2>&1
	echo "RC ext-extend $?"
	sed 's/^/EXTOUT /' /tmp/ext.out
	h=${XDEV#/dev/}
	echo "EXTSIZES $h=$(blockdev --getsize64 "$XDEV") $(for p in /sys/class/nvme/nvme*/${h%n*}c*n${h##*n}; do [[ -e $p/size ]] && read -r sz <"$p/size" && printf '%s=%s ' "${p##*/}" $((sz * 512)); done)"
	$B disconnect --connection-info /tmp/ext.json >>/brick/ext-connect.err 2>&1
	echo "RC ext-disconnect $?"
	rm -f /brick/exports/$XU.export
	waitfor GONE /brick/exports/$XU.ready
	rm -f /tmp/nvmet/$XU.img
	took ext-all "$t0"
	echo "EXTAFTER ctrls=$(nctrl)"
	sed 's/^/EXTERR /' /brick/ext-connect.err | grep -v level=DEBUG | head -5
fi

if [[ $FORMAT == new ]]; then
	# kill -9 mid-attach, then brick cleanup: once at the step after the
	# connect (testing aid), once from outside while the kernel connects.
	BRICK_TEST_CRASH_AT=complete $B local-attach "$VOL" "${COMMON[@]}" >/brick/crash.out 2>&1
	echo "RC crash-complete $?"
	echo "CRASHED complete ctrls=$(nctrl) status=$(vstatus "$VOL")"
	$B cleanup "$VOL" "${COMMON[@]}" -f value >/brick/cleanup-complete.out 2>&1
	echo "RC cleanup-complete $?"
	echo "CLEANED complete ctrls=$(nctrl) status=$(vstatus "$VOL")"
	$B local-attach "$VOL" "${COMMON[@]}" >/brick/kill.out 2>&1 &
	kpid=$!
	# Builtins only: a poll that starts ls and sleep each round noticed the
	# controller so late under TCG that the attach had finished.
	shopt -s nullglob
	for ((i = 0; i < 1000000; i++)); do c=(/sys/class/nvme/nvme*); ((${#c[@]})) && break; done
	shopt -u nullglob
	kill -9 $kpid
	wait $kpid
	echo "RC crash-kill $?"
	echo "CRASHED kill ctrls=$(nctrl) status=$(vstatus "$VOL")"
	$B cleanup "$VOL" "${COMMON[@]}" -f value >/brick/cleanup-kill.out 2>&1
	echo "RC cleanup-kill $?"
	echo "CLEANED kill ctrls=$(nctrl) status=$(vstatus "$VOL")"

	# RDMA (RoCEv2) over soft-RoCE: rxe.sh on eth0, nvmet-rdma listening on
	# eth0's address, brick connecting with transport RoCEv2.
	RNQN=nqn.2014-08.org.brick:e2e-rdma RU=5a5a5a5a-0000-4000-8000-0000000000c0
	t0=$(now)
	modprobe -a nvme-rdma nvmet-rdma 2>&1 | sed 's/^/RDMAERR /'
	RXE_ADDRS=""
	rxe=$("$BRICK_FIXTURES/rxe.sh" eth0 2>/tmp/rxe.err) && eval "$rxe" || sed 's/^/RDMAERR /' /tmp/rxe.err
	RADDR=$RXE_ADDRS
	R=/sys/kernel/config/nvmet/ports/3
	mkdir -p $R && echo rdma >$R/addr_trtype && echo ipv4 >$R/addr_adrfam && echo "$RADDR" >$R/addr_traddr && echo 4420 >$R/addr_trsvcid
	echo "RC rdma-port $?"
	printf 'NQN=%s\nNSID=1\nUUID=%s\nSIZE=%d\n' "$RNQN" $RU $((64 << 20)) >/brick/exports/$RU.export
	waitfor PRESENT /brick/exports/$RU.ready
	ln -s /sys/kernel/config/nvmet/subsystems/$RNQN $R/subsystems/$RNQN
	echo "{\"driver_volume_type\":\"nvmeof\",\"target_nqn\":\"$RNQN\",\"vol_uuid\":\"$RU\",\"portals\":[[\"$RADDR\",4420,\"RoCEv2\"]]}" >/tmp/rdma.json
	took rdma-setup "$t0"
	t0=$(now)
	$B connect --connection-info /tmp/rdma.json -f json >/brick/rdma.json 2>/brick/rdma.err
	echo "RC rdma-connect $?"
	took rdma-connect "$t0"
	RDEV=$(jget /brick/rdma.json path)
	rtr=()
	for c in /sys/class/nvme/nvme*; do [[ -e $c ]] && read -r tr <"$c/transport" && rtr+=("$tr"); done
	echo "RDMA dev=$RDEV ${rtr[*]} "
	dd if=/brick/pattern of="$RDEV" bs=1M count=1 oflag=direct conv=notrunc status=none && dd if="$RDEV" of=/tmp/rback bs=1M count=1 iflag=direct status=none && cmp -s /tmp/rback /brick/pattern
	echo "RC rdma-io $?"
	t0=$(now)
	$B disconnect --connection-info /tmp/rdma.json >>/brick/rdma.err 2>&1
	echo "RC rdma-disconnect $?"
	took rdma-disconnect "$t0"
	echo "RDMAAFTER ctrls=$(nctrl)"
	sed 's/^/RDMAERR /' /brick/rdma.err | head -5
	rm -f $R/subsystems/$RNQN /brick/exports/$RU.export
fi

# Benchmark, same boot, same target: brick connect + disconnect (two whole
# processes, and in one process through bench/nvmeof/inproc) against
# os-brick's NVMeOFConnector in one process (calls timed only) and as two
# whole processes (one round).
if [[ $FORMAT == new && ${BENCH_ROUNDS:-0} -gt 0 ]]; then
	BNQN=nqn.2014-08.org.brick:e2e-bench BU=5a5a5a5a-0000-4000-8000-0000000000b0
	printf 'NQN=%s\nNSID=1\nUUID=%s\nSIZE=%d\n' "$BNQN" $BU $((64 << 20)) >/brick/exports/$BU.export
	waitfor PRESENT /brick/exports/$BU.ready
	py() { /usr/bin/python3 -c "$@"; }
	echo "{\"driver_volume_type\":\"nvmeof\",\"target_nqn\":\"$BNQN\",\"vol_uuid\":\"$BU\",\"portals\":[[\"127.0.0.1\",4420,\"tcp\"],[\"127.0.0.2\",4420,\"tcp\"]]}" >/tmp/bench.json
	mkdir -p /tmp/osbrick-locks
	sub() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", b-a}'; }
	OSB="/usr/bin/python3 /brick/osbrick.py"
	for i in 1 2 3; do
		t0=$(now); $B version >/dev/null; echo "STARTUP $(sub $t0 $(now))"
	done
	# One untimed round with --debug: the per-step timestamps.
	$B --debug connect --connection-info /tmp/bench.json -f json >/dev/null 2>/brick/debug-connect.err
	$B --debug disconnect --connection-info /tmp/bench.json 2>/brick/debug-disconnect.err
	cat /brick/debug-connect.err /brick/debug-disconnect.err | sed 's/^/DEBUG /'
	for ((i = 1; i <= BENCH_ROUNDS; i++)); do
		t0=$(now); $B connect --connection-info /tmp/bench.json -f json >/tmp/bdev.json 2>>/brick/bench-brick.err; t1=$(now)
		$B disconnect --connection-info /tmp/bench.json 2>>/brick/bench-brick.err; t2=$(now)
		echo "BENCH brick-$i $(sub $t0 $t1) $(sub $t1 $t2) $(sub $t0 $t2) left=$(nctrl)"
		echo "BENCH brick-inproc-$i $(/brick/inproc /tmp/bench.json 2>>/brick/bench-brick.err | cut -d' ' -f1-3 || echo failed) left=$(nctrl)"
		$OSB timed /tmp/bench.json /tmp/osbrick-locks 2>>/brick/bench-osbrick.err | tail -1 >/tmp/osb.json
		echo "BENCH os-brick-$i $(py 'import json; d=json.load(open("/tmp/osb.json")); print("%.3f %.3f %.3f" % (d["connect"], d["disconnect"], d["connect"] + d["disconnect"]))' 2>/dev/null || echo failed) left=$(nctrl)"
	done
	# Processes started per connect + disconnect (strace -f, execve that
	# succeeded), without the shell and the two tool processes themselves.
	execs() { # LABEL TOOL COMMAND: counts and names the programs COMMAND started
		strace -f -qq -e trace=execve -o /tmp/st-$1 sh -c "$3" >/dev/null 2>&1
		local progs; progs=$(grep -E 'execve\(.*= 0$' /tmp/st-$1 | sed -E 's/.*execve\("([^"]*)".*/\1/' |
			awk -v tool="$2" '!sh && $0 ~ /\/sh$/ { sh = 1; next } $0 == tool && n < 2 { n++; next } { print }')
		echo "EXECVE $1 $(printf '%s' "$progs" | grep -c . || true) $(printf '%s\n' "$progs" | xargs -rn1 basename | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}')"
	}
	execs brick "$B" "$B connect --connection-info /tmp/bench.json -f json; $B disconnect --connection-info /tmp/bench.json"
	execs os-brick /usr/bin/python3 "$OSB connect /tmp/bench.json /tmp/osbrick-locks >/tmp/osdev-st.json; $OSB disconnect /tmp/bench.json /tmp/osbrick-locks /tmp/osdev-st.json"
	echo "EXECVELEFT ctrls=$(nctrl)"
	t0=$(now); $OSB connect /tmp/bench.json /tmp/osbrick-locks 2>>/brick/bench-osbrick.err | tail -1 >/tmp/osdev.json; t1=$(now)
	$OSB disconnect /tmp/bench.json /tmp/osbrick-locks /tmp/osdev.json 2>>/brick/bench-osbrick.err; t2=$(now)
	echo "BENCH os-brick-cli-1 $(sub $t0 $t1) $(sub $t1 $t2) $(sub $t0 $t2) left=$(nctrl)"
	rm /brick/exports/$BU.export
fi
echo DONE
`

// nvmeGuestFiles are the files both NVMe scripts get: brick, a random 1
// MiB pattern and os-brick's benchmark driver.
func nvmeGuestFiles(t *testing.T) map[string]string {
	t.Helper()
	pattern := make([]byte, 1<<20)
	_, err := rand.Read(pattern)
	require.NoError(t, err)
	patternFile := filepath.Join(t.TempDir(), "pattern")
	require.NoError(t, os.WriteFile(patternFile, pattern, 0o644))
	osbrick, err := filepath.Abs("../../bench/nvmeof/osbrick.py")
	require.NoError(t, err)
	return map[string]string{buildBrick(t): "brick", patternFile: "pattern", osbrick: "osbrick.py"}
}

// nvmeVolume creates a 1 GiB volume whose connection info comes in format
// (its metadata brick_tb_nvme_format, read by the test bed's driver).
func nvmeVolume(t *testing.T, c *testbed.Cinder, format string) *testbed.Volume {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var v struct{ Volume testbed.Volume }
	require.NoError(t, c.Request(ctx, "POST", "/volumes", "3.0", map[string]any{"volume": map[string]any{
		"size": 1, "name": "brick-e2e-nvmeof-" + format, "metadata": map[string]string{"brick_tb_nvme_format": format}}}, &v))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		_ = c.Request(ctx, "POST", "/volumes/"+v.Volume.ID+"/action", "", map[string]any{"os-reset_status": map[string]any{"status": "available", "attach_status": "detached"}}, nil)
		if err := c.DeleteVolume(ctx, v.Volume.ID); err != nil {
			t.Logf("cleanup: delete volume %s: %v", v.Volume.ID, err)
		}
	})
	vol, err := c.WaitVolume(ctx, v.Volume.ID, "available")
	require.NoError(t, err)
	return vol
}

// nvmeGuest is the one guest both formats' scripts run in, booting in the
// background from the test's start so the boot overlaps Cinder's restart.
type nvmeGuest struct {
	done  chan struct{} // closed once s or err is set
	s     *guest.Session
	err   error
	ready time.Duration
}

// bootNVMeGuest starts the boot (1 NIC, the share Cinder's export records
// go through, emptied first: a reused share must hold no earlier run's
// scripts or results); the test's cleanup powers the guest off.
func bootNVMeGuest(t *testing.T) *nvmeGuest {
	t.Helper()
	require.NoError(t, os.RemoveAll(testbed.NVMeShareDir))
	require.NoError(t, os.MkdirAll(testbed.NVMeShareDir, 0o755))
	g := &nvmeGuest{done: make(chan struct{})}
	start := time.Now()
	go func() {
		defer close(g.done)
		ctx, cancel := context.WithTimeout(context.Background(), bootTimeout)
		defer cancel()
		g.s, g.err = guest.Start(ctx, guest.Options{NICs: 1, ShareDir: testbed.NVMeShareDir})
		g.ready = time.Since(start)
	}()
	t.Cleanup(func() {
		<-g.done
		if g.s != nil {
			if err := g.s.Close(); err != nil {
				t.Errorf("nvme guest: %v", err)
			}
		}
	})
	return g
}

// session waits for the boot.
func (g *nvmeGuest) session(t *testing.T) *guest.Session {
	t.Helper()
	wait := time.Now()
	<-g.done
	require.NoError(t, g.err, "boot the NVMe guest")
	t.Logf("nvme guest: ready %s after the test's start (boot %s), waited %s for it", g.ready.Round(time.Millisecond),
		g.s.Boot().Round(time.Millisecond), time.Since(wait).Round(time.Millisecond))
	return g.s
}

func nvmeGuestRun(t *testing.T, ng *nvmeGuest, c *testbed.Cinder, format string) {
	limit := nvmeGuestLimit()
	ctx, cancel := context.WithTimeout(context.Background(), limit+5*time.Minute)
	defer cancel()
	exports := filepath.Join(testbed.NVMeShareDir, "exports")
	require.NoError(t, os.RemoveAll(exports))
	require.NoError(t, os.MkdirAll(exports, 0o755))
	vol := nvmeVolume(t, c, format)

	script := "UUIDS=([1]=5a5a5a5a-0000-4000-8000-000000000001 [2]=5a5a5a5a-0000-4000-8000-000000000002)\n" + extendLocalShell + nvmeGuestScript
	files := nvmeGuestFiles(t)
	if benchRounds != "0" && format == testbed.NVMeNew {
		files[buildInproc(t)] = "inproc"
	}
	s := ng.session(t)
	res, err := s.Exec(ctx, guest.Exec{
		Script: script, Timeout: limit, Files: files,
		Env: map[string]string{"PROJECT": c.ProjectID, "VOL": vol.ID, "FORMAT": format, "BENCH_ROUNDS": benchRounds,
			"DEAD_PORTAL_TIMEOUT": deadPortalTimeout.String()},
	})
	if res != nil {
		t.Logf("guest %s: exec wall %s, script %s, exit %d, leftovers %q", res.KernelVersion, res.Duration.Round(time.Millisecond),
			res.ScriptTime.Round(time.Millisecond), res.ExitCode, res.Leftovers)
		t.Logf("guest output:\n%s", res.Output)
		if log, err := os.ReadFile(filepath.Join(testbed.NVMeShareDir, "nvmet.log")); err == nil {
			t.Logf("nvmet fixture:\n%s", log)
		}
	}
	requireSuccess(t, res, err)
	g := parseLines(string(res.Output))
	for _, rc := range []string{"attach-1", "write", "detach-1", "attach-2", "readback", "detach-2"} {
		require.Equal(t, "0", g["RC "+rc], rc)
	}
	want := map[string]string{testbed.NVMeOld: "nqn ns_id target_port target_portal transport_type",
		testbed.NVMeNew: "ns_id portals target_nqn vol_uuid"}[format]
	require.Contains(t, string(res.Output), "CONNINFO "+want+"\n", "Cinder answered in the %s format", format)
	dev1 := firstWord(t, g["DEVICE 1"], res.Output)
	require.Equal(t, vol.ID+" nvmeof", g["LIST"], "brick list knows the NVMe attachment")
	require.Contains(t, g["PATHS"], dev1, "get-volume-paths finds the namespace")
	for _, l := range []string{"1", "2"} {
		require.True(t, strings.HasPrefix(g["LEFT "+l], "ctrls=0 status=available exports=0"), "after detach %s: %s", l, g["LEFT "+l])
		t.Logf("%s: attach %s s, detach %s s", l, g["TIME attach-"+l], g["TIME detach-"+l])
	}
	if format == testbed.NVMeOld {
		require.True(t, strings.Contains(g["DEVICE 1"], "ctrls=1 "), g["DEVICE 1"])
		return
	}
	require.True(t, strings.Contains(g["DEVICE 2"], "ctrls=2 "), "two portals, two controllers: %s", g["DEVICE 2"])
	dev := firstWord(t, g["DEVICE 2"], res.Output)
	require.Regexp(t, `^/dev/nvme[0-9]+n[0-9]+$`, dev, "the multipath head")
	reader := strings.Fields(g["READER"])
	require.Len(t, reader, 2)
	require.Equal(t, "0", reader[1], "read errors during the ANA flips")
	require.NotEqual(t, "0", reader[0], "the reader read")
	require.Contains(t, g["ANA port1"], "inaccessible")
	require.Contains(t, g["ANA port2"], "inaccessible")

	require.Equal(t, "0", g["RC dead-connect"])
	took, err := strconv.ParseFloat(g["TIME dead-connect"], 64)
	require.NoError(t, err)
	live, err := strconv.ParseFloat(g["TIME shared-connect"], 64)
	require.NoError(t, err)
	// Under TCG starting brick alone takes a good part of a second: the
	// dead portal's cost is measured against a connect of live portals.
	t.Logf("connect with a dead portal (--nvme-portal-timeout %s) %.2f s, with live portals only %.2f s", deadPortalTimeout, took, live)
	require.LessOrEqual(t, took-live, (deadPortalTimeout + time.Second).Seconds(), "a dead portal costs at most its timeout + 1 s")
	require.Equal(t, "1", g["DEADCTRLS"])
	for _, rc := range []string{"shared-connect", "shared-disconnect1", "shared-read2", "shared-disconnect2"} {
		require.Equal(t, "0", g["RC "+rc], rc)
	}
	require.Contains(t, g["SHAREDAFTER1"], "ctrls=2 ", "the other namespace keeps both controllers")
	require.Equal(t, "ctrls=0", g["SHAREDAFTER2"], "the last namespace's disconnect removes them")

	require.Equal(t, "137", g["RC crash-complete"], "SIGKILL at the step after the connect")
	require.Equal(t, "137", g["RC crash-kill"], "SIGKILL while the kernel connects")
	for _, l := range []string{"complete", "kill"} {
		t.Logf("kill -9 (%s): after the kill %s; after brick cleanup %s", l, g["CRASHED "+l], g["CLEANED "+l])
		require.Equal(t, "0", g["RC cleanup-"+l], l)
		require.Equal(t, "ctrls=0 status=available", g["CLEANED "+l], "brick cleanup after kill -9 (%s) leaves no controller", l)
	}
	logBench(t, string(res.Output))
	nvmeExtendChecks(t, g, string(res.Output))

	t.Logf("RDMA (soft-RoCE): setup %s s, connect %s s, disconnect %s s; %s", g["TIME rdma-setup"], g["TIME rdma-connect"], g["TIME rdma-disconnect"], g["RDMA"])
	for _, rc := range []string{"rdma-port", "rdma-connect", "rdma-io", "rdma-disconnect"} {
		require.Equal(t, "0", g["RC "+rc], rc)
	}
	require.Contains(t, g["RDMA"], " rdma", "the controller's transport is rdma")
	require.Equal(t, "ctrls=0", g["RDMAAFTER"])
}

// nvmeExtendChecks reads the online extend's lines: brick extend
// --local-only grew the head and both paths from 1 to 2 GiB under a
// writer (extend_check failed otherwise), and disconnect left nothing.
func nvmeExtendChecks(t *testing.T, g map[string]string, out string) {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "timing extend nvme") {
			t.Log(strings.TrimPrefix(l, "EXTOUT "))
		}
	}
	t.Logf("extend check: %s s in all (connect, mkfs, extend, checks, disconnect); sizes %s", g["TIME ext-all"], g["EXTSIZES"])
	require.Equal(t, "0", g["RC ext-connect"], "ext-connect")
	require.Equal(t, "0", g["RC ext-extend"], "extend_check failed: see the EXTOUT lines")
	sizes := strings.Fields(g["EXTSIZES"])
	require.Len(t, sizes, 3, "the head and two paths: %v", sizes)
	for _, s := range sizes {
		require.True(t, strings.HasSuffix(s, "="+strconv.Itoa(2<<30)), "every path and the head show 2 GiB: %s", s)
	}
	require.Equal(t, "0", g["RC ext-disconnect"])
	require.Equal(t, "ctrls=0", g["EXTAFTER"])
}

// buildInproc builds bench/nvmeof/inproc, which times the connector's
// Connect and Disconnect inside one process.
func buildInproc(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "inproc")
	out, err := exec.Command("go", "build", "-o", bin, "../../bench/nvmeof/inproc").CombinedOutput()
	require.NoError(t, err, "build inproc: %s", out)
	return bin
}

// benchRounds is how many brick / os-brick rounds the new-format boot
// runs: none in the suite (they cost about 2.5 minutes of its budget);
// with BRICK_BENCH=1, as bench/run.sh sets, BRICK_BENCH_ROUNDS or 3.
var benchRounds = func() string {
	if os.Getenv("BRICK_BENCH") != "1" {
		return "0"
	}
	if v := os.Getenv("BRICK_BENCH_ROUNDS"); v != "" {
		return v
	}
	return "3"
}()

// nvmeGuestLimit bounds a boot's script: 15 minutes, plus 8 per benchmark
// round (with the host's load at 25-30 one round took 5-10 minutes under
// TCG, and the 15 minutes ran out in the second).
func nvmeGuestLimit() time.Duration {
	n, _ := strconv.Atoi(benchRounds)
	return time.Duration(15+8*max(n, 0)) * time.Minute
}

// benchTotals collects the totals (fifth word) of the "BENCH <tool>-<round>
// ..." lines of out by tool; other and short lines are skipped.
func benchTotals(out string) map[string][]float64 {
	totals := map[string][]float64{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || f[0] != "BENCH" {
			continue
		}
		tool := f[1]
		if i := strings.LastIndex(tool, "-"); i >= 0 {
			tool = tool[:i]
		}
		if v, err := strconv.ParseFloat(f[4], 64); err == nil {
			totals[tool] = append(totals[tool], v)
		}
	}
	return totals
}

// logBench logs the median connect+disconnect of brick and os-brick and
// their ratio (issue 21's goal: brick <= 0.5x os-brick in-process).
func logBench(t *testing.T, out string) {
	totals := benchTotals(out)
	if len(totals["brick"]) == 0 {
		return // no benchmark rounds in this run
	}
	b, bi, o := nvmeMedian(totals["brick"]), nvmeMedian(totals["brick-inproc"]), nvmeMedian(totals["os-brick"])
	t.Logf("NVMe/TCP connect+disconnect, 2 portals, median of %d: brick whole processes %.3f s (ratio %.2f), brick in-process %.3f s (ratio %.2f), os-brick in-process %.3f s, os-brick whole processes %.3f s",
		len(totals["brick"]), b, b/o, bi, bi/o, o, nvmeMedian(totals["os-brick-cli"]))
}

func nvmeMedian(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// firstWord is s's first word; an empty s fails the test showing the
// guest's output instead of panicking the test binary.
func firstWord(t *testing.T, s string, output []byte) string {
	t.Helper()
	f := strings.Fields(s)
	if len(f) == 0 {
		t.Fatalf("guest output lacks an expected line; output:\n%s", output)
	}
	return f[0]
}

// parseLines maps "KEY LABEL rest" and "KEY rest" lines of guest output to
// their rest, by "KEY LABEL" and by "KEY" (the last line wins).
func parseLines(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		m[f[0]] = strings.Join(f[1:], " ")
		if len(f) >= 3 {
			m[f[0]+" "+f[1]] = strings.Join(f[2:], " ")
		}
	}
	return m
}
