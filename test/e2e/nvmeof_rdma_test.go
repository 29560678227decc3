//go:build e2e

package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed/guest"
)

// nvmeRDMAScript is TestNVMeoF's third run in the same boot (no Cinder:
// brick connect/disconnect with the connection info the drivers send),
// against the guest's kernel nvmet on soft-RoCE (rxe.sh's rxe_eth0,
// nvmet-rdma) and a TCP port on 127.0.0.3:
//
//   - NVMe/RDMA, old format (transport_type rdma): connect, write,
//     disconnect (no controller left), re-connect, read back, disconnect;
//   - NVMe/RDMA, new format, mixed portals (RoCEv2 + tcp): the same, then a
//     reader on the head while the RDMA portal goes down (the subsystem
//     leaves the nvmet port): 0 read errors;
//   - a shared subsystem (two namespaces): the first disconnect keeps the
//     controllers, the last one removes them although the other namespace
//     is still exported; a namespace held by a dm device keeps them;
//   - a replicated volume (KIOXIA KumoScale's info, two legs, two nvmet
//     subsystems): md RAID1 at /dev/md/<alias>, a writer while one leg's
//     target vanishes (0 write errors, the array degraded), disconnect
//     leaves no md device and no controller, re-connect with the leg back:
//     both legs in sync (md's own check: mismatch_cnt 0), data read back;
//   - a one-replica volume: the leg's plain namespace;
//   - with RDMA_BENCH rounds: NVMe/RDMA and NVMe/TCP connect+disconnect of
//     brick (processes and in-process) and os-brick (in-process).
const nvmeRDMAScript = guestShellHelpers + `
set -uo pipefail
cp /brick/brick /tmp/brick
B=/tmp/brick
export BRICK_CONFIG=/dev/null
CFG=/sys/kernel/config/nvmet
nctrl() { nglob /sys/class/nvme/nvme*; }
nmd() { nglob /sys/block/md*; }
t0=$(now)
modprobe -a nvmet nvmet-tcp nvme-tcp nvme-rdma nvmet-rdma raid1 dm_mod 2>&1 | sed 's/^/SETUPERR /'
RXE_ADDRS=""
rxe=$("$BRICK_FIXTURES/rxe.sh" eth0 2>/tmp/rxe.err) && eval "$rxe" || sed 's/^/SETUPERR /' /tmp/rxe.err
A=$RXE_ADDRS
TA=127.0.0.3
port() { # ID TRTYPE ADDR
	local d=$CFG/ports/$1
	[[ -d $d ]] && return 0
	mkdir "$d" && echo "$2" >"$d/addr_trtype" && echo ipv4 >"$d/addr_adrfam" && echo "$3" >"$d/addr_traddr" && echo 4430 >"$d/addr_trsvcid"
}
port 21 rdma "$A"
port 22 tcp $TA
echo "RC setup-ports $?"
mkdir -p /tmp/nvme-e2e
subsys() { # NQN NSID UUID PORT...
	local s=$CFG/subsystems/$1 ns img p
	mkdir -p "$s" && echo 1 >"$s/attr_allow_any_host"
	ns=$s/namespaces/$2
	mkdir -p "$ns"
	img=/tmp/nvme-e2e/$3.img
	[[ -e $img ]] || truncate -s 64M "$img"
	if [[ $(<"$ns/enable") != 1 ]]; then
		echo -n "$img" >"$ns/device_path" && echo "$3" >"$ns/device_uuid" && echo "$3" >"$ns/device_nguid" &&
			echo 1 >"$ns/buffered_io" && echo 1 >"$ns/enable" || echo "SETUPERR namespace $2 of $1"
	fi
	for p in "${@:4}"; do link "$1" "$p"; done
}
link() { [[ -e $CFG/ports/$2/subsystems/$1 ]] || ln -s "$CFG/subsystems/$1" "$CFG/ports/$2/subsystems/$1"; }
unlink() { rm -f "$CFG/ports/$2/subsystems/$1"; }
byuuid() { # UUID: the head whose uuid it is
	local b u
	for b in /sys/block/nvme*n*; do
		[[ ${b##*/} =~ ^nvme[0-9]+n[0-9]+$ && -e $b/uuid ]] && read -r u <"$b/uuid" && [[ $u == "$1" ]] && echo "/dev/${b##*/}" && return
	done
}
transports() {
	local c tr out=()
	for c in /sys/class/nvme/nvme*; do [[ -e $c/transport ]] && read -r tr <"$c/transport" && out+=("$tr"); done
	echo "${out[*]}"
}
took setup "$t0"

# cycle LABEL JSON: connect, write, disconnect, connect, read back, disconnect.
cycle() {
	local t
	t=$(now); $B connect --connection-info "$2" -f json >/tmp/$1-dev.json 2>>/brick/$1.err
	echo "RC $1-connect $?"; took $1-connect "$t"
	DEV=$(jget /tmp/$1-dev.json path)
	echo "DEV $1 $DEV ctrls=$(nctrl) transports=$(transports)"
	dd if=/brick/pattern of="$DEV" bs=1M seek=4 count=1 oflag=direct conv=notrunc status=none
	echo "RC $1-write $?"
	t=$(now); $B disconnect --connection-info "$2" 2>>/brick/$1.err
	echo "RC $1-disconnect $?"; took $1-disconnect "$t"
	echo "LEFT $1 ctrls=$(nctrl) md=$(nmd)"
	$B connect --connection-info "$2" -f json >/tmp/$1-dev.json 2>>/brick/$1.err
	echo "RC $1-reconnect $?"
	DEV=$(jget /tmp/$1-dev.json path)
	dd if="$DEV" of=/tmp/$1-back bs=1M skip=4 count=1 iflag=direct status=none && cmp -s /tmp/$1-back /brick/pattern
	echo "RC $1-readback $?"
}
# writer/reader DEV OP FILE: a loop of 1 MiB O_DIRECT reads or writes,
# counting good and failed ones in FILE until /tmp/stop-io exists (or 120
# s pass); a failed one pauses, so a dead device never spins the CPU.
io_loop() {
	local ok=0 err=0 i=0 end=$((SECONDS + 120))
	while [[ ! -e /tmp/stop-io ]] && ((SECONDS < end)); do
		if [[ $2 == read ]]; then
			dd if="$1" of=/dev/null bs=1M count=8 iflag=direct status=none
		else
			dd if=/brick/pattern of="$1" bs=1M seek=$((8 + i % 16)) count=1 oflag=direct conv=notrunc status=none
		fi && ok=$((ok + 1)) || { err=$((err + 1)); pause 0.5; }
		i=$((i + 1))
		echo "$ok $err" >"$3"
	done
}
# progress FILE N: wait (up to 40 s) until FILE counts N more good ones.
progress() {
	local ok="" err want end=$((SECONDS + 40))
	until [[ -n $ok ]] || ((SECONDS >= end)); do read -r ok err <"$1"; done
	want=$((${ok:-0} + $2))
	while ((SECONDS < end)); do
		read -r ok err <"$1"
		((ok >= want)) && return 0
		pause 0.1
	done
	return 1
}
# settled MD: wait (up to 30 s) until md array MD is idle (and, with
# "clean", not degraded).
settled() {
	local deg st end=$((SECONDS + 30))
	while ((SECONDS < end)); do
		read -r deg </sys/block/$1/md/degraded; read -r st </sys/block/$1/md/sync_action
		[[ $st == idle && ($2 != clean || $deg == 0) ]] && return 0
		pause 0.1
	done
	return 1
}

# NVMe/RDMA, old format.
ONQN=nqn.2014-08.org.brick:e2e-rdma-old OU=5a5a5a5a-0000-4000-8000-0000000000d1
subsys $ONQN 1 $OU 21
echo "{\"driver_volume_type\":\"nvmeof\",\"data\":{\"nqn\":\"$ONQN\",\"transport_type\":\"rdma\",\"target_portal\":\"$A\",\"target_port\":\"4430\",\"ns_id\":\"1\"}}" >/tmp/rold.json
cycle rold /tmp/rold.json
$B disconnect --connection-info /tmp/rold.json 2>>/brick/rold.err
echo "RC rold-final $?"
echo "LEFT rold-final ctrls=$(nctrl)"

# NVMe/RDMA, new format, mixed RDMA + TCP portals; then the RDMA portal
# goes down under a reader.
NNQN=nqn.2014-08.org.brick:e2e-rdma-new NU=5a5a5a5a-0000-4000-8000-0000000000d2
subsys $NNQN 1 $NU 21 22
echo "{\"driver_volume_type\":\"nvmeof\",\"target_nqn\":\"$NNQN\",\"vol_uuid\":\"$NU\",\"portals\":[[\"$A\",4430,\"RoCEv2\"],[\"$TA\",4430,\"tcp\"]]}" >/tmp/rnew.json
$B connect --dry-run --connection-info /tmp/rnew.json -f value 2>&1 | sed 's/^/PLAN /'
cycle rnew /tmp/rnew.json
echo "MIXED ctrls=$(nctrl) transports=$(transports)"
rm -f /tmp/stop-io; echo "0 0" >/tmp/reader
io_loop "$DEV" read /tmp/reader &
rpid=$!
progress /tmp/reader 2
unlink $NNQN 21
progress /tmp/reader 4
echo "RDMADOWN states=$(cat /sys/class/nvme/nvme*/state 2>/dev/null | tr '\n' ' ')"
touch /tmp/stop-io; wait $rpid
echo "READER $(</tmp/reader)"
link $NNQN 21
$B disconnect --connection-info /tmp/rnew.json 2>>/brick/rnew.err
echo "RC rnew-final $?"
echo "LEFT rnew-final ctrls=$(nctrl)"

# A shared subsystem: two namespaces of one subsystem.
SNQN=nqn.2014-08.org.brick:e2e-shared-last S1=5a5a5a5a-0000-4000-8000-0000000000e1 S2=5a5a5a5a-0000-4000-8000-0000000000e2
subsys $SNQN 1 $S1 22
subsys $SNQN 2 $S2 22
for n in 1 2; do
	u=S$n
	echo "{\"driver_volume_type\":\"nvmeof\",\"target_nqn\":\"$SNQN\",\"vol_uuid\":\"${!u}\",\"portals\":[[\"$TA\",4430,\"tcp\"]]}" >/tmp/s$n.json
done
$B connect --connection-info /tmp/s1.json -f json >/tmp/s1-dev.json 2>>/brick/shared.err; echo "RC shared-c1 $?"
$B connect --connection-info /tmp/s2.json -f json >/tmp/s2-dev.json 2>>/brick/shared.err; echo "RC shared-c2 $?"
$B disconnect --connection-info /tmp/s1.json 2>>/brick/shared.err; echo "RC shared-d1 $?"
D1=$(byuuid $S1)
echo "SHARED1 ctrls=$(nctrl) ns1=$([[ -e $D1 ]] && echo exported || echo gone)"
$B disconnect --connection-info /tmp/s2.json 2>>/brick/shared.err; echo "RC shared-d2 $?"
echo "SHARED2 ctrls=$(nctrl)"
# Held by something else: a dm device over namespace 1 keeps them.
$B connect --connection-info /tmp/s2.json -f json >/dev/null 2>>/brick/shared.err; echo "RC shared-c3 $?"
D1=$(byuuid $S1)
echo "0 $(blockdev --getsz "$D1") linear $D1 0" | dmsetup create brick-e2e-held
echo "RC shared-dm $?"
$B disconnect --connection-info /tmp/s2.json 2>>/brick/shared.err; echo "RC shared-d3 $?"
echo "SHARED3 ctrls=$(nctrl)"
dmsetup remove brick-e2e-held
$B disconnect --connection-info /tmp/s2.json 2>>/brick/shared.err; echo "RC shared-d4 $?"
echo "SHARED4 ctrls=$(nctrl)"

# A replicated volume, as KIOXIA KumoScale's driver sends it: two legs,
# each its own subsystem, mirrored by md.
L1=nqn.2014-08.org.brick:e2e-leg1 L2=nqn.2014-08.org.brick:e2e-leg2 L3=nqn.2014-08.org.brick:e2e-leg3
U1=5a5a5a5a-0000-4000-8000-0000000000f1 U2=5a5a5a5a-0000-4000-8000-0000000000f2 U3=5a5a5a5a-0000-4000-8000-0000000000f3
subsys $L1 1 $U1 22
subsys $L2 1 $U2 22
subsys $L3 1 $U3 22
replica() { echo "{\"vol_uuid\":\"$2\",\"target_nqn\":\"$1\",\"portals\":[[\"$TA\",\"4430\",\"TCP\"]]}"; }
echo "{\"driver_volume_type\":\"nvmeof\",\"data\":{\"vol_uuid\":\"7e57da7a-0000-4000-8000-000000000001\",\"alias\":\"volume-e2e-mirror\",\"writable\":true,\"volume_replicas\":[$(replica $L1 $U1),$(replica $L2 $U2)],\"replica_count\":2}}" >/tmp/mirror.json
mdinfo() { # LABEL
	local m lvl deg mem st
	m=$(readlink -f /dev/md/volume-e2e-mirror 2>/dev/null); m=${m##*/}
	[[ -n $m && -e /sys/block/$m/md/level ]] || { echo "MD $1 none"; return; }
	read -r lvl </sys/block/$m/md/level; read -r deg </sys/block/$m/md/degraded; read -r st </sys/block/$m/md/sync_action
	mem=$(nglob /sys/block/$m/slaves/*)
	echo "MD $1 $m level=$lvl members=$mem degraded=$deg sync=$st"
}
t=$(now); $B connect --connection-info /tmp/mirror.json -f json >/tmp/mirror-dev.json 2>>/brick/mirror.err
echo "RC mirror-connect $?"; took mirror-connect "$t"
MDEV=$(jget /tmp/mirror-dev.json path)
echo "MIRRORDEV $MDEV"
mdinfo attached
rm -f /tmp/stop-io; echo "0 0" >/tmp/writer
io_loop "$MDEV" write /tmp/writer &
wpid=$!
progress /tmp/writer 3
unlink $L2 22
t=$(now)
progress /tmp/writer 6
echo "RC mirror-writes-after $?"; took leg-gone-writes "$t"
touch /tmp/stop-io; wait $wpid
echo "WRITER $(</tmp/writer)"
mdinfo degraded
dd if=/brick/pattern of="$MDEV" bs=1M seek=4 count=1 oflag=direct conv=notrunc status=none
echo "RC mirror-write $?"
t=$(now); $B disconnect --connection-info /tmp/mirror.json 2>>/brick/mirror.err
echo "RC mirror-disconnect $?"; took mirror-disconnect "$t"
echo "LEFT mirror ctrls=$(nctrl) md=$(nmd) links=$(nglob /dev/md/*)"
link $L2 22
t=$(now); $B connect --connection-info /tmp/mirror.json -f json >/tmp/mirror-dev.json 2>>/brick/mirror.err
echo "RC mirror-reconnect $?"; took mirror-reconnect "$t"
mdinfo reattached
sed 's/^/MIRRORERR /' /brick/mirror.err | grep -v level=DEBUG | head -8
m=$(readlink -f /dev/md/volume-e2e-mirror); m=${m##*/}
if [[ -n $m && -e /sys/block/$m/md/sync_action ]]; then
	# The leg that was away rejoins: its resync, then md's own comparison
	# of the two legs.
	settled "$m" clean
	mdinfo resynced
	echo check >/sys/block/$m/md/sync_action
	pause 0.5
	settled "$m" any
	echo "MISMATCH $(</sys/block/$m/md/mismatch_cnt)"
fi
dd if=/dev/md/volume-e2e-mirror of=/tmp/mirror-back bs=1M skip=4 count=1 iflag=direct status=none && cmp -s /tmp/mirror-back /brick/pattern
echo "RC mirror-readback $?"
$B disconnect --connection-info /tmp/mirror.json 2>>/brick/mirror.err
echo "RC mirror-final $?"
echo "LEFT mirror-final ctrls=$(nctrl) md=$(nmd)"

# One replica: the leg's own namespace.
echo "{\"driver_volume_type\":\"nvmeof\",\"data\":{\"vol_uuid\":\"7e57da7a-0000-4000-8000-000000000002\",\"alias\":\"volume-e2e-single\",\"writable\":true,\"volume_replicas\":[$(replica $L3 $U3)],\"replica_count\":1}}" >/tmp/single.json
cycle single /tmp/single.json
$B disconnect --connection-info /tmp/single.json 2>>/brick/single.err
echo "RC single-final $?"
echo "LEFT single-final ctrls=$(nctrl) md=$(nmd)"

took rdma-md "$t0"

# Benchmark, same boot: NVMe/RDMA and NVMe/TCP, one portal each.
if ((${RDMA_BENCH:-0} > 0)); then
	sub() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", b-a}'; }
	mkdir -p /tmp/osbrick-locks
	BU=5a5a5a5a-0000-4000-8000-0000000000b1
	subsys nqn.2014-08.org.brick:e2e-bench-rdma 1 $BU 21
	subsys nqn.2014-08.org.brick:e2e-bench-tcp 1 $BU 22
	echo "{\"driver_volume_type\":\"nvmeof\",\"target_nqn\":\"nqn.2014-08.org.brick:e2e-bench-rdma\",\"vol_uuid\":\"$BU\",\"portals\":[[\"$A\",4430,\"RoCEv2\"]]}" >/tmp/bench-rdma.json
	echo "{\"driver_volume_type\":\"nvmeof\",\"target_nqn\":\"nqn.2014-08.org.brick:e2e-bench-tcp\",\"vol_uuid\":\"$BU\",\"portals\":[[\"$TA\",4430,\"tcp\"]]}" >/tmp/bench-tcp.json
	for ((i = 1; i <= RDMA_BENCH; i++)); do
		for tr in rdma tcp; do
			t0=$(now); $B connect --connection-info /tmp/bench-$tr.json -f json >/dev/null 2>>/brick/bench.err; t1=$(now)
			$B disconnect --connection-info /tmp/bench-$tr.json 2>>/brick/bench.err; t2=$(now)
			echo "BENCH $tr-brick-$i $(sub $t0 $t1) $(sub $t1 $t2) $(sub $t0 $t2) left=$(nctrl)"
			echo "BENCH $tr-brick-inproc-$i $(/brick/inproc /tmp/bench-$tr.json 2>>/brick/bench.err | cut -d' ' -f1-3 || echo failed) left=$(nctrl)"
			/usr/bin/python3 /brick/osbrick.py timed /tmp/bench-$tr.json /tmp/osbrick-locks 2>>/brick/bench.err | tail -1 >/tmp/osb.json
			echo "BENCH $tr-os-brick-$i $(/usr/bin/python3 -c 'import json; d=json.load(open("/tmp/osb.json")); print("%.3f %.3f %.3f" % (d["connect"], d["disconnect"], d["connect"] + d["disconnect"]))' 2>/dev/null || echo failed) left=$(nctrl)"
		done
	done
	sed 's/^/BENCHERR /' /brick/bench.err | grep -v level=DEBUG | head -5
fi
echo DONE
`

func nvmeRDMARun(t *testing.T, ng *nvmeGuest) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	files := nvmeGuestFiles(t)
	rounds := os.Getenv("BRICK_NVME_RDMA_BENCH")
	if rounds == "" {
		rounds = benchRounds
	}
	if rounds != "0" {
		files[buildInproc(t)] = "inproc"
	}
	s := ng.session(t)
	res, err := s.Exec(ctx, guest.Exec{Script: nvmeRDMAScript, Timeout: 15 * time.Minute, Files: files,
		Env: map[string]string{"RDMA_BENCH": rounds}})
	if res != nil {
		t.Logf("guest: exec wall %s, script %s, exit %d, leftovers %q", res.Duration.Round(time.Millisecond),
			res.ScriptTime.Round(time.Millisecond), res.ExitCode, res.Leftovers)
		t.Logf("guest output:\n%s", res.Output)
	}
	requireSuccess(t, res, err)
	g := parseLines(string(res.Output))
	for _, rc := range []string{"setup-ports", "rold-connect", "rold-write", "rold-disconnect", "rold-reconnect", "rold-readback", "rold-final",
		"rnew-connect", "rnew-write", "rnew-disconnect", "rnew-reconnect", "rnew-readback", "rnew-final",
		"shared-c1", "shared-c2", "shared-d1", "shared-d2", "shared-c3", "shared-dm", "shared-d3", "shared-d4",
		"mirror-connect", "mirror-writes-after", "mirror-write", "mirror-disconnect", "mirror-reconnect", "mirror-readback", "mirror-final",
		"single-connect", "single-write", "single-disconnect", "single-reconnect", "single-readback", "single-final"} {
		require.Equal(t, "0", g["RC "+rc], rc)
	}
	t.Logf("NVMe/RDMA: old format connect %s s, disconnect %s s; new format (RDMA+TCP) connect %s s, disconnect %s s",
		g["TIME rold-connect"], g["TIME rold-disconnect"], g["TIME rnew-connect"], g["TIME rnew-disconnect"])
	require.Contains(t, g["DEV rold"], "transports=rdma", "the old format's controller is RDMA")
	require.Contains(t, g["MIXED"], "ctrls=2 ", "an RDMA and a TCP controller")
	require.Contains(t, g["MIXED"], "rdma", "mixed portals")
	require.Contains(t, g["MIXED"], "tcp", "mixed portals")
	for _, l := range []string{"rold", "rnew", "single"} {
		require.True(t, strings.HasPrefix(g["LEFT "+l], "ctrls=0"), "after %s's disconnect: %s", l, g["LEFT "+l])
		require.True(t, strings.HasPrefix(g["LEFT "+l+"-final"], "ctrls=0"), "at %s's end: %s", l, g["LEFT "+l+"-final"])
	}
	reader := strings.Fields(g["READER"])
	require.Len(t, reader, 2)
	require.Equal(t, "0", reader[1], "read errors with the RDMA portal down")
	t.Logf("RDMA portal down: %s; reader %s", g["RDMADOWN"], g["READER"])

	require.Equal(t, "ctrls=1 ns1=exported", g["SHARED1"], "the other volume keeps the controller")
	require.Equal(t, "ctrls=0", g["SHARED2"], "the last detach disconnects, namespace 1 still exported")
	require.Equal(t, "ctrls=1", g["SHARED3"], "a namespace held by dm keeps the controller")
	require.Equal(t, "ctrls=0", g["SHARED4"])

	require.Equal(t, "/dev/md/volume-e2e-mirror", g["MIRRORDEV"])
	require.Regexp(t, `^md[0-9]+ level=raid1 members=2 degraded=0`, g["MD attached"])
	writer := strings.Fields(g["WRITER"])
	require.Len(t, writer, 2)
	require.Equal(t, "0", writer[1], "write errors while a leg vanished")
	require.Contains(t, g["MD degraded"], "degraded=1", "the vanished leg failed out of the array")
	require.True(t, strings.HasPrefix(g["LEFT mirror"], "ctrls=0 md=0 "), "no controller and no md device after the disconnect: %s", g["LEFT mirror"])
	require.Contains(t, g["MD resynced"], "members=2 degraded=0 sync=idle", "both legs back in sync")
	require.Equal(t, "0", g["MISMATCH"], "md's check finds the legs identical")
	require.Equal(t, "ctrls=0 md=0", g["LEFT mirror-final"])
	t.Logf("mirror: connect %s s, writes with a leg gone %s s, disconnect %s s, re-connect %s s; %s; %s",
		g["TIME mirror-connect"], g["TIME leg-gone-writes"], g["TIME mirror-disconnect"], g["TIME mirror-reconnect"], g["MD reattached"], g["MD resynced"])
	require.Regexp(t, `^/dev/nvme[0-9]+n[0-9]+ `, g["DEV single"], "one replica is the plain namespace")
	t.Logf("rdma-md's script without benchmark rounds: %s s", g["TIME rdma-md"])
	logRDMABench(t, string(res.Output))
}

// logRDMABench logs the medians of the RDMA and TCP rounds (BENCH lines).
func logRDMABench(t *testing.T, out string) {
	totals := benchTotals(out)
	for _, tr := range []string{"rdma", "tcp"} {
		b, bi, o := nvmeMedian(totals[tr+"-brick"]), nvmeMedian(totals[tr+"-brick-inproc"]), nvmeMedian(totals[tr+"-os-brick"])
		if o == 0 {
			continue
		}
		t.Logf("NVMe/%s connect+disconnect, 1 portal, median of %d: brick processes %.3f s (%.2fx os-brick), brick in-process %.3f s (%.2fx), os-brick in-process %.3f s",
			tr, len(totals[tr+"-brick"]), b, b/o, bi, bi/o, o)
	}
}
