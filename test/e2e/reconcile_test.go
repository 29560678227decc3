//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed"
)

// unrelatedIQN is the guest's own target: no Cinder volume, so reconcile
// must leave its session alone.
const unrelatedIQN = "iqn.2026-12.org.example:unrelated"

// reconcileBoot1Script is the first boot of TestReconcileGuest: drift,
// reconcile, --apply, reconcile again; then data on the persistent
// volumes, brick restore --shutdown, and brick's state plus /etc/iscsi and
// /etc/multipath in the share as state.tar for the second boot. It runs in
// the suite's shared guest (no boot of its own), which it leaves clean.
const reconcileBoot1Script = reliabilityPrelude + `
IQNP=iqn.2010-10.org.openstack:volume-
# The WWIDs file as this guest had it, for the end.
[[ -e /etc/multipath/wwids ]] && cp /etc/multipath/wwids /tmp/wwids.before
# sessions_to IQN: how many sessions the guest has to a target.
sessions_to() {
	local s n=0 name
	for s in /sys/class/iscsi_session/session*/targetname; do
		[[ -e $s ]] || continue
		read -r name <"$s"
		[[ $name == "$1" ]] && n=$((n + 1))
	done
	echo "$n"
}

# 1. Three persistent attachments at once (A: multipath, ext4 on /mnt/a;
# B: one path; G: multipath), D killed half-way through its local-attach,
# and C connected by "another tool" (brick connect keeps no record) from
# the connection info of C's attachment to another host.
t0=$(now)
$B local-attach "$VOL_A" "${COMMON[@]}" --multipath --persist --mountpoint /mnt/a --mkfs ext4 -f json >/brick/attach-a.json 2>/brick/attach-a.err &
pa=$!
$B local-attach "$VOL_B" "${COMMON[@]}" --persist -f json >/brick/attach-b.json 2>/brick/attach-b.err &
pb=$!
$B local-attach "$VOL_G" "${COMMON[@]}" --multipath --persist -f json >/brick/attach-g.json 2>/brick/attach-g.err &
pg=$!
BRICK_TEST_CRASH_AT=complete $B local-attach "$VOL_D" "${COMMON[@]}" >/brick/crash-d.out 2>&1 &
pd=$!
$B connect --connection-info /brick/stray.json --iscsi-login-timeout 8s --device-timeout 20s -f json >/brick/stray-dev.json 2>/brick/stray.err &
pc=$!
wait $pa; echo "RC attach-a $?"
wait $pb; echo "RC attach-b $?"
wait $pg; echo "RC attach-g $?"
wait $pd; echo "RC crash-d $?"
wait $pc; echo "RC stray-c $?"
took attach-all "$t0"
for v in a b g; do echo "ATT $v $(jget /brick/attach-$v.json attachment_id) $(jget /brick/attach-$v.json multipath_id)"; done

# 2. A session to a target of no Cinder volume (the guest's own tgtd).
eval "$("$BRICK_FIXTURES/tgt-target.sh" --iqn "$UNRELATED_IQN" --size 16M)"
iscsiadm -m node -o new -T "$UNRELATED_IQN" -p 127.0.0.1:3260 >/dev/null
iscsiadm -m node -T "$UNRELATED_IQN" -p 127.0.0.1:3260 -l >/dev/null
echo "RC unrelated-login $?"

# 3. Data for the reboot.
echo "brick persist $VOL_A" >/mnt/a/hello.txt && sync
echo "RC write-a $?"
devb=$(jget /brick/attach-b.json path)
dd if=/brick/pattern of="$devb" bs=1M seek=4 count=1 oflag=direct conv=notrunc status=none
echo "RC write-b $?"
hoststate attached

# 4. Drift: one path of A logged out, the disk of one path of G deleted
# under its map.
iscsiadm -m node -T "$IQNP$VOL_A" -p 10.0.3.2:3260 -u >/dev/null
echo "RC logout-a $?"
mapg=$(jget /brick/attach-g.json path)
for s in /sys/block/${mapg#/dev/}/slaves/*; do gdisk=${s##*/}; done
echo 1 >"/sys/block/$gdisk/device/delete"
echo "RC delete-g $? $gdisk"
pause 2
hoststate drifted

t0=$(now)
$B reconcile "${COMMON[@]}" --debug -f json >/brick/rec1.json 2>/brick/rec1.err
echo "RC rec1 $?"
took rec1 "$t0"
grep -h 'reconcile: checked' /brick/rec1.err | sed 's/^/CHECKED rec1 /'
t0=$(now)
$B reconcile --apply "${COMMON[@]}" -f json >/brick/rec-apply.json 2>/brick/rec-apply.err
echo "RC rec-apply $?"
took rec-apply "$t0"
t0=$(now)
$B reconcile "${COMMON[@]}" -f json >/brick/rec2.json 2>/brick/rec2.err
echo "RC rec2 $?"
took rec2 "$t0"
hoststate repaired
echo "UNRELATED repaired $(sessions_to "$UNRELATED_IQN")"
echo "STRAY repaired $(sessions_to "$IQNP$VOL_C")"
state d-repaired "$VOL_D"
state c-repaired "$VOL_C"
echo "FILE a-repaired $(cat /mnt/a/hello.txt 2>&1)"

# 4b. An encrypted persistent volume (Cinder's fixed key), formatted,
# mounted and written, for restore to open again after the reboot.
modprobe -a dm_crypt xts 2>/dev/null
{ set +x; } 2>/dev/null
(umask 077 && printf '%s\n' "$FIXED_KEY" >/tmp/fixed_key)
set -x
t0=$(now)
$B local-attach "$VOL_E" "${COMMON[@]}" --fixed-key-file /tmp/fixed_key --persist --mountpoint /mnt/e --mkfs ext4 --mount-fstype ext4 -f json >/brick/attach-e.json 2>/brick/attach-e.err
echo "RC attach-e $?"
took attach-e "$t0"
echo "ATT e $(jget /brick/attach-e.json attachment_id)"
echo "brick crypt $VOL_E" >/mnt/e/hello.txt && sync
echo "RC write-e $?"
rm -f /tmp/fixed_key

# 5. Shutdown: the unrelated session goes first (it is no concern of
# brick's), then brick restore --shutdown.
iscsiadm -m node -T "$UNRELATED_IQN" -p 127.0.0.1:3260 -u >/dev/null
iscsiadm -m node -o delete -T "$UNRELATED_IQN" -p 127.0.0.1:3260 >/dev/null
t0=$(now)
$B restore --shutdown "${COMMON[@]}" -f json >/brick/shutdown.json 2>/brick/shutdown.err
echo "RC shutdown $?"
took shutdown "$t0"
hoststate shutdown
echo "MOUNTED shutdown $(grep -c ' /mnt/a ' /proc/self/mounts)"
for v in A B G E; do n=VOL_$v; state "shutdown-$v" "${!n}"; done
keep=(var/lib/brick etc/iscsi etc/multipath)
[[ -d /etc/brick ]] && keep+=(etc/brick)
tar -C / -cf /brick/state.tar "${keep[@]}"
echo "RC tar $?"
# This boot is the suite's shared guest, which goes on to the next test:
# what state.tar carries to the second boot leaves it, as a new disk
# would not have it.
rm -f /var/lib/brick/volumes/*.json
rm -rf /etc/iscsi/nodes/* /etc/iscsi/send_targets/*
if [[ -e /tmp/wwids.before ]]; then cp /tmp/wwids.before /etc/multipath/wwids; else rm -f /etc/multipath/wwids; fi
echo DONE
`

// reconcileBoot2Script is the second boot: the state of the first is put
// back (as a host's disk would keep it), then brick restore, and what a
// unit ordered after brick-restore.service would see.
const reconcileBoot2Script = `
tar -C / -xf /brick/state.tar
echo "RC untar $?"
# Keep the first boot's initiator name: iscsi.sh reads it from here.
read -r line </etc/iscsi/initiatorname.iscsi
echo "${line#InitiatorName=}" >/run/brick-initiator
` + reliabilityPrelude + `
IQNP=iqn.2010-10.org.openstack:volume-
hoststate boot
modprobe -a dm_crypt xts 2>/dev/null
{ set +x; } 2>/dev/null
(umask 077 && printf '%s\n' "$FIXED_KEY" >/tmp/fixed_key)
set -x
t0=$(now)
$B restore "${COMMON[@]}" --fixed-key-file /tmp/fixed_key -f json >/brick/restore.json 2>/brick/restore.err
echo "RC restore $?"
took restore "$t0"
rm -f /tmp/fixed_key
# What a unit ordered after brick-restore.service sees first.
while read -r src mnt type _; do
	[[ $mnt == /mnt/a ]] && echo "MOUNT a $src $type"
	[[ $mnt == /mnt/e ]] && echo "MOUNT e $src $type"
done </proc/mounts
echo "FILE a $(cat /mnt/a/hello.txt 2>&1)"
echo "FILE e $(cat /mnt/e/hello.txt 2>&1)"
devb=""
while read -r v d; do [[ $v == "$VOL_B" ]] && devb=$d; done < <($B list -f value -c volume -c device)
dd if="$devb" of=/tmp/b.bin bs=1M skip=4 count=1 iflag=direct status=none
cmp -s /tmp/b.bin /brick/pattern
echo "DATA b $?"
hoststate restored
for v in A B G; do n=VOL_$v; state "restored-$v" "${!n}"; done
api "volumes/$VOL_A" >/brick/vol-a.json
api "volumes/$VOL_B" >/brick/vol-b.json
api "volumes/$VOL_E" >/brick/vol-e.json
# G, whose attachment was deleted in Cinder: nothing of it is left.
gs=0
for s in /sys/class/iscsi_session/session*/targetname; do
	[[ -e $s ]] && read -r name <"$s" && [[ $name == "$IQNP$VOL_G" ]] && gs=$((gs + 1))
done
echo "LEFT g $gs $(nglob /etc/iscsi/nodes/$IQNP$VOL_G /var/lib/brick/volumes/$VOL_G.json) $(grep -c "^/$WWID_G/" /etc/multipath/wwids)"
t0=$(now)
$B reconcile "${COMMON[@]}" -f json >/brick/rec3.json 2>/brick/rec3.err
echo "RC rec3 $?"
took rec3 "$t0"
$B local-detach "$VOL_A" "${COMMON[@]}" >/brick/detach-a.out 2>&1 &
pa=$!
$B local-detach "$VOL_B" "${COMMON[@]}" >/brick/detach-b.out 2>&1
echo "RC detach-b $?"
$B local-detach "$VOL_E" "${COMMON[@]}" >/brick/detach-e.out 2>&1
echo "RC detach-e $?"
wait $pa; echo "RC detach-a $?"
hoststate end
echo DONE
`

// reconcileFinding is one row of brick reconcile -f json.
type reconcileFinding struct {
	Status, Volume, Kind, Object, Paths, Detail, Repair, Result string
	Persist                                                     bool
}

func readFindings(t *testing.T, share, name string) map[string]reconcileFinding {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(share, name))
	require.NoError(t, err, name)
	var list []reconcileFinding
	require.NoError(t, json.Unmarshal(data, &list), "%s: %s", name, data)
	out := map[string]reconcileFinding{}
	for _, f := range list {
		key := f.Volume
		if key == "" {
			key = f.Object
		}
		require.NotContains(t, out, key, "%s: one finding per volume or object", name)
		out[key] = f
	}
	t.Logf("%s:\n%s", name, data)
	return out
}

// strayAttachment attaches vol in Cinder to another host and returns its
// connection info (a file for brick connect) and attachment ID.
func strayAttachment(t *testing.T, c *testbed.Cinder, vol string) (infoFile, attachmentID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn := map[string]any{"host": "brick-other-host", "initiator": "iqn.2026-12.org.example:other-host",
		"ip": "10.0.2.99", "platform": "x86_64", "os_type": "linux", "multipath": false}
	var r struct {
		Attachment struct {
			ID             string         `json:"id"`
			ConnectionInfo map[string]any `json:"connection_info"`
		} `json:"attachment"`
	}
	require.NoError(t, c.Request(ctx, http.MethodPost, "/attachments", "3.54",
		map[string]any{"attachment": map[string]any{"volume_uuid": vol, "connector": conn, "mode": "rw"}}, &r))
	id := r.Attachment.ID
	t.Cleanup(func() { deleteAttachment(t, c, vol, id) })
	require.NoError(t, c.Request(ctx, http.MethodPost, "/attachments/"+id+"/action", "3.44", map[string]any{"os-complete": nil}, nil))
	data, err := json.Marshal(r.Attachment.ConnectionInfo)
	require.NoError(t, err)
	infoFile = filepath.Join(t.TempDir(), "stray.json")
	require.NoError(t, os.WriteFile(infoFile, data, 0o600))
	return infoFile, id
}

// deleteAttachment deletes a Cinder attachment (gone already is fine) and
// waits for the volume to be available.
func deleteAttachment(t *testing.T, c *testbed.Cinder, vol, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := c.Request(ctx, http.MethodDelete, "/attachments/"+id, "3.44", nil, nil)
	if testbed.StatusOf(err) != http.StatusNotFound {
		require.NoError(t, err, "delete attachment %s of %s", id, vol)
	}
	_, err = c.WaitVolume(ctx, vol, "available")
	require.NoError(t, err)
}

// TestReconcileGuest proves issue 24 in two boots with the real Cinder.
// Boot 1 (the suite's shared guest, left clean): drift (a lost path, a
// disk deleted under a map, a stray session to a volume attached
// elsewhere, a local-attach killed half-way, a session to a non-Cinder
// target) is reported exactly, repaired by --apply and healthy afterwards;
// then brick restore --shutdown. Boot 2 (a fresh guest),
// with brick's state and /etc/iscsi, /etc/multipath kept, after one
// volume's attachment was deleted in Cinder: brick restore brings the other
// two back (mounted, data intact, same Cinder attachments) and leaves
// nothing of the deleted one.
func TestReconcileGuest(t *testing.T) {
	lane(t, laneServices)
	sharedGuest.prestart() // boot 1 runs there; it boots meanwhile, unless up
	c := needCinder(t, guestCinderOptions)
	patternFile := randomFile(t, 1<<20)
	env := map[string]string{"UNRELATED_IQN": unrelatedIQN}
	vols := map[string]string{}
	keys := []string{"A", "B", "G", "D", "C"}
	var names []string
	for _, k := range keys {
		names = append(names, "brick-e2e-reconcile-"+strings.ToLower(k))
	}
	for i, v := range newVolumes(t, c, names...) {
		vols[keys[i]] = v.ID
		env["VOL_"+keys[i]] = v.ID
	}
	stray, _ := strayAttachment(t, c, vols["C"])
	vols["E"] = cryptVolumes(t, c, "luks")[0].ID
	env["VOL_E"], env["FIXED_KEY"] = vols["E"], c.Env["BRICK_TB_CINDER_FIXED_KEY"]

	start := time.Now()
	g1 := runSharedGuest(t, c, reconcileBoot1Script, map[string]string{patternFile: "pattern", stray: "stray.json"}, env, nil)
	boot1 := time.Since(start)
	for _, l := range []string{"attach-a", "attach-b", "attach-g", "stray-c", "unrelated-login", "write-a", "write-b", "logout-a"} {
		require.Equal(t, "0", g1.rc(l), l)
	}
	require.Equal(t, "0", g1.rc("attach-e"), "%s", readShare(g1.share, "attach-e.err"))
	require.Equal(t, "0", g1.rc("write-e"))
	require.Equal(t, "137", g1.rc("crash-d"), "local-attach of D killed at step complete")
	t.Logf("attach (4 local-attach + 1 connect at once) %v s; reconcile %v s (%v), --apply %v s, again %v s; shutdown %v s",
		g1.lines["TIME attach-all"], g1.lines["TIME rec1"], g1.lines["CHECKED rec1"], g1.lines["TIME rec-apply"], g1.lines["TIME rec2"], g1.lines["TIME shutdown"])

	t.Run("drift", func(t *testing.T) {
		require.Equal(t, []string{"8", "8", "2", "4"}, g1.lines["HOST attached"], "sessions and disks: A 2, B 1, G 2, D 1, C 1, unrelated 1; maps of A and G; records of A, B, G, D")
		require.NotEqual(t, "0", g1.rc("rec1"), "not healthy: exit non-zero")
		f := readFindings(t, g1.share, "rec1.json")
		require.Len(t, f, 6, "A, B, G, D, C and the unrelated target")
		require.Equal(t, "degraded", f[vols["A"]].Status)
		require.Contains(t, f[vols["A"]].Detail, "10.0.3.2:3260: no session")
		require.Equal(t, "healthy", f[vols["B"]].Status)
		require.Equal(t, "degraded", f[vols["G"]].Status)
		require.Contains(t, f[vols["G"]].Detail, "no disk at LUN 1")
		require.Equal(t, "interrupted", f[vols["D"]].Status)
		require.Equal(t, "orphaned", f[vols["C"]].Status)
		require.Equal(t, "iscsi-target", f[vols["C"]].Kind)
		require.Equal(t, "left-alone", f[unrelatedIQN].Status)

		require.Equal(t, "0", g1.rc("rec-apply"))
		f = readFindings(t, g1.share, "rec-apply.json")
		for _, k := range []string{"A", "G", "D", "C"} {
			require.Equal(t, "done", f[vols[k]].Result, "repair of %s", k)
		}
		require.Empty(t, f[unrelatedIQN].Result, "nothing done to the unrelated target")

		require.Equal(t, "0", g1.rc("rec2"), "all healthy")
		f = readFindings(t, g1.share, "rec2.json")
		require.Len(t, f, 4, "A, B, G and the unrelated target")
		for _, k := range []string{"A", "B", "G"} {
			require.Equal(t, "healthy", f[vols[k]].Status, k)
		}
		require.Equal(t, "left-alone", f[unrelatedIQN].Status)
		require.Equal(t, []string{"6", "6", "2", "3"}, g1.lines["HOST repaired"], "A 2 + B 1 + G 2 + unrelated 1 sessions and disks, 2 maps, 3 records")
		require.Equal(t, []string{"1"}, g1.lines["UNRELATED repaired"], "the unrelated session is untouched")
		require.Equal(t, []string{"0"}, g1.lines["STRAY repaired"])
		require.Equal(t, []string{"available", "-"}, g1.st("d-repaired")[:2], "D's interrupted attach undone")
		require.Equal(t, []string{"in-use", "brick-other-host"}, g1.st("c-repaired")[:2], "C's attachment elsewhere untouched")
		require.Equal(t, []string{"brick", "persist", vols["A"]}, g1.lines["FILE a-repaired"])
	})

	require.Equal(t, "0", g1.rc("shutdown"))
	require.Equal(t, []string{"0", "0", "0", "4"}, g1.lines["HOST shutdown"], "nothing left connected, the records (A, B, G, E) kept")
	require.Equal(t, []string{"0"}, g1.lines["MOUNTED shutdown"])
	for _, k := range []string{"A", "B", "G", "E"} {
		require.Equal(t, []string{"in-use", "brick-guest"}, g1.st("shutdown-" + k)[:2], "%s stays attached in Cinder", k)
	}
	require.Equal(t, "0", g1.rc("tar"))
	attA, attB, attG, attE := g1.lines["ATT a"], g1.lines["ATT b"], g1.lines["ATT g"], g1.lines["ATT e"]
	require.Len(t, attE, 1)
	require.Len(t, attA, 2)
	require.Len(t, attB, 1)
	require.Len(t, attG, 2)

	// Between the boots the attachment of G is deleted in Cinder.
	deleteAttachment(t, c, vols["G"], attG[0])
	env["WWID_G"] = attG[1]

	start2 := time.Now()
	g2 := runAttachGuest(t, c, reconcileBoot2Script, map[string]string{patternFile: "pattern", filepath.Join(g1.share, "state.tar"): "state.tar"}, env, nil)
	boot2 := time.Since(start2)
	t.Logf("restore %v s, reconcile %v s; boot 1 %s, boot 2 %s; encrypted E: attach %v s", g2.lines["TIME restore"], g2.lines["TIME rec3"], boot1.Round(time.Second), boot2.Round(time.Second), g1.lines["TIME attach-e"])

	t.Run("reboot", func(t *testing.T) {
		require.Equal(t, "0", g2.rc("untar"))
		require.Equal(t, []string{"0", "0", "0", "4"}, g2.lines["HOST boot"])
		require.Equal(t, "0", g2.rc("restore"), "%s", readShare(g2.share, "restore.err"))
		f := readFindings(t, g2.share, "restore.json")
		require.Len(t, f, 4)
		require.Equal(t, "missing", f[vols["A"]].Status)
		require.Equal(t, "done", f[vols["A"]].Result)
		require.Equal(t, "missing", f[vols["B"]].Status)
		require.Equal(t, "done", f[vols["B"]].Result)
		mount := g2.lines["MOUNT a"]
		require.Len(t, mount, 2, "/mnt/a mounted right after restore")
		require.Equal(t, "ext4", mount[1])
		require.True(t, strings.HasPrefix(mount[0], "/dev/dm-") || strings.HasPrefix(mount[0], "/dev/mapper/"), "on the multipath map: %v", mount)
		require.Equal(t, []string{"brick", "persist", vols["A"]}, g2.lines["FILE a"])
		require.Equal(t, []string{"0"}, g2.lines["DATA b"], "B's data intact")
		require.Equal(t, []string{"4", "4", "1", "3"}, g2.lines["HOST restored"], "A 2 + B 1 + E 1 sessions and disks, A's map, 3 records")
		for k, att := range map[string]string{"A": attA[0], "B": attB[0], "E": attE[0]} {
			v := readVolume(t, g2.share, "vol-"+strings.ToLower(k)+".json")
			require.Equal(t, "in-use", v.Status)
			require.Len(t, v.Attachments, 1)
			require.Equal(t, att, v.Attachments[0].AttachmentID, "%s: the Cinder attachment is unchanged", k)
		}
		require.Equal(t, "0", g2.rc("rec3"), "all healthy after restore")
		require.Len(t, readFindings(t, g2.share, "rec3.json"), 3)
		require.Equal(t, "0", g2.rc("detach-a"))
		require.Equal(t, "0", g2.rc("detach-b"))
		require.Equal(t, "0", g2.rc("detach-e"), "%s", readShare(g2.share, "detach-e.out"))
		require.Equal(t, []string{"0", "0", "0", "0"}, g2.lines["HOST end"])
	})

	t.Run("encrypted volume restored", func(t *testing.T) {
		f := readFindings(t, g2.share, "restore.json")
		require.Equal(t, "missing", f[vols["E"]].Status)
		require.Equal(t, "done", f[vols["E"]].Result)
		require.Equal(t, []string{"/dev/mapper/crypt-" + vols["E"], "ext4"}, g2.lines["MOUNT e"], "opened and mounted right after restore")
		require.Equal(t, []string{"brick", "crypt", vols["E"]}, g2.lines["FILE e"])
	})

	t.Run("attachment deleted", func(t *testing.T) {
		f := readFindings(t, g2.share, "restore.json")
		g := f[vols["G"]]
		require.Equal(t, "orphaned", g.Status, "reported")
		require.Contains(t, g.Detail, "no attachment of this volume for host brick-guest")
		require.Equal(t, "done", g.Result, "record dropped")
		require.Equal(t, []string{"available", "-"}, g2.st("restored-G")[:2], "not re-attached")
		require.Equal(t, []string{"0", "0", "0"}, g2.lines["LEFT g"], "no session, node record, brick record or WWID of G")
	})
}

// randomFile writes n random bytes into a file of the test's own.
func randomFile(t *testing.T, n int) string {
	t.Helper()
	data := make([]byte, n)
	_, err := rand.Read(data)
	require.NoError(t, err)
	name := filepath.Join(t.TempDir(), "random")
	require.NoError(t, os.WriteFile(name, data, 0o644))
	return name
}

// readVolume parses a Cinder volume the guest saved (GET volumes/ID).
func readVolume(t *testing.T, share, name string) testbed.Volume {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(share, name))
	require.NoError(t, err, name)
	var r struct {
		Volume testbed.Volume `json:"volume"`
	}
	require.NoError(t, json.Unmarshal(data, &r), "%s: %s", name, data)
	return r.Volume
}
