package nvmeof

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// DefaultStateDir holds one record per subsystem brick connected: the
// namespaces attached through it, so a detach knows whether another
// volume still needs the controllers. A tmpfs: a reboot forgets the
// controllers and the records together.
const DefaultStateDir = "/run/brick/nvmeof"

// subsystemState is the record of one subsystem.
type subsystemState struct {
	NQN string `json:"nqn"`
	// Namespaces are the keys (nsKey) of the namespaces attached through
	// brick and not yet detached.
	Namespaces []string `json:"namespaces"`
}

func (c *Connector) statePath(nqn string) string {
	return path.Join(c.opts.StateDir, lockName(nqn)+".json")
}

// readState returns the subsystem's record; none is an empty one. Call it
// under the subsystem's lock.
func (c *Connector) readState(nqn string) (*subsystemState, error) {
	st := &subsystemState{NQN: nqn}
	data, err := c.h.FS.ReadFile(c.statePath(nqn))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err == nil {
		err = json.Unmarshal(data, st)
	}
	if err != nil || st.NQN != nqn {
		return nil, fmt.Errorf("read %s: %w (remove it if no volume of %s is attached)", c.statePath(nqn), errors.Join(err, errors.New("not this subsystem's record")), nqn)
	}
	return st, nil
}

// has reports whether key is recorded.
func (st *subsystemState) has(key string) bool {
	for _, k := range st.Namespaces {
		if k == key {
			return true
		}
	}
	return false
}

// record adds (add true) or removes key and saves the record; an empty
// record is removed.
func (c *Connector) record(nqn, key string, add bool) error {
	st, err := c.readState(nqn)
	if err != nil {
		return err
	}
	kept := st.Namespaces[:0]
	for _, k := range st.Namespaces {
		if k != key {
			kept = append(kept, k)
		}
	}
	if add {
		kept = append(kept, key)
	}
	sort.Strings(kept)
	st.Namespaces = kept
	if len(kept) == 0 {
		return c.h.FS.RemoveFileDurable(c.statePath(nqn))
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err == nil {
		err = c.h.FS.WriteFileAtomic(c.statePath(nqn), append(data, '\n'))
	}
	if err != nil {
		return fmt.Errorf("save %s: %w", c.statePath(nqn), err)
	}
	return nil
}

// nsKey names a namespace across re-connects: its UUID, else its NGUID,
// else its NSID.
func nsKey(id nsIDs) string {
	switch {
	case id.UUID != "" && strings.Trim(id.UUID, "0-") != "":
		return "uuid:" + id.UUID
	case id.NGUID != "" && id.NGUID != zeroNGUID:
		return "nguid:" + id.NGUID
	}
	return "nsid:" + id.NSID
}
