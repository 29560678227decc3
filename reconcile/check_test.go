package reconcile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/host/hosttest"
)

func (w *world) rm(paths ...string) {
	for _, p := range paths {
		require.NoError(w.sys.t, os.RemoveAll(filepath.Join(w.sys.root, p)))
	}
}

const (
	rowA       = "healthy attachment a /dev/dm-0 | 2 of 2 paths"
	rowB       = "healthy attachment b /dev/sdz | 1 of 1 paths"
	rowForeign = "left-alone iscsi-target  iqn.2026-12.example:not-cinder | target not named after a Cinder volume"

	nqnLeg1      = "nqn.2020-04.com.kioxia:leg-1"
	nqnLeg2      = "nqn.2020-04.com.kioxia:leg-2"
	nqnOther     = "nqn.2014-08.org.example:other"
	rowOtherNVMe = "left-alone nvme  nvme2 | " + nqnOther + ": no record uses it"
)

// twoPortalsB gives B, attached without multipath over 10.0.2.2, a
// connection info naming a second portal too, as Cinder sends it when it
// has secondary addresses.
func twoPortalsB(w *world) {
	w.att.recs[1] = iscsiRecord(volB, []string{"10.0.2.2:3260", "10.0.3.2:3260"}, "", false)
}

func TestCheck(t *testing.T) {
	logoutPath := func(w *world) {
		w.rm("/sys/class/iscsi_session/session2", "/sys/class/iscsi_connection/connection2:0", "/sys/block/sdb", "/sys/block/dm-0/slaves/sdb")
	}
	for _, tc := range []struct {
		name   string
		drift  func(w *world)
		want   []string
		cinder int // Cinder calls, at most one per volume
	}{
		{name: "healthy", drift: func(*world) {}, want: []string{rowA, rowB, rowForeign}, cinder: 2},
		{name: "path logged out", drift: logoutPath,
			want: []string{"degraded attachment a /dev/dm-0 | 1 of 2 paths: 10.0.3.2:3260: no session", rowB, rowForeign}},
		{name: "disk removed under the map", drift: func(w *world) { w.rm("/sys/block/sdb", "/sys/block/dm-0/slaves/sdb") },
			want: []string{"degraded attachment a /dev/dm-0 | 1 of 2 paths: 10.0.3.2:3260: no disk at LUN 1", rowB, rowForeign}},
		{name: "disk not in the map", drift: func(w *world) { w.rm("/sys/block/dm-0/slaves/sdb") },
			want: []string{"degraded attachment a /dev/dm-0 | 1 of 2 paths: 10.0.3.2:3260: sdb not in map dm-0", rowB, rowForeign}},
		{name: "map gone", drift: func(w *world) { w.rm("/sys/block/dm-0") },
			want: []string{"degraded attachment a /dev/dm-0 | 2 of 2 paths: multipath map 36000a gone", rowB, rowForeign}},
		{name: "one path of a volume attached without multipath, two portals named", drift: twoPortalsB,
			want: []string{rowA, rowB, rowForeign}},
		{name: "disk of a volume attached without multipath removed", drift: func(w *world) {
			twoPortalsB(w)
			w.rm("/sys/block/sdc")
		}, want: []string{rowA, "degraded attachment b /dev/sdz | 0 of 1 paths: 10.0.2.2:3260: no disk at LUN 1; 10.0.3.2:3260: no session", rowForeign}},
		{name: "stray session of a detached volume", drift: func(w *world) {
			w.sys.session(4, iqnPfx+volC, "10.0.2.2")
			w.sys.disk("sdd", 4, 1, "6000c")
		}, want: []string{rowA, rowB,
			"orphaned iscsi-target c iqn.2010-10.org.openstack:volume-" + volC + " | volume " + volC + " has no attachment for host node1",
			rowForeign}, cinder: 3},
		{name: "attach killed half way", drift: func(w *world) {
			r := iscsiRecord(volD, []string{"10.0.2.2:3260"}, "", false)
			r.Phase, r.Step = attach.PhaseAttaching, attach.StepConnect
			w.att.recs = append(w.att.recs, r)
			w.sys.session(5, iqnPfx+volD, "10.0.2.2")
		}, want: []string{rowA, rowB, "interrupted attachment d /dev/sdz | local-attach did not finish (step connect)", rowForeign}},
		{name: "persistent volume missing after a reboot", drift: func(w *world) {
			w.att.recs = append(w.att.recs, iscsiRecord(volE, []string{"10.0.2.2:3260"}, "", true))
		}, want: []string{rowA, rowB, "missing attachment e /dev/sdz | Cinder shows it attached to node1, but no device is here", rowForeign}},
		{name: "attachment deleted in Cinder", drift: func(w *world) {
			w.att.recs = append(w.att.recs, iscsiRecord(volF, []string{"10.0.2.2:3260"}, "", false))
			w.sys.session(6, iqnPfx+volF, "10.0.2.2")
			w.sys.disk("sdf", 6, 1, "6000d")
		}, want: []string{rowA, rowB, "orphaned attachment f /dev/sdz | Cinder has no attachment of this volume for host node1 (deleted, or detached elsewhere)", rowForeign}},
		{name: "Cinder unreachable", drift: func(w *world) { w.cinder.err = errors.New("connection refused") },
			want: []string{"unknown attachment a /dev/dm-0 | Cinder: connection refused", "unknown attachment b /dev/sdz | Cinder: connection refused", rowForeign}},
		{name: "target of a volume Cinder does not have", drift: func(w *world) {
			w.sys.session(7, iqnPfx+"99999999-0000-4000-8000-000000000009", "10.0.2.2")
		}, want: []string{rowA, rowB,
			"left-alone iscsi-target 9 iqn.2010-10.org.openstack:volume-99999999-0000-4000-8000-000000000009 | Cinder has no volume 99999999-0000-4000-8000-000000000009",
			rowForeign}},
		{name: "other software's map and NFS mount", drift: func(w *world) {
			w.sys.dm("dm-7", "mpathz", "mpath-3600zz", "sdy")
			w.sys.dm("dm-8", "lvm-root", "LVM-abc")
			w.sys.mounts("40 22 0:50 / /srv/nfs rw - nfs4 server:/export rw\n")
		}, want: []string{rowA, rowB, rowForeign,
			"left-alone map  /dev/dm-7 | mpathz: no record or Cinder volume of this host uses it",
			"left-alone nfs  /srv/nfs | server:/export: no record uses it"}},
		{name: "another tool's krbd mapping, namespace and snapshot", drift: func(w *world) {
			for k, v := range map[string]string{"pool": "rbd", "pool_ns": "team", "name": "img", "current_snap": "before"} {
				hosttest.WriteFile(t, w.sys.root, "/sys/bus/rbd/devices/3/"+k, v+"\n")
			}
		}, want: []string{rowA, rowB, rowForeign, "left-alone rbd  /dev/rbd3 | rbd/team/img@before: no record uses it"}},
		{name: "replicated NVMe volume: every leg's controller is its own", drift: func(w *world) {
			data := map[string]any{"alias": "volume-e", "replica_count": 2, "vol_uuid": volE,
				"volume_replicas": []any{nvmeLeg(nqnLeg1, volA), nvmeLeg(nqnLeg2, volB)}}
			w.att.recs = append(w.att.recs, nvmeRecord(volE, "/dev/md/volume-e", data))
			w.conn.paths = []string{"/dev/md/volume-e"}
			w.sys.nvme("nvme0", nqnLeg1)
			w.sys.nvme("nvme1", nqnLeg2)
			w.sys.nvme("nvme2", nqnOther)
		}, want: []string{rowA, rowB, "healthy attachment e /dev/md/volume-e |", rowForeign, rowOtherNVMe}},
		{name: "NVMe volume in the old format claims its subsystem's controller", drift: func(w *world) {
			data := map[string]any{"nqn": nqnLeg1, "transport_type": "tcp", "target_portal": "10.0.2.3", "target_port": 4420, "ns_id": 1}
			w.att.recs = append(w.att.recs, nvmeRecord(volE, "/dev/nvme0n1", data))
			w.conn.paths = []string{"/dev/nvme0n1"}
			w.sys.nvme("nvme0", nqnLeg1)
			w.sys.nvme("nvme2", nqnOther)
		}, want: []string{rowA, rowB, "healthy attachment e /dev/nvme0n1 |", rowForeign, rowOtherNVMe}},
		{name: "NVMe volume whose device is gone claims nothing", drift: func(w *world) {
			w.att.recs = append(w.att.recs, nvmeRecord(volE, "/dev/nvme0n1", nvmeLeg(nqnOther, volE)))
			w.sys.nvme("nvme2", nqnOther)
		}, want: []string{rowA, rowB, "missing attachment e /dev/nvme0n1 | Cinder shows it attached to node1, but no device is here (not persistent: attach it again, or local-detach it)",
			rowForeign, rowOtherNVMe}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tc.drift(w)
			rep, err := w.reconciler().Check(context.Background())
			require.NoError(t, err)
			require.Equal(t, tc.want, rows(rep))
			if tc.cinder > 0 {
				require.Equal(t, tc.cinder, w.cinder.calls)
			}
			require.Empty(t, w.att.calls, "Check changes nothing")
		})
	}
}

// TestApply is the drift all at once: each repair runs once, in
// order, and the foreign session is never touched.
func TestApply(t *testing.T) {
	w := newWorld(t)
	w.rm("/sys/class/iscsi_session/session2", "/sys/class/iscsi_connection/connection2:0", "/sys/block/sdb", "/sys/block/dm-0/slaves/sdb")
	w.sys.session(4, iqnPfx+volC, "10.0.3.2")
	w.sys.disk("sdd", 4, 1, "6000c")
	r := iscsiRecord(volD, []string{"10.0.2.2:3260"}, "", false)
	r.Phase, r.Step = attach.PhaseAttaching, attach.StepConnect
	w.att.recs = append(w.att.recs, r, iscsiRecord(volE, []string{"10.0.2.2:3260"}, "", true), iscsiRecord(volF, []string{"10.0.2.2:3260"}, "", false))
	w.att.fail["reconnect "+volE] = errors.New("portal down")

	rc := w.reconciler()
	rep, err := rc.Check(context.Background())
	require.NoError(t, err)
	require.False(t, rep.Healthy())
	err = rc.Apply(context.Background(), rep)
	require.ErrorContains(t, err, "portal down")
	require.Equal(t, []string{
		"cleanup " + volD,
		"suspend(unmount=false,forget=true) " + volF,
		"reconnect " + volA,
		"reconnect " + volE,
	}, w.att.calls)
	require.Len(t, w.conn.disconnects, 1, "one stray target logged out")
	d := w.conn.disconnects[0].Data
	require.Equal(t, []any{"10.0.3.2:3260"}, d["target_portals"])
	require.Equal(t, []any{iqnPfx + volC}, d["target_iqns"])
	require.Equal(t, []any{1}, d["target_luns"])
	results := map[string]string{}
	for _, f := range rep.Findings {
		results[f.Status+" "+short(f.VolumeID)+" "+f.Kind] = f.Result
	}
	require.Equal(t, map[string]string{
		"degraded a attachment": "done", "healthy b attachment": "", "orphaned c iscsi-target": "done",
		"interrupted d attachment": "done", "missing e attachment": "failed: portal down",
		"orphaned f attachment": "done", "left-alone  iscsi-target": "",
	}, results)
}

func TestRestoreAndShutdown(t *testing.T) {
	w := newWorld(t)
	// After a reboot: nothing on the host; A and E persistent, B not; F's
	// attachment was deleted in Cinder meanwhile.
	w.rm("/sys/class", "/sys/block")
	f := iscsiRecord(volF, []string{"10.0.2.2:3260"}, "", true)
	w.att.recs = append(w.att.recs, iscsiRecord(volE, []string{"10.0.2.2:3260"}, "", true), f)
	rc := w.reconciler()
	rep, err := rc.Restore(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"reconnect " + volA, "reconnect " + volE, "suspend(unmount=false,forget=true) " + volF}, slices.Sorted(slices.Values(w.att.calls)))
	var got []string
	for _, x := range rep.Findings {
		got = append(got, x.Status+" "+short(x.VolumeID)+" "+x.Result)
	}
	require.Equal(t, []string{"missing a done", "missing e done", "orphaned f done"}, got, "B is not persistent: not restored, not listed")

	w.att.calls = nil
	rep, err = rc.Shutdown(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"suspend(unmount=true,forget=false) " + volA, "suspend(unmount=true,forget=false) " + volE,
		"suspend(unmount=true,forget=false) " + volF}, w.att.calls)
	require.Len(t, rep.Findings, 3)
}
