//go:build e2e

package e2e

// TestFC proves the Fibre Channel connector (connector/fc) on a real kernel,
// all checks in one qemu boot: software FCoE VN2VN over veth pairs with a
// LIO tcm_fc target (test/guest/fixtures/fcoe-target.sh), driven through
// the real `brick connect` / `brick disconnect` commands.
//
// The guest loads scsi_mod with scan=manual first, so the kernel does not
// scan new remote ports by itself: every disk that appears was brought in
// by brick's targeted "C T L" scan.
//
//  1. single path: brick connect with the target WWPN and LUN 0 finds the
//     disk through sysfs (udev makes no by-path link for FCoE), LUN 1 stays
//     unscanned; a pattern written with O_DIRECT lands in the backing file;
//  2. a second volume, LUN 1 behind the same target port, connects too and
//     gets its own pattern;
//  3. brick disconnect of LUN 0 removes its device; LUN 1 is untouched and
//     still reads its pattern; a second disconnect succeeds (idempotent);
//  4. LUN 1 mounted: disconnect is refused; unmounted: it goes;
//  5. multipath: a second FCoE link (another veth pair, a second target
//     port exporting the same backstores), brick connect --multipath with
//     both target WWPNs and an initiator_target_map: one dm map over two
//     paths on two HBAs, a pattern written through it lands in the backing
//     file, disconnect removes the map, both paths and the WWID;
//  6. online extend (issue 22): a third LUN behind both target ports, on
//     a loop device (LIO's fileio re-reads a block device's size on each
//     READ CAPACITY), connected with --multipath, grows from 1 to 2 GiB
//     under a writer on its mounted ext4; brick extend --local-only
//     rescans both paths, resizes the map and grows the ext4; every path
//     and the map show 2 GiB, the writer saw no error, data written before
//     is unchanged.

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brick-storage/brick/internal/testbed/guest"
)

func TestFC(t *testing.T) {
	lane(t, laneGuestOnly)
	dir := t.TempDir()
	brick := buildBrick(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 6))
	files := map[string]string{brick: "brick"}
	for _, name := range []string{"p0", "p1", "p2"} {
		b := make([]byte, 1<<20)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files[f] = name
	}
	res, err := runGuest(t, testContext(t), guest.Options{Script: fcScript, Files: files, Timeout: 12 * time.Minute})
	if res != nil {
		t.Logf("guest output:\n%s", res.Output)
	}
	requireSuccess(t, res, err)
	out := string(res.Output)
	for _, want := range []string{
		"check 1 ok",
		"check 2 ok",
		"check 3 ok",
		"check 4 ok",
		"check 5 ok",
		"check 6 ok",
		"all fc checks passed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, m := range regexp.MustCompile(`(?m)(brick \w+ [^\n]* took [0-9.]+s|^timing extend .*$|^check 6 ok.*$)`).FindAllString(out, -1) {
		t.Log(m)
	}
}

const fcScript = `
set -Eeuo pipefail` + extendLocalShell + guestShellHelpers + `
trap 'echo "FAILED (exit $?) at line $LINENO: $BASH_COMMAND"; echo "--- brick log"; cat brick.log 2>/dev/null; grep -H . /sys/class/fc_host/*/port_state /sys/class/fc_remote_ports/*/{port_name,scsi_target_id} 2>/dev/null; ls /sys/class/scsi_device/ 2>/dev/null' ERR
trap 'echo "--- killed; brick log:"; cat brick.log 2>/dev/null; exit 124' TERM
step() { echo "== $* ($(cut -d' ' -f1 /proc/uptime)s)"; }
# From the guest's tmpfs: each exec from the 9p share pages the binary in
# over 9p again.
cp /brick/brick /tmp/brick
B=/tmp/brick
# since T0: the seconds since $EPOCHREALTIME was T0, without a process.
since() {
	local d=$((${EPOCHREALTIME/./} - ${1/./}))
	printf '%d.%02d' $((d / 1000000)) $((d % 1000000 / 10000))
}
# What one brick run costs before it does any work (TCG page-in).
t0=$EPOCHREALTIME; "$B" version >/dev/null; "$B" version >/dev/null
echo "brick version x2 took $(since "$t0")s"
OFF=4 # MiB

# No automatic scans: whatever disk appears, brick's targeted scan made it.
modprobe scsi_mod scan=manual
[[ $(cat /sys/module/scsi_mod/parameters/scan) == manual ]]

step "udev + multipathd"
eval "$("$BRICK_FIXTURES/iscsi.sh")"
step "FCoE fabric with a LIO tcm_fc target, 2 LUNs"
eval "$("$BRICK_FIXTURES/fcoe-target.sh" --luns 2 --size 32M)"
echo "initiator $FC_INITIATOR_HOST $FC_INITIATOR_WWPN -> target $FC_TARGET_WWPN ($FC_RPORT)"
ini=${FC_INITIATOR_HOST#host}
[[ -z $(ls /sys/class/scsi_device/) ]] || { echo "disks before any scan: $(ls /sys/class/scsi_device/)"; exit 1; }

info() { # file lun [extra json]
	printf '{"driver_volume_type":"fibre_channel","data":{"target_discovered":false,"target_wwn":"%s","target_lun":%s%s}}\n' "$FC_TARGET_WWPN" "$2" "${3:-}" >"$1"
}
jpath() { sed -n 's/.*"path": *"\([^"]*\)".*/\1/p' "$1"; }
timed() { # args... : run brick, log its stderr, print the wall time, keep its rc
	local t0=$EPOCHREALTIME rc=0
	"$B" --debug "$@" 2>>brick.log || rc=$?
	echo "brick $1 $3 took $(since "$t0")s (rc $rc)" >&2
	return $rc
}
# "! cmd" never trips set -e, hence a function.
absent() { if "$@"; then echo "unexpected: $*"; exit 1; fi; }
on_backing() { # pattern backing-file offset-MiB
	cmp "$1" <(dd if="$2" bs=1M skip="$3" count=1 status=none)
}

step "check 1: connect LUN 0 by target WWPN"
info c0.json 0
timed connect --connection-info c0.json -f json >d0.json
cat d0.json
dev0=$(jpath d0.json)
[[ $dev0 =~ ^/dev/sd[a-z]+$ && -b $dev0 ]]
sd0=${dev0#/dev/}
[[ $(basename "$(readlink /sys/block/$sd0/device)") == "$ini:0:0:0" ]]
grep -q '"scsi_wwn": "36001405' d0.json
[[ ! -e /sys/class/scsi_device/$ini:0:0:1 ]] || { echo "LUN 1 was scanned too"; exit 1; }
grep -q 'scsi scan.*host'"$ini"'/scan.*value="0 0 0"' brick.log
absent grep -q 'value="- - ' brick.log
dd if=p0 of="$dev0" bs=1M seek=$OFF oflag=direct conv=fsync status=none
on_backing p0 "$FC_BACKING_0" $OFF
echo "check 1 ok: $dev0 at $ini:0:0:0 by targeted scan, LUN 1 not scanned, pattern in the backing file"

step "check 2: a second volume, LUN 1 on the same target port"
info c1.json 1
timed connect --connection-info c1.json -f json >d1.json
dev1=$(jpath d1.json)
[[ $dev1 =~ ^/dev/sd[a-z]+$ && $dev1 != "$dev0" ]]
[[ $(basename "$(readlink /sys/block/${dev1#/dev/}/device)") == "$ini:0:0:1" ]]
dd if=p1 of="$dev1" bs=1M seek=$OFF oflag=direct conv=fsync status=none
on_backing p1 "$FC_BACKING_1" $OFF
echo "check 2 ok: $dev1 at $ini:0:0:1"

step "check 3: disconnect LUN 0; LUN 1 untouched"
timed disconnect --connection-info c0.json --device-info d0.json
[[ ! -e $dev0 && ! -e /sys/block/$sd0 && ! -e /sys/class/scsi_device/$ini:0:0:0 ]]
[[ -b $dev1 && -e /sys/class/scsi_device/$ini:0:0:1 ]]
cmp p1 <(dd if="$dev1" bs=1M skip=$OFF count=1 iflag=direct status=none)
on_backing p0 "$FC_BACKING_0" $OFF
timed disconnect --connection-info c0.json
[[ -b $dev1 ]]
echo "check 3 ok: $dev0 gone, $dev1 still reads its pattern, repeated disconnects succeed"

step "check 4: a mounted volume is not taken away"
mkfs.ext4 -q "$dev1"
mkdir -p /mnt/fc1
mount "$dev1" /mnt/fc1
rc=0; timed disconnect --connection-info c1.json --device-info d1.json || rc=$?
(( rc != 0 )) || { echo "disconnect of a mounted volume succeeded"; exit 1; }
grep -q 'mounted on /mnt/fc1' brick.log
[[ -b $dev1 ]]
umount /mnt/fc1
timed disconnect --connection-info c1.json --device-info d1.json
[[ ! -e $dev1 && ! -e /sys/class/scsi_device/$ini:0:0:1 ]]
echo "check 4 ok: refused while mounted, detached after umount"

step "check 5: multipath over a second FCoE link"
ini2_mac=02:00:00:00:0b:03 tgt2_mac=02:00:00:00:0b:04
ini2_wwpn=0x2000${ini2_mac//:/} tgt2_wwpn=0x2000${tgt2_mac//:/}
colon() { local h=${1#0x}; echo "$h" | sed 's/../&:/g; s/:$//'; }
ip link add fc2 address $ini2_mac type veth peer name fc3 address $tgt2_mac
ip link set fc2 up; ip link set fc3 up
for i in fc2 fc3; do
	echo $i >/sys/bus/fcoe/ctlr_create
	echo vn2vn >"$(ls -d /sys/class/net/$i/ctlr_*)/mode"
done
cfg=/sys/kernel/config/target
t2=$cfg/fc/$(colon $tgt2_wwpn)/tpgt_1
mkdir -p "$t2"
for lun in 0 1; do # the same backstores behind a second target port
	mkdir -p "$t2/lun/lun_$lun"
	ln -s "$cfg/core/fileio_$lun/lun$lun" "$t2/lun/lun_$lun/brick"
	mkdir -p "$t2/acls/$(colon $ini2_wwpn)/lun_$lun"
	ln -s "$t2/lun/lun_$lun" "$t2/acls/$(colon $ini2_wwpn)/lun_$lun/brick"
done
for i in fc2 fc3; do echo 1 >"$(ls -d /sys/class/net/$i/ctlr_*)/enabled"; done
ini2=$(basename "$(ls -d /sys/class/net/fc2/ctlr_*/host*)")
echo "second link: $ini2 $ini2_wwpn -> $tgt2_wwpn"
# VN2VN claims its address for a few seconds before the ports log in.
for _ in {1..300}; do
	for r in /sys/class/fc_remote_ports/rport-${ini2#host}:*; do
		[[ -e $r/port_name ]] || continue
		read -r pn <"$r/port_name" || continue
		read -r ps <"$r/port_state" || continue
		[[ $pn == "$tgt2_wwpn" && $ps == Online ]] && break 2
	done
	pause 0.1
done
grep -H . /sys/class/fc_remote_ports/rport-${ini2#host}:*/{port_name,port_state,roles}
printf '{"driver_volume_type":"fibre_channel","data":{"target_wwns":["%s","%s"],"target_lun":0,"initiator_target_map":{"%s":["%s"],"%s":["%s"]}}}\n' \
	"$FC_TARGET_WWPN" "$tgt2_wwpn" "$FC_INITIATOR_WWPN" "$FC_TARGET_WWPN" "$ini2_wwpn" "$tgt2_wwpn" >cm.json
timed connect --connection-info cm.json --multipath --enforce-multipath -f json >dm.json
cat dm.json
devm=$(jpath dm.json)
[[ $devm =~ ^/dev/dm-[0-9]+$ ]]
dm=${devm#/dev/}
wwid=$(sed -n 's/.*"multipath_id": *"\([^"]*\)".*/\1/p' dm.json)
[[ $(cat /sys/block/$dm/dm/uuid) == "mpath-$wwid" ]]
slaves=$(ls /sys/block/$dm/slaves | sort | tr '\n' ' ')
echo "map $dm ($wwid) over: $slaves"
(( $(ls /sys/block/$dm/slaves | wc -l) == 2 ))
hosts=$(for s in /sys/block/$dm/slaves/*; do basename "$(readlink /sys/block/$(basename $s)/device)" | cut -d: -f1; done | sort -u | tr '\n' ' ')
[[ $hosts == "$ini ${ini2#host} " ]] || { echo "paths on hosts '$hosts'"; exit 1; }
multipath -ll "$wwid"
dd if=p2 of="$devm" bs=1M seek=$OFF oflag=direct conv=fsync status=none
on_backing p2 "$FC_BACKING_0" $OFF
grep -qx "/$wwid/" /etc/multipath/wwids
timed disconnect --connection-info cm.json --device-info dm.json --multipath
[[ ! -e /sys/block/$dm ]]
for s in $slaves; do [[ ! -e /sys/block/$s ]]; done
absent grep -qx "/$wwid/" /etc/multipath/wwids
[[ -z $(ls /sys/class/scsi_device/) ]]
echo "check 5 ok: $dm over 2 paths on 2 HBAs, pattern in the backing file, map/paths/WWID removed"

step "check 6: online extend 1 -> 2 GiB of a multipath volume under a writer"
t6=$EPOCHREALTIME
# LUN 2 on a loop device: LIO's fileio reads a block device's size at each
# READ CAPACITY (a regular file's size is fixed when it is configured).
modprobe loop
truncate -s 1G /tmp/fc/lun2.img
loop2=$(losetup -f --show /tmp/fc/lun2.img)
so=$cfg/core/fileio_2/lun2
mkdir -p "$so"
echo "fd_dev_name=$loop2" >"$so/control"
echo brick-fc-lun2 >"$so/wwn/vpd_unit_serial"
echo 1 >"$so/enable"
tp1=$cfg/fc/$(colon "$FC_TARGET_WWPN")/tpgt_1
for pair in "$tp1 $FC_INITIATOR_WWPN" "$t2 $ini2_wwpn"; do
	read -r tp iw <<<"$pair"
	mkdir -p "$tp/lun/lun_2" "$tp/acls/$(colon "$iw")/lun_2"
	ln -s "$so" "$tp/lun/lun_2/brick"
	ln -s "$tp/lun/lun_2" "$tp/acls/$(colon "$iw")/lun_2/brick"
done
printf '{"driver_volume_type":"fibre_channel","data":{"target_wwns":["%s","%s"],"target_lun":2,"initiator_target_map":{"%s":["%s"],"%s":["%s"]}}}\n' \
	"$FC_TARGET_WWPN" "$tgt2_wwpn" "$FC_INITIATOR_WWPN" "$FC_TARGET_WWPN" "$ini2_wwpn" "$tgt2_wwpn" >cx.json
timed connect --connection-info cx.json --multipath --enforce-multipath -f json >dx.json
devx=$(jpath dx.json)
[[ $devx =~ ^/dev/dm-[0-9]+$ ]]
dmx=${devx#/dev/}
(( $(ls /sys/block/$dmx/slaves | wc -l) == 2 ))
want=$((2 << 30))
fc_grow() { truncate -s 2G /tmp/fc/lun2.img; losetup -c "$loop2"; }
extend_check fc cx.json dx.json $want fc_grow
sizes="map $dmx $(blockdev --getsize64 "$devx")"
(( $(blockdev --getsize64 "$devx") == want ))
for s in $(ls /sys/block/$dmx/slaves); do
	n=$(blockdev --getsize64 /dev/$s)
	sizes+=", path $s $n"
	(( n == want ))
done
timed disconnect --connection-info cx.json --device-info dx.json --multipath
[[ ! -e /sys/block/$dmx ]]
[[ -z $(ls /sys/class/scsi_device/) ]]
echo "check 6 ok: $sizes; $(echo "$EPOCHREALTIME - $t6" | bc) s for the whole check"

step "brick log"
cat brick.log
echo "all fc checks passed"
`
