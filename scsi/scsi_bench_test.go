package scsi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/scsi"
)

// Benchmark fixture: benchHosts SCSI hosts (one iSCSI session each) with
// benchLUNs LUNs each, 1,000 disks in all, laid out as the kernel shows them.
const (
	benchHosts = 10
	benchLUNs  = 100
)

// BenchDiskName names the i-th disk as the kernel does: sda..sdz, sdaa..sdzz, sdaaa...
func benchDiskName(i int) string {
	var b []byte
	for i++; i > 0; i = (i - 1) / 26 {
		b = append([]byte{byte('a' + (i-1)%26)}, b...)
	}
	return "sd" + string(b)
}

// benchFixture builds the 1,000-disk tree in b.TempDir() and returns a
// SCSI over it that logs nothing (a benchmark measures the walk, not slog).
func benchFixture(b *testing.B) (*scsi.SCSI, string) {
	b.Helper()
	root := b.TempDir()
	var mounts strings.Builder
	mounts.WriteString("22 1 0:21 / / rw - ext4 /dev/vda1 rw\n")
	i := 0
	for h := 1; h <= benchHosts; h++ {
		for lun := 0; lun < benchLUNs; lun++ {
			name := benchDiskName(i)
			hctl := fmt.Sprintf("%d:0:0:%d", h, lun)
			tgt := fmt.Sprintf("/sys/devices/platform/host%d/session%d/target%d:0:0", h, h, h)
			dev := tgt + "/" + hctl
			blk := dev + "/block/" + name
			hosttest.Mkdir(b, root, blk+"/holders")
			hosttest.WriteFile(b, root, blk+"/size", "2048\n")
			hosttest.WriteFile(b, root, blk+"/ro", "0\n")
			hosttest.WriteFile(b, root, blk+"/dev", fmt.Sprintf("%d:%d\n", 8+i/16, (i%16)*16))
			hosttest.WriteFile(b, root, dev+"/delete", "")
			hosttest.WriteFile(b, root, dev+"/wwid", fmt.Sprintf("naa.60000000000000000e000000%08x\n", i))
			hosttest.Symlink(b, root, "/sys/class/scsi_device/"+hctl+"/device", "../../.."+strings.TrimPrefix(dev, "/sys"))
			hosttest.Symlink(b, root, "/sys/block/"+name, ".."+strings.TrimPrefix(blk, "/sys"))
			hosttest.Symlink(b, root, blk+"/device", "../../../"+hctl)
			hosttest.WriteFile(b, root, "/dev/"+name, "")
			if i%20 == 0 { // some of the others are mounted
				fmt.Fprintf(&mounts, "%d 22 %d:%d / /mnt/%s rw - ext4 /dev/%s rw\n", 100+i, 8+i/16, (i%16)*16, name, name)
			}
			i++
		}
	}
	hosttest.WriteFile(b, root, "/proc/self/mountinfo", mounts.String())
	h := hosttest.NewQuiet(root)
	return scsi.New(h, scsi.Options{}), root
}

// BenchmarkSysfs1000 times the sysfs look-ups connect and disconnect make
// for one LUN while 999 other SCSI disks exist: each must stay targeted
// (cost independent of the other disks), never a walk of the whole host.
func BenchmarkSysfs1000(b *testing.B) {
	s, _ := benchFixture(b)
	mid := scsi.HCTL{Host: 5, Channel: 0, Target: 0, LUN: 50}
	want := benchDiskName(4*benchLUNs + 50)
	b.Run("Find", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if names, err := s.Find(mid); err != nil || len(names) != 1 || names[0] != want {
				b.Fatal(names, err)
			}
		}
	})
	b.Run("FindWildcard", func(b *testing.B) {
		a := scsi.HCTL{Host: 5, Channel: scsi.Wildcard, Target: scsi.Wildcard, LUN: 50}
		b.ReportAllocs()
		for b.Loop() {
			if names, err := s.Find(a); err != nil || len(names) != 1 {
				b.Fatal(names, err)
			}
		}
	})
	b.Run("HCTLOf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if a, err := s.HCTLOf(want); err != nil || a != mid {
				b.Fatal(a, err)
			}
		}
	})
	b.Run("WWID", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.WWID(want); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Holders", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Holders(want); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("CheckNotInUse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.CheckNotInUse(want); err != nil {
				b.Fatal(err)
			}
		}
	})
}
