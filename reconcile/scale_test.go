package reconcile

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host/hosttest"
)

// scaleWorld is a fixture host with n multipath volumes, two paths each,
// all attached here in Cinder (the 32-volume host).
func scaleWorld(t testing.TB, n int) *world {
	h, root := hosttest.New(t, nil)
	w := &world{sys: sysfs{t, root}, h: h, conn: &fakeConn{},
		cinder: &fakeCinder{attached: map[string][]string{}}, att: &fakeAttach{fail: map[string]error{}}}
	w.sys.mounts()
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		w.cinder.attached[id] = []string{me}
		wwid := fmt.Sprintf("36000%04x", i)
		s1, s2 := 2*i+1, 2*i+2
		w.sys.session(s1, iqnPfx+id, "10.0.2.2")
		w.sys.session(s2, iqnPfx+id, "10.0.3.2")
		d1, d2 := fmt.Sprintf("sd%c%c", 'a'+i/26, 'a'+i%26), fmt.Sprintf("sd%c%c", 'm'+i/26, 'a'+i%26)
		w.sys.disk(d1, s1, 1, wwid[1:])
		w.sys.disk(d2, s2, 1, wwid[1:])
		w.sys.dm(fmt.Sprintf("dm-%d", i), fmt.Sprintf("mpath%d", i), "mpath-"+wwid, d1, d2)
		w.att.recs = append(w.att.recs, iscsiRecord(id, []string{"10.0.2.2:3260", "10.0.3.2:3260"}, wwid, true))
	}
	return w
}

// TestCheck32Volumes: reconcile on a host with 32 multipath volumes
// answers quickly, Cinder's time excluded (the fake answers at once;
// Report.CinderTime is what a real one adds).
func TestCheck32Volumes(t *testing.T) {
	w := scaleWorld(t, 32)
	start, cpu0 := time.Now(), hosttest.CPUTime(t)
	rep, err := w.reconciler().Check(context.Background())
	took, cpu := time.Since(start), hosttest.CPUTime(t)-cpu0
	require.NoError(t, err)
	require.Len(t, rep.Findings, 32)
	for _, f := range rep.Findings {
		require.Equal(t, Healthy, f.Status, f.Detail)
		require.Equal(t, "2 of 2 paths", f.Detail)
	}
	require.Equal(t, 32, w.cinder.calls, "one Cinder call per volume")
	t.Logf("reconcile check, 32 volumes x 2 paths on a fixture sysfs: %v, %v of CPU (cinder %v)", took, cpu, rep.CinderTime)
	// The bound is on the CPU the check used (the fake Cinder's included,
	// it answers at once), which a loaded machine does not stretch as it
	// does wall time: it catches a per-volume scan of the whole tree, not
	// a busy CI host. BenchmarkCheck32Volumes measures.
	require.Less(t, cpu, 5*time.Second)
}

func BenchmarkCheck32Volumes(b *testing.B) {
	w := scaleWorld(b, 32)
	r := w.reconciler()
	for b.Loop() {
		if _, err := r.Check(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
