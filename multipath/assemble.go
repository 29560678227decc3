package multipath

import (
	"context"
	"fmt"
	"strings"

	"github.com/brick-storage/brick/ident"
)

// WWIDKnown reports whether multipath's wwids file lists the WWID already,
// which saves a multipath run (about a second on a small host).
func (m *Multipath) WWIDKnown(wwid string) bool {
	data, err := m.fs.ReadFile("/etc/multipath/wwids")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "/"+wwid+"/" {
			return true
		}
	}
	return false
}

// Assemble returns the map over disks (all showing wwid), making multipathd
// build it: the WWID goes into the wwids file, so find_multipaths strict or
// on accepts even a single path, then each path not yet in a map is handed
// to multipathd, whose udev event may have come and gone before the WWID
// was known. Bounded by Options.MapTimeout.
func (m *Multipath) Assemble(ctx context.Context, wwid string, disks ...string) (*Map, error) {
	if !ident.WWID(wwid) {
		return nil, fmt.Errorf("multipath: WWID %q is not usable", wwid)
	}
	if mp, err := m.MapOf(disks...); err == nil && mp.WWID == wwid && len(mp.Paths) >= len(disks) {
		return mp, nil
	}
	if !m.WWIDKnown(wwid) {
		if err := m.AddWWID(ctx, wwid); err != nil {
			return nil, err
		}
	}
	for _, d := range disks {
		d = strings.TrimPrefix(d, "/dev/")
		if entries, err := m.fs.ReadDir("/sys/block/" + d + "/holders"); err == nil && len(entries) > 0 {
			continue
		}
		if err := m.AddPath(ctx, d); err != nil {
			m.log.Debug("multipathd add path", "disk", d, "err", err.Error())
		}
	}
	return m.WaitForMap(ctx, wwid, disks...)
}
