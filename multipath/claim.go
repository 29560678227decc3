package multipath

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/brick-storage/brick/ident"
)

// Claimed returns the multipath map that multipathd has built, or is about
// to build, over disks brick attached over a single path; nil when nothing
// holds them. multipathd takes such a disk when its configuration says so
// (find_multipaths greedy, or the WWID in its wwids file, which tgt's reuse
// of target numbers makes a later volume share), and the disk is then
// busy for mkfs and mount: the map is the volume's device. udev's multipath
// rules tell whether multipathd will take a disk; then Claimed waits for
// the map (Options.MapTimeout) and, when writable, for it to be
// read-write. Any other holder (LVM auto-activating a volume group found
// on the volume, md, dm-crypt) is only warned about: the disk is handed
// out as before, as a user recovering such a volume's data expects.
func (m *Multipath) Claimed(ctx context.Context, wwid string, writable bool, disks ...string) (*Map, error) {
	disks = trimDev(disks)
	for _, d := range disks {
		if !ident.DiskName(d) {
			return nil, fmt.Errorf("multipath claim of %q: not a disk name", d)
		}
	}
	mp, err := claimer{m}.claimedMap(ctx, wwid, disks)
	if err != nil || mp == nil {
		return nil, err
	}
	if writable {
		if err := m.WaitReadWrite(ctx, mp); err != nil {
			return nil, err
		}
	}
	m.log.Warn(fmt.Sprintf("multipath: multipathd took %s into map %s (%s); using the map as the volume's device, detach flushes it "+
		"(multipathd claims WWID %s: find_multipaths greedy in multipath.conf, or the WWID is in /etc/multipath/wwids)",
		strings.Join(disks, ", "), mp.Name, mp.DevPath(), ident.Clip(mp.WWID, 80)))
	return mp, nil
}

// claimer finds what took a disk brick attached over a single path.
type claimer struct {
	m *Multipath
}

// claimedMap waits for the map when udev says multipathd takes a disk, then
// judges what holds the disks.
func (c claimer) claimedMap(ctx context.Context, wwid string, disks []string) (*Map, error) {
	if ident.WWID(wwid) && c.m.mpd.Running() && c.mayClaim(wwid) && c.udevClaims(ctx, disks) {
		mp, err := c.m.WaitForMap(ctx, wwid, disks...)
		if err != nil {
			return nil, fmt.Errorf("udev marked %s a multipath path, but: %w (see multipathd's log, or blacklist the WWID in multipath.conf)", strings.Join(disks, ", "), err)
		}
		return mp, nil
	}
	for _, d := range disks {
		mp, err := c.holderMap(d)
		if err != nil || mp != nil {
			return mp, err
		}
	}
	return nil, nil
}

// mayClaim reports whether multipathd's configuration lets it take a lone
// path of wwid: the WWID in its wwids file, or find_multipaths greedy (or
// no, which claimed every disk before multipath-tools 0.8) in
// multipath.conf or its conf.d. Only then is udev's verdict worth waiting
// for: udev's rules take seconds on a new disk under load.
func (c claimer) mayClaim(wwid string) bool {
	if c.m.wwids.Known(wwid) {
		return true
	}
	confs, _ := c.m.fs.Glob(multipathConfDir + "/*.conf")
	for _, conf := range append([]string{multipathConf}, confs...) {
		data, err := c.m.fs.ReadFile(conf)
		if err == nil && claimsEveryPath(string(data)) {
			return true
		}
	}
	return false
}

// multipath-tools' configuration file and directory (their defaults).
const (
	multipathConf    = "/etc/multipath.conf"
	multipathConfDir = "/etc/multipath/conf.d"
)

// claimsEveryPath reports whether a multipath.conf text sets
// find_multipaths to greedy or no, ignoring comments, quotes and braces.
func claimsEveryPath(conf string) bool {
	blank := strings.NewReplacer("{", " ", "}", " ", `"`, " ")
	for _, line := range strings.Split(conf, "\n") {
		line, _, _ = strings.Cut(line, "#")
		line, _, _ = strings.Cut(line, "!")
		words := strings.Fields(blank.Replace(line))
		for i := 0; i+1 < len(words); i++ {
			if words[i] == "find_multipaths" && (words[i+1] == "greedy" || words[i+1] == "no") {
				return true
			}
		}
	}
	return false
}

// udevClaims reports whether udev's multipath rules marked one of the
// disks a path multipathd builds a map on, once udev has processed them.
func (c claimer) udevClaims(ctx context.Context, disks []string) bool {
	for _, d := range disks {
		if err := c.m.WaitUdevDone(ctx, d); err != nil {
			c.m.log.Debug("multipath: udev has not processed the disk", "disk", d, "err", err.Error())
			continue
		}
		devNum, err := c.m.fs.ReadString("/sys/block/" + d + "/dev")
		if err != nil {
			continue
		}
		db, err := c.m.fs.ReadChecked("/run/udev/data/b"+devNum, true, 64<<10, regularFile)
		if err == nil && udevClaimsPath(string(db)) {
			return true
		}
	}
	return false
}

func regularFile(fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", fi.Name())
	}
	return nil
}

// udevClaimsPath reports whether a udev database entry (/run/udev/data/b<maj>:<min>)
// marks the disk a path multipathd builds a map on: DM_MULTIPATH_DEVICE_PATH=1,
// and no find_multipaths smart wait for a second path under way
// (FIND_MULTIPATHS_WAIT_UNTIL set and not 0), after which multipathd lets a
// lone path go.
func udevClaimsPath(db string) bool {
	var path, waitUntil string
	sc := bufio.NewScanner(strings.NewReader(db))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "E:DM_MULTIPATH_DEVICE_PATH="); ok {
			path = v
		} else if v, ok := strings.CutPrefix(sc.Text(), "E:FIND_MULTIPATHS_WAIT_UNTIL="); ok {
			waitUntil = v
		}
	}
	return path == "1" && (waitUntil == "" || waitUntil == "0")
}

// holderMap returns the multipath map holding the disk, nil when nothing
// or something else holds it; another holder is warned about, naming it
// and the fix for a mkfs or mount that will find the disk busy.
func (c claimer) holderMap(disk string) (*Map, error) {
	entries, err := c.m.fs.ReadDir("/sys/block/" + disk + "/holders")
	if err != nil || len(entries) == 0 {
		return nil, nil
	}
	var others []string
	for _, e := range entries {
		name := e.Name()
		if !ident.DMName(name) {
			others = append(others, describeOther(name))
			continue
		}
		if mp, err := c.m.maps.Map(name); err == nil {
			return mp, nil
		}
		others = append(others, c.describeDM(name))
	}
	c.m.log.Warn(fmt.Sprintf("multipath: /dev/%s is held by %s, not a multipath map; brick hands out the disk, which that device uses: "+
		"mkfs and mount will find it busy (stop it: vgchange -an, cryptsetup close, mdadm --stop; or keep it off such disks: lvm.conf global_filter, mdadm.conf)",
		disk, strings.Join(others, ", ")))
	return nil, nil
}

// describeDM names a device-mapper device and what made it, from its dm uuid.
func (c claimer) describeDM(dm string) string {
	d, err := c.m.maps.DM(dm)
	if err != nil {
		return dm
	}
	kind := "device-mapper device"
	switch {
	case strings.HasPrefix(d.UUID, "LVM-"):
		kind = "LVM logical volume"
	case d.Crypt():
		kind = "dm-crypt mapping"
	}
	return fmt.Sprintf("%s (%s %s)", dm, kind, ident.Clip(d.DMName, 80))
}

// describeOther names a holder that is no device-mapper device.
func describeOther(name string) string {
	name = ident.Clip(name, 40)
	if strings.HasPrefix(name, "md") {
		return name + " (md RAID array)"
	}
	return name
}

// trimDev returns the disk names without a leading /dev/, in a new slice.
func trimDev(disks []string) []string {
	out := make([]string, len(disks))
	for i, d := range disks {
		out[i] = strings.TrimPrefix(d, "/dev/")
	}
	return out
}
