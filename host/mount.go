package host

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Mount is one line of /proc/self/mountinfo.
type Mount struct {
	MajorMinor string // "8:16" of the mounted filesystem's device
	Root       string
	MountPoint string
	FSType     string
	Source     string
	Options    string
}

// Mounts lists the mounts visible to brick (through the root, so a
// container reading the host's mount table sees the host's mounts).
func (s System) Mounts() ([]Mount, error) {
	data, err := s.fs.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mount table: %w", err)
	}
	return ParseMountInfo(data)
}

// IsMounted reports whether something is mounted on dir.
func (s System) IsMounted(dir string) (bool, error) {
	mounts, err := s.Mounts()
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(mounts, func(m Mount) bool { return m.MountPoint == dir }), nil
}

// ParseMountInfo parses the mountinfo format described in proc(5).
func ParseMountInfo(data []byte) ([]Mount, error) {
	var mounts []Mount
	line := 0
	// The table is in memory already: lines are cut from one copy of it
	// (a scanner's buffer would cost get-connector 16 pages to zero).
	for text := range strings.Lines(string(data)) {
		line++
		text = strings.TrimSuffix(strings.TrimSuffix(text, "\n"), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		pre, post, ok := strings.Cut(text, " - ")
		if !ok {
			return nil, fmt.Errorf("mountinfo line %d: no separator", line)
		}
		a := strings.Fields(pre)
		b := strings.Fields(post)
		if len(a) < 6 || len(b) < 2 {
			return nil, fmt.Errorf("mountinfo line %d: too few fields", line)
		}
		m := Mount{MajorMinor: a[2], Root: unescapeMount(a[3]), MountPoint: unescapeMount(a[4]), FSType: b[0], Source: unescapeMount(b[1])}
		if len(b) > 2 {
			m.Options = b[2]
		}
		mounts = append(mounts, m)
	}
	return mounts, nil
}

// unescapeMount decodes the octal escapes (\040 for space) the kernel writes.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
