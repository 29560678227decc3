package iscsi

import (
	"fmt"
	"net/netip"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/scsi"
)

// Session is one iSCSI session as sysfs shows it. brick reads sessions from
// /sys/class/iscsi_session rather than parsing "iscsiadm -m session": no
// process to start, no output format to track across versions.
type Session struct {
	// ID is N of sessionN.
	ID int
	// Target is the target's name.
	Target string
	// Portal is the connection's persistent (configured) address and port,
	// the one the node record is filed under.
	Portal Portal
	// Host is the SCSI host number the session's LUNs appear under.
	Host int
	// State is the session state, "LOGGED_IN" when usable.
	State string
	// Iface is the open-iscsi interface the session logged in through:
	// IfaceTCP or IfaceISER.
	Iface string
}

var sessionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^session([0-9]{1,9})$`) })

// ListSessions returns the host's iSCSI sessions. None is not an error.
func ListSessions(fsys host.FS) ([]Session, error) {
	read := func(name string) (Session, bool) {
		// A session going away while being read is not an error.
		s, err := readSession(fsys, name, strings.TrimPrefix(name, "session"))
		return s, err == nil
	}
	sessions, err := host.ReadEntries(fsys, "/sys/class/iscsi_session", sessionRE().MatchString, read)
	if err != nil {
		return nil, fmt.Errorf("list iscsi sessions: %w", err)
	}
	return sessions, nil
}

func readSession(fsys host.FS, name, idStr string) (Session, error) {
	id, _ := strconv.Atoi(idStr)
	base := "/sys/class/iscsi_session/" + name
	s := Session{ID: id}
	var err error
	if s.Target, err = fsys.ReadString(base + "/targetname"); err != nil {
		return s, err
	}
	s.State, _ = fsys.ReadString(base + "/state")
	s.Iface = sessionIface(fsys, base)
	dev, err := fsys.EvalSymlinks(base + "/device")
	if err != nil {
		return s, err
	}
	// .../platform/host0/session1: the SCSI host is the parent.
	hostName := path.Base(path.Dir(dev))
	h, ok := strings.CutPrefix(hostName, "host")
	if !ok {
		return s, fmt.Errorf("session %s: unexpected device path %s", name, dev)
	}
	if s.Host, err = strconv.Atoi(h); err != nil {
		return s, fmt.Errorf("session %s: unexpected device path %s", name, dev)
	}
	conn := "/sys/class/iscsi_connection/connection" + idStr + ":0"
	addr, err := fsys.ReadString(conn + "/persistent_address")
	if err != nil {
		return s, err
	}
	portStr, err := fsys.ReadString(conn + "/persistent_port")
	if err != nil {
		return s, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return s, fmt.Errorf("session %s: port %q", name, portStr)
	}
	if a, err := netip.ParseAddr(addr); err == nil {
		addr = a.Unmap().String()
	}
	s.Portal = Portal{Host: addr, Port: port}
	return s, nil
}

// sessionIface reads the interface name iscsid gave the session. A
// session without one is told apart by its SCSI host's driver (ib_iser's
// "iscsi_iser"), so an iSER session is never logged out as a TCP one.
func sessionIface(fsys host.FS, base string) string {
	if name, err := fsys.ReadString(base + "/ifacename"); err == nil && name != "" {
		if name == IfaceISER {
			return IfaceISER
		}
		return IfaceTCP
	}
	if dev, err := fsys.EvalSymlinks(base + "/device"); err == nil {
		proc, _ := fsys.ReadString("/sys/class/scsi_host/" + path.Base(path.Dir(dev)) + "/proc_name")
		if strings.Contains(proc, "iser") {
			return IfaceISER
		}
	}
	return IfaceTCP
}

// targetAddress returns the session's SCSI channel and target once the
// kernel has created them (after the first scan), else Wildcard.
func targetAddress(fsys host.FS, s Session) (channel, target int) {
	matches, _ := fsys.Glob(fmt.Sprintf("/sys/class/iscsi_session/session%d/device/target%d:*:*", s.ID, s.Host))
	for _, m := range matches {
		parts := strings.Split(strings.TrimPrefix(path.Base(m), "target"), ":")
		if len(parts) != 3 {
			continue
		}
		c, err1 := strconv.Atoi(parts[1])
		t, err2 := strconv.Atoi(parts[2])
		if err1 == nil && err2 == nil {
			return c, t
		}
	}
	return scsi.Wildcard, scsi.Wildcard
}

// sessionDisks lists the block devices on a session, with their addresses;
// with luns, only those LUNs' devices: an array may export hundreds of LUNs
// on one session, and visiting each costs several system calls
// (BenchmarkDevicePaths1000).
func sessionDisks(fsys host.FS, s Session, luns ...int) (map[string]scsi.HCTL, error) {
	lunGlobs := []string{"*"}
	if len(luns) > 0 {
		lunGlobs = lunGlobs[:0]
		for _, l := range luns {
			lunGlobs = append(lunGlobs, strconv.Itoa(l))
		}
	}
	var matches []string
	for _, l := range lunGlobs {
		m, err := fsys.Glob(fmt.Sprintf("/sys/class/iscsi_session/session%d/device/target*/*:*:*:%s/block/*", s.ID, l))
		if err != nil {
			return nil, fmt.Errorf("devices of iscsi session %d: %w", s.ID, err)
		}
		matches = append(matches, m...)
	}
	out := map[string]scsi.HCTL{}
	for _, m := range matches {
		a, err := scsi.ParseHCTL(path.Base(path.Dir(path.Dir(m))))
		if err != nil {
			continue
		}
		// A disk being deleted leaves /sys/block first; it no longer counts.
		if _, err := fsys.Lstat("/sys/block/" + path.Base(m)); err != nil {
			continue
		}
		out[path.Base(m)] = a
	}
	return out, nil
}

// findSession returns the session to iqn at portal.
func findSession(sessions []Session, iqn string, p Portal) (Session, bool) {
	for _, s := range sessions {
		if s.Target == iqn && s.Portal == p {
			return s, true
		}
	}
	return Session{}, false
}
