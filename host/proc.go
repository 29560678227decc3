package host

import (
	"strconv"
	"strings"
)

// ProcessRunning reports whether a process whose command name (as in
// /proc/PID/comm) is name runs on the host. It reads /proc and runs nothing,
// so get-connector stays cheap and needs no tools.
func (s System) ProcessRunning(name string) bool {
	entries, err := s.fs.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		comm, err := s.fs.ReadFile("/proc/" + e.Name() + "/comm")
		if err != nil {
			continue
		}
		if strings.TrimSpace(string(comm)) == name {
			return true
		}
	}
	return false
}
