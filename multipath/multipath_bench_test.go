package multipath_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/multipath"
)

// benchMaps maps of two paths each (1,000 SCSI disks) in the benchmark fixture.
const benchMaps = 500

func benchWWID(i int) string { return fmt.Sprintf("36000000000000000e000000%09x", i) }

// benchFixture lays out dm-0..dm-499, each a multipath map over two disks
// (sd<2i>, sd<2i+1> in the fixture's own naming), with holders, slaves and
// the udev by-id links, as the kernel and udev show them.
func benchFixture(b *testing.B) (*multipath.Multipath, string) {
	b.Helper()
	root := b.TempDir()
	for i := 0; i < benchMaps; i++ {
		dm := fmt.Sprintf("dm-%d", i)
		base := "/sys/devices/virtual/block/" + dm
		hosttest.WriteFile(b, root, base+"/dm/uuid", "mpath-"+benchWWID(i)+"\n")
		hosttest.WriteFile(b, root, base+"/dm/name", fmt.Sprintf("mpath%d\n", i))
		hosttest.WriteFile(b, root, base+"/ro", "0\n")
		hosttest.Symlink(b, root, "/sys/block/"+dm, "../devices/virtual/block/"+dm)
		for p := 0; p < 2; p++ {
			d := fmt.Sprintf("sdx%d", 2*i+p)
			hosttest.Symlink(b, root, "/sys/devices/x/"+d+"/holders/"+dm, "../../../virtual/block/"+dm)
			hosttest.Symlink(b, root, "/sys/block/"+d, "../devices/x/"+d)
			hosttest.Symlink(b, root, base+"/slaves/"+d, "../../../../x/"+d)
		}
		hosttest.WriteFile(b, root, "/dev/"+dm, "")
		hosttest.Symlink(b, root, "/dev/disk/by-id/dm-uuid-mpath-"+benchWWID(i), "../../"+dm)
	}
	h := hosttest.NewQuiet(root)
	return multipath.New(h, multipath.Options{}), root
}

// BenchmarkMapLookup500 times finding one map among 500 (1,000 paths): from
// a path's holders (connect and disconnect), by WWID through the udev link,
// and by WWID without it (hosts without udev: the only look-up that reads
// every dm device's uuid, so it grows with the number of maps).
func BenchmarkMapLookup500(b *testing.B) {
	m, root := benchFixture(b)
	const i = benchMaps / 2
	want := benchWWID(i)
	check := func(b *testing.B, mp *multipath.Map, err error) {
		if err != nil || mp.WWID != want || len(mp.Paths) != 2 {
			b.Fatal(mp, err)
		}
	}
	b.Run("Map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			mp, err := m.Maps().Map(fmt.Sprintf("dm-%d", i))
			check(b, mp, err)
		}
	})
	b.Run("MapOf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			mp, err := m.Maps().MapOf(fmt.Sprintf("sdx%d", 2*i+1))
			check(b, mp, err)
		}
	})
	b.Run("MapByWWID", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			mp, err := m.Maps().MapByWWID(want)
			check(b, mp, err)
		}
	})
	// A host where udev made no by-id links.
	if err := os.RemoveAll(filepath.Join(root, "dev/disk")); err != nil {
		b.Fatal(err)
	}
	b.Run("MapByWWIDNoUdev", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			mp, err := m.Maps().MapByWWID(want)
			check(b, mp, err)
		}
	})
}
