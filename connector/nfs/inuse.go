package nfs

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Finding who uses a volume file or a share.
//
// brick scans /proc/PID/{fd/*,cwd,root} itself instead of running
// `fuser -m`: readlink on /proc never talks to the NFS server, so a dead
// server cannot hang the check (fuser stats the mount, and a hard mount
// blocks); it needs no psmisc on the host; and it runs on a fixture tree
// in tests. What it cannot see is covered elsewhere: a loop device over a
// file is found through /sys/block/loop*/loop/backing_file, and umount
// itself refuses (EBUSY) anything else the kernel still holds, such as a
// mapping without an open descriptor.

// users returns "PID (comm)" for each process holding one of paths open,
// or any file under dir when dir is not empty, plus "/dev/loopN" for each
// loop device backed by such a file other than the ones in skipLoops.
// Paths are compared both as host paths and as paths under brick's root.
// An unreadable /proc is an error: brick cannot tell, so it does not guess.
func (c *Connector) users(paths []string, dir string, skipLoops []string) ([]string, error) {
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
		want[c.h.FS.Path(p)] = true
	}
	var dirs []string
	if dir != "" {
		dirs = []string{dir, c.h.FS.Path(dir)}
	}
	match := func(target string) bool {
		target = strings.TrimSuffix(target, " (deleted)")
		if want[target] {
			return true
		}
		for _, d := range dirs {
			if target == d || strings.HasPrefix(target, d+"/") {
				return true
			}
		}
		return false
	}

	// brick itself may have inherited a descriptor from its caller (a
	// shell's "exec 9<>file"); the caller is listed, brick is not.
	self, _ := c.h.FS.Readlink("/proc/self")
	var found []string
	procs, err := c.h.FS.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	for _, p := range procs {
		pid := p.Name()
		if _, err := strconv.Atoi(pid); err != nil || pid == self {
			continue
		}
		if holds(c, pid, match) {
			comm, _ := c.h.FS.ReadString("/proc/" + pid + "/comm")
			found = append(found, fmt.Sprintf("%s (%s)", pid, comm))
		}
	}

	skip := map[string]bool{}
	for _, l := range skipLoops {
		skip[l] = true
	}
	loops, _ := c.h.FS.Glob("/sys/block/loop*/loop/backing_file")
	for _, bf := range loops {
		dev := "/dev/" + filepath.Base(filepath.Dir(filepath.Dir(bf)))
		if skip[dev] {
			continue
		}
		if backing, err := c.h.FS.ReadString(bf); err == nil && match(backing) {
			found = append(found, dev)
		}
	}
	sort.Strings(found)
	return found, nil
}

// holds reports whether process pid has an open file, cwd or root matching.
func holds(c *Connector, pid string, match func(string) bool) bool {
	base := "/proc/" + pid
	for _, l := range []string{"cwd", "root"} {
		if t, err := c.h.FS.Readlink(base + "/" + l); err == nil && t != "/" && match(t) {
			return true
		}
	}
	fds, err := c.h.FS.ReadDir(base + "/fd")
	if err != nil {
		return false // gone, or not ours to read
	}
	for _, fd := range fds {
		if t, err := c.h.FS.Readlink(base + "/fd/" + fd.Name()); err == nil && match(t) {
			return true
		}
	}
	return false
}
