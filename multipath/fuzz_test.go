package multipath_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/multipath"
)

// FuzzMapSysfs feeds arbitrary dm uuid, name, ro and wwids file contents
// to the sysfs readers brick uses instead of multipathd/dmsetup output:
// no panic, and a map found is a multipath map over the given disk.
func FuzzMapSysfs(f *testing.F) {
	const wwid = "360000000000000000e00000000010001"
	f.Add("mpath-"+wwid+"\n", "mpatha\n", "0\n", "/"+wwid+"/\n")
	f.Add("LVM-xyz", "", "1", "")
	f.Add("mpath-", "../../x", "\x00", "//\n/ /\n")
	root := f.TempDir()
	// Not hosttest.New(f, ...): its logger writes to f, which a fuzz
	// function may not use.
	h := hosttest.NewQuiet(root)
	m := multipath.New(h, multipath.Options{})
	f.Fuzz(func(t *testing.T, uuid, name, ro, wwids string) {
		_ = os.RemoveAll(filepath.Join(root, "sys"))
		hosttest.WriteFile(t, root, "/sys/block/dm-0/dm/uuid", uuid)
		hosttest.WriteFile(t, root, "/sys/block/dm-0/dm/name", name)
		hosttest.WriteFile(t, root, "/sys/block/dm-0/ro", ro)
		hosttest.WriteFile(t, root, "/sys/block/dm-0/slaves/sdb/dev", "8:16\n")
		hosttest.WriteFile(t, root, "/sys/block/sdb/holders/dm-0/dev", "253:0\n")
		hosttest.WriteFile(t, root, "/etc/multipath/wwids", wwids)
		if mp, err := m.Maps().Map("dm-0"); err == nil && mp.Device != "dm-0" {
			t.Fatalf("map %+v", mp)
		}
		if mp, err := m.Maps().MapOf("sdb"); err == nil && len(mp.Paths) != 1 {
			t.Fatalf("paths %v", mp.Paths)
		}
		if mp, err := m.Maps().MapByWWID(wwid); err == nil && mp.WWID != wwid {
			t.Fatalf("wwid %q", mp.WWID)
		}
		_ = m.WWIDs().Known(wwid)
		if ident.WWID(name) {
			_, _ = m.Maps().MapByWWID(name)
		}
	})
}
