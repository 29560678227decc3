//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed/guest"
)

// powerLossBoot1Script attaches VOL_P with a fresh ext4, writes files with
// fsync (acknowledged: their checksums go to the share), keeps what a
// host's disk would keep (brick's records, /etc/iscsi, /etc/multipath) in
// the share as state.tar, then cuts the power (sysrq b: reset without
// sync; qemu runs with -no-reboot, so it exits) while unacknowledged
// writes run.
const powerLossBoot1Script = reliabilityPrelude + fastShell + `
echo 1 >/proc/sys/kernel/sysrq
$B local-attach "$VOL_P" "${COMMON[@]}" --mountpoint /mnt/p --mkfs ext4 >/brick/att.out 2>&1
echo "RC att $?"
state attached "$VOL_P"
for i in 1 2 3 4 5 6 7 8; do
	dd if=/dev/urandom of=/mnt/p/ack-$i bs=256k count=1 conv=fsync status=none || echo "ACKFAIL $i"
done
# The directory too, so the names are as durable as the data.
sync /mnt/p
echo "RC acksync $?"
(cd /mnt/p && sha256sum ack-*) >/brick/acked.sha
keep=(var/lib/brick etc/iscsi)
[[ -d /etc/multipath ]] && keep+=(etc/multipath)
tar -C / -cf /brick/state.tar "${keep[@]}"
echo "RC tar $?"
(
	i=0
	while :; do
		dd if=/dev/urandom of=/mnt/p/busy-$i bs=1M count=2 status=none
		i=$((i + 1))
	done
) &
# Once the second file is being written, the first went into the page
# cache unacknowledged: cut the power then.
for _ in {1..100}; do [[ -e /mnt/p/busy-1 ]] && break; pause 0.05; done
echo "POWER off"
echo b >/proc/sysrq-trigger
pause 30
echo "ALIVE after sysrq"
`

// powerLossBoot2Script is the next boot: the first boot's files back (as
// the disk kept them), brick cleanup, local-detach of the attachment the
// power loss broke, a new local-attach, fsck (repair, then a read-only
// check), the acknowledged files' checksums, local-detach.
const powerLossBoot2Script = `
tar -C / -xf /brick/state.tar
echo "RC untar $?"
read -r line </etc/iscsi/initiatorname.iscsi
echo "${line#InitiatorName=}" >/run/brick-initiator
` + reliabilityPrelude + fastShell + `
hoststate boot
t0=$(now)
$B cleanup "$VOL_P" "${COMMON[@]}" -f value >/brick/cleanup.out 2>&1
echo "RC cleanup $?"
took cleanup "$t0"
lines "CLEANUP p" /brick/cleanup.out 5
state cleaned "$VOL_P"
t0=$(now)
$B local-detach "$VOL_P" "${COMMON[@]}" >/brick/det1.out 2>&1
echo "RC det1 $?"
took det1 "$t0"
lines "ERR det1" /brick/det1.out 3
state det1 "$VOL_P"
t0=$(now)
$B local-attach "$VOL_P" "${COMMON[@]}" -f json >/brick/att2.json 2>/brick/att2.err
echo "RC att2 $?"
took att2 "$t0"
lines "ERR att2" /brick/att2.err 3
dev=$(jget /brick/att2.json path)
fsck.ext4 -f -p "$dev" >/brick/fsck1.out 2>&1
echo "RC fsck-repair $?"
lines "FSCK repair" /brick/fsck1.out 8
fsck.ext4 -f -n "$dev" >/brick/fsck2.out 2>&1
echo "RC fsck-check $?"
mkdir -p /mnt/p
mount -o ro,nosuid,nodev "$dev" /mnt/p
echo "RC mount $?"
(cd /mnt/p && sha256sum -c --quiet /brick/acked.sha) >/brick/check.out 2>&1
echo "RC acked $?"
lines CHECK /brick/check.out 3
n=0 b=0
for f in /mnt/p/ack-* /mnt/p/busy-*; do
	[[ -e $f ]] || continue
	[[ $f == */ack-* ]] && n=$((n + 1)) || b=$((b + 1))
done
echo "FILES p $n $b"
umount /mnt/p
$B local-detach "$VOL_P" "${COMMON[@]}" >/brick/det2.out 2>&1
echo "RC det2 $?"
lines "ERR det2" /brick/det2.out 3
state end "$VOL_P"
echo "NODES end $(iscsiadm -m node 2>/dev/null | grep -c . || true)"
echo DONE
`

// TestPowerLoss is issue 19's power loss in two boots of one guest: boot 1
// attaches and mounts a volume, writes and fsyncs 8 files and loses power
// mid-write; boot 2 (with brick's state and /etc/iscsi kept) runs brick
// cleanup, local-detach, local-attach again, fsck, and finds every
// acknowledged file intact, with nothing left after the last detach.
func TestPowerLoss(t *testing.T) {
	lane(t, laneServices)
	c := needCinder(t, guestCinderOptions)
	vol := newVolume(t, c, "brick-e2e-powerloss")
	env := map[string]string{"VOL_P": vol.ID, "PROJECT": c.ProjectID}
	brick := buildBrick(t)
	start := time.Now()

	share := guestShare(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := guest.Run(ctx, guest.Options{Script: powerLossBoot1Script, Files: map[string]string{brick: "brick"},
		NICs: 2, Env: env, Timeout: 5 * time.Minute, ShareDir: share})
	require.ErrorIs(t, err, guest.ErrNoExitCode, "the guest lost its power before the script ended")
	require.NotNil(t, res)
	boot1 := time.Since(start)
	g1 := parseGuestRun(t, share, res.Output)
	t.Logf("boot 1: %s\n%s", boot1.Round(time.Millisecond), res.Output)
	require.Equal(t, "0", g1.rc("att"))
	require.Equal(t, []string{"in-use"}, g1.st("attached")[:1])
	require.NotContains(t, g1.out, "ACKFAIL")
	require.Equal(t, "0", g1.rc("acksync"))
	require.Equal(t, "0", g1.rc("tar"))
	require.Contains(t, g1.out, "POWER off")
	require.NotContains(t, g1.out, "ALIVE after sysrq", "sysrq b reset the guest")

	start2 := time.Now()
	files := map[string]string{brick: "brick"}
	for _, f := range []string{"state.tar", "acked.sha"} {
		files[filepath.Join(share, f)] = f
	}
	g2 := runAttachGuest(t, c, powerLossBoot2Script, files, env, nil)
	boot2 := time.Since(start2)
	require.Equal(t, "0", g2.rc("untar"))
	require.Equal(t, []string{"0", "0", "0", "1"}, g2.lines["HOST boot"], "after the power loss: no session, disk or map; the record")
	require.Equal(t, "0", g2.rc("cleanup"), "%v", g2.lines["CLEANUP p"])
	require.Equal(t, "0", g2.rc("det1"), "%v", g2.lines["ERR det1"])
	g2.clean("det1")
	require.Equal(t, "0", g2.rc("att2"), "%v", g2.lines["ERR att2"])
	require.Contains(t, []string{"0", "1"}, g2.rc("fsck-repair"), "fsck -p: clean, or the journal replayed: %v", g2.lines["FSCK repair"])
	require.Equal(t, "0", g2.rc("fsck-check"), "fsck -n after the repair")
	require.Equal(t, "0", g2.rc("mount"))
	require.Equal(t, "0", g2.rc("acked"), "every acknowledged file intact: %v", g2.lines["CHECK"])
	require.Equal(t, "8", g2.word("FILES p", 0))
	require.Equal(t, "0", g2.rc("det2"), "%v", g2.lines["ERR det2"])
	g2.clean("end")
	require.Equal(t, []string{"0"}, g2.lines["NODES end"])
	sha, err := os.ReadFile(filepath.Join(share, "acked.sha"))
	require.NoError(t, err)
	require.Len(t, strings.Fields(string(sha)), 16, "8 checksums and names")
	t.Logf("power loss: boot 1 %s, boot 2 %s; cleanup %v s: %v; detach %v s: %v; re-attach %v s; fsck -p exit %s (%v), fsck -n exit %s; files ack/busy %v",
		boot1.Round(time.Second), boot2.Round(time.Second), g2.lines["TIME cleanup"], g2.lines["CLEANUP p"], g2.lines["TIME det1"], g2.lines["ERR det1"],
		g2.lines["TIME att2"], g2.rc("fsck-repair"), g2.lines["FSCK repair"], g2.rc("fsck-check"), g2.lines["FILES p"])
}
