package nvmeof

import (
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/brick-storage/brick/connector"
)

// maxReplicas bounds the legs of a replicated volume.
const maxReplicas = 8

// Request is validated nvmeof connection info: the one decision Connect,
// Disconnect, Extend, DevicePaths and the dry run all start from.
type Request struct {
	// Legs are the targets: one for a plain volume, each replica's for a
	// replicated one (volume_replicas).
	Legs []Volume
	// Replicated is true for volume_replicas info (KIOXIA KumoScale).
	Replicated bool
	// Alias names the md array of a replicated volume (/dev/md/<alias>).
	Alias string
	// Count is replica_count (else the number of legs): above one the
	// legs are mirrored by an md RAID1.
	Count    int
	ReadOnly bool
}

// Mirrored reports whether the volume is an md RAID1 over its legs.
func (r Request) Mirrored() bool { return r.Replicated && r.Count > 1 }

// ParseRequest validates nvmeof connection info in any of its shapes:
// the old format, the new one, or replicas (volume_replicas, replica_count,
// alias), each replica a new-format target.
func ParseRequest(ci connector.ConnectionInfo) (Request, error) {
	if !ci.Has("volume_replicas") {
		v, err := ParseVolume(ci)
		return Request{Legs: []Volume{v}, Count: 1, ReadOnly: v.ReadOnly}, err
	}
	if ci.DriverVolumeType != Protocol {
		return Request{}, connector.Invalid("driver_volume_type", "must be %s, got %s", Protocol, connector.Quote(ci.DriverVolumeType))
	}
	raw, ok := ci.Data["volume_replicas"].([]any)
	if !ok || len(raw) == 0 || len(raw) > maxReplicas {
		return Request{}, connector.Invalid("volume_replicas", "must be a list of 1 to %d targets", maxReplicas)
	}
	r := Request{Replicated: true, Count: len(raw)}
	for i, e := range raw {
		leg, err := parseReplica(ci, i, e)
		if err != nil {
			return Request{}, err
		}
		r.Legs = append(r.Legs, leg)
	}
	if n, ok, err := ci.Int("replica_count"); err != nil {
		return Request{}, err
	} else if ok && n != 0 {
		if n < 1 || n > maxReplicas {
			return Request{}, connector.Invalid("replica_count", "must be 1-%d, got %d", maxReplicas, n)
		}
		r.Count = int(n)
	}
	alias, err := ci.RequiredString("alias")
	if err != nil {
		return Request{}, err
	}
	if !aliasRE().MatchString(alias) {
		return Request{}, connector.Invalid("alias", "must be 1-32 letters, digits, '.', '_' or '-' (not first), got %s", connector.Quote(alias))
	}
	r.Alias = alias
	if r.ReadOnly, err = ci.ReadOnly(); err != nil {
		return Request{}, err
	}
	return r, nil
}

// aliasRE: the md array's name, a file name under /dev/md and an mdadm
// argument; mdadm keeps 32 bytes of it.
var aliasRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,31}$`) })

// parseReplica reads volume_replicas[i], a new-format target, naming its
// keys as volume_replicas[i].key in errors.
func parseReplica(ci connector.ConnectionInfo, i int, e any) (Volume, error) {
	prefix := fmt.Sprintf("volume_replicas[%d]", i)
	m, ok := e.(map[string]any)
	if !ok {
		return Volume{}, connector.Invalid(prefix, "must be an object with target_nqn, portals and vol_uuid")
	}
	data := map[string]any{}
	for _, k := range []string{"target_nqn", "portals", "vol_uuid", "volume_nguid", "ns_id", "host_nqn"} {
		if val, ok := m[k]; ok {
			data[k] = val
		}
	}
	if _, ok := data["target_nqn"]; !ok {
		return Volume{}, connector.Invalid(prefix+".target_nqn", "missing")
	}
	v, err := ParseVolume(connector.ConnectionInfo{DriverVolumeType: Protocol, Data: data})
	var inv *connector.InvalidError
	if errors.As(err, &inv) {
		return Volume{}, connector.Invalid(prefix+"."+inv.Key, "%s", inv.Reason)
	}
	if err == nil && !v.hasID() {
		return Volume{}, connector.Invalid(prefix+".vol_uuid", "missing: a replica must name its namespace")
	}
	return v, err
}

func (c *Connector) parseRequest(info connector.ConnectionInfo) (Request, error) {
	r, err := ParseRequest(info)
	if err != nil {
		return r, fmt.Errorf("nvmeof: %w", err)
	}
	return r, nil
}
