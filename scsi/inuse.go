package scsi

import (
	"fmt"
	"strings"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
)

// CheckNotInUse refuses a device (a disk "sdb" or a map "dm-3") that is
// mounted, has something stacked on it (LVM, a map, a partition's holder)
// or is held open exclusively, checking its partitions too. It returns an
// error wrapping host.ErrDeviceBusy that says what holds it. Devices that
// are already gone are not in use.
func (s *SCSI) CheckNotInUse(devs ...string) error {
	mounts, err := s.sys.Mounts()
	if err != nil {
		return err
	}
	for _, d := range devs {
		if !ident.DiskName(d) && !ident.DMName(d) {
			return fmt.Errorf("check %q in use: not a disk name", d)
		}
		for _, name := range append([]string{d}, s.partitions(d)...) {
			base := "/sys/block/" + d + "/"
			if name != d {
				base += name + "/"
			}
			majmin, err := s.fs.ReadString(base + "dev")
			if err != nil {
				continue
			}
			for _, m := range mounts {
				if m.MajorMinor == majmin {
					return fmt.Errorf("%s is mounted on %s: %w", DevPath(name), m.MountPoint, host.ErrDeviceBusy)
				}
			}
			if holders := s.holdersAt(base); len(holders) > 0 {
				return fmt.Errorf("%s is held by %s: %w", DevPath(name), strings.Join(holders, ", "), host.ErrDeviceBusy)
			}
		}
		if err := s.block.CheckNotInUse(DevPath(d)); err != nil {
			return err
		}
	}
	return nil
}

// partitions lists a disk's partitions ("sdb1").
func (s *SCSI) partitions(disk string) []string {
	entries, err := s.fs.ReadDir("/sys/block/" + disk)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), disk) && s.fs.Exists("/sys/block/"+disk+"/"+e.Name()+"/partition") {
			out = append(out, e.Name())
		}
	}
	return out
}

// holdersAt lists the holders directory under a disk's or partition's
// sysfs directory.
func (s *SCSI) holdersAt(base string) []string {
	entries, err := s.fs.ReadDir(base + "holders")
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
