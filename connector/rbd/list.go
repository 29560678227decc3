package rbd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"sync"

	"github.com/brick-storage/brick/ident"
)

// Mapping is one mapped image as `rbd device list --format json` reports it.
type Mapping struct {
	ID        string // krbd device id, or the rbd-nbd process id
	Pool      string
	Namespace string
	Image     string
	Snap      string // "" or "-" for the image itself
	Device    string // /dev/rbd0, /dev/nbd1
}

// Spec is the mapped image as rbd names it: pool[/namespace]/image[@snap].
func (m Mapping) Spec() string {
	s := Volume{Pool: m.Pool, Namespace: m.Namespace, Image: m.Image}.Spec()
	if !m.IsImage() {
		s += "@" + m.Snap
	}
	return s
}

// IsImage reports whether the mapping is the image itself, not a snapshot.
func (m Mapping) IsImage() bool { return m.Snap == "" || m.Snap == "-" }

// Matches reports whether m maps v's image: pool, namespace AND image must
// agree (os-brick compares the image name only, which picks the wrong
// device when two pools hold images of the same name).
func (m Mapping) Matches(v Volume) bool {
	return m.IsImage() && m.Pool == v.Pool && m.Namespace == v.Namespace && m.Image == v.Image
}

// maxListOutput bounds what ParseDeviceList accepts; a host with thousands
// of mappings stays far below it.
const maxListOutput = 4 << 20

var devicePathRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/dev/(rbd|nbd)[0-9]{1,6}$`) })

// ParseDeviceList parses `rbd device list --format json` for krbd (image
// under "name") and nbd (rbd-nbd list-mapped, image under "image"), in the
// list form Ceph prints since Mimic and the older object keyed by id.
// Entries whose device path is not /dev/rbdN or /dev/nbdN are rejected:
// the path is later opened and passed to unmap.
func ParseDeviceList(out []byte) ([]Mapping, error) {
	if len(out) > maxListOutput {
		return nil, fmt.Errorf("rbd device list: output larger than %d bytes", maxListOutput)
	}
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return nil, nil // some versions print nothing when nothing is mapped
	}
	type entry struct {
		ID        json.RawMessage `json:"id"`
		Pool      string          `json:"pool"`
		Namespace string          `json:"namespace"`
		Name      string          `json:"name"`
		Image     string          `json:"image"`
		Snap      string          `json:"snap"`
		Device    string          `json:"device"`
	}
	var list []entry
	if out[0] == '{' {
		var byID map[string]entry
		if err := json.Unmarshal(out, &byID); err != nil {
			return nil, fmt.Errorf("rbd device list: %w", err)
		}
		ids := make([]string, 0, len(byID))
		for id := range byID {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			e := byID[id]
			if len(e.ID) == 0 {
				e.ID, _ = json.Marshal(id)
			}
			list = append(list, e)
		}
	} else if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("rbd device list: %w", err)
	}
	mappings := make([]Mapping, 0, len(list))
	for i, e := range list {
		image := e.Name
		if image == "" {
			image = e.Image
		}
		if !devicePathRE().MatchString(e.Device) {
			return nil, fmt.Errorf("rbd device list: entry %d: unexpected device %q", i, ident.Clip(e.Device, 64))
		}
		mappings = append(mappings, Mapping{
			ID: rawID(e.ID), Pool: e.Pool, Namespace: e.Namespace, Image: image, Snap: e.Snap, Device: e.Device,
		})
	}
	return mappings, nil
}

// rawID renders a JSON id that may be a string or a number.
func rawID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}
