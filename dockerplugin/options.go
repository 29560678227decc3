package dockerplugin

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
)

// Limits of Create's input.
const (
	// MaxNameLen bounds a Docker volume name (Cinder allows 255).
	MaxNameLen = 128
	// DefaultMaxSizeGiB refuses sizes no real request needs; Plugin.MaxSizeGiB overrides it.
	DefaultMaxSizeGiB = 16384
	maxOptionLen      = 255
)

// Option keys of `docker volume create -o KEY=VALUE`.
const (
	OptSize   = "size"
	OptType   = "type"
	OptZone   = "availability_zone"
	OptFS     = "fs"
	OptVolume = "volume"
)

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`) })

// checkName accepts the names Docker gives its own local volumes: a
// letter or digit, then letters, digits, _ . -. The name is never a path
// (mounts live under the Cinder volume's ID) but Docker passes `../x`
// through, so refuse it plainly.
func checkName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("volume name is empty")
	case len(name) > MaxNameLen:
		return fmt.Errorf("volume name is longer than %d bytes", MaxNameLen)
	case !nameRE().MatchString(name):
		return fmt.Errorf("volume name %s: use letters, digits, _ . - and start with a letter or digit", connector.Quote(name))
	}
	return nil
}

// createOpts is Create's options, checked.
type createOpts struct {
	SizeGiB int
	Type    string
	Zone    string
	FS      string
	// Adopt is a Cinder volume name or ID to take over instead of creating one.
	Adopt string
}

// parseOpts checks every option; an unknown key is an error naming the
// keys allowed, so a typo does not silently create a default volume.
func parseOpts(opts map[string]string, defaultSize, maxSize int) (createOpts, error) {
	o := createOpts{FS: "ext4"}
	for _, k := range sortedKeys(opts) {
		v := opts[k]
		if len(v) > maxOptionLen || strings.ContainsFunc(v, ident.IsControl) {
			return o, fmt.Errorf("option %s: value longer than %d bytes or with control characters", connector.Quote(k), maxOptionLen)
		}
		switch k {
		case OptSize:
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSuffix(v, "G"), "GiB"))
			if err != nil || n < 1 || n > maxSize {
				return o, fmt.Errorf("option size=%s: want a whole number of GiB from 1 to %d", connector.Quote(v), maxSize)
			}
			o.SizeGiB = n
		case OptType:
			o.Type = v
		case OptZone:
			o.Zone = v
		case OptFS:
			if v != "ext4" && v != "xfs" {
				return o, fmt.Errorf("option fs=%s: want ext4 or xfs", connector.Quote(v))
			}
			o.FS = v
		case OptVolume:
			if v == "" {
				return o, fmt.Errorf("option volume=: name a Cinder volume (name or ID) to adopt")
			}
			o.Adopt = v
		default:
			return o, fmt.Errorf("unknown option %s: brick takes %s", connector.Quote(k), strings.Join([]string{OptSize, OptType, OptZone, OptFS, OptVolume}, ", "))
		}
	}
	if o.Adopt != "" && (o.SizeGiB != 0 || o.Type != "" || o.Zone != "") {
		return o, fmt.Errorf("option volume= adopts an existing Cinder volume: size, type and availability_zone do not apply")
	}
	if o.Adopt == "" && o.SizeGiB == 0 {
		o.SizeGiB = defaultSize
	}
	return o, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
