package nvmeof

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/brick-storage/brick/host"
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

// states keeps the subsystems' records in one directory.
type states struct {
	fs  host.FS
	dir string
}

func (s states) path(nqn string) string {
	return path.Join(s.dir, lockName(nqn)+".json")
}

// read returns the subsystem's record; none is an empty one. Call it
// under the subsystem's lock.
func (s states) read(nqn string) (*subsystemState, error) {
	st := &subsystemState{NQN: nqn}
	data, err := s.fs.ReadFile(s.path(nqn))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err == nil {
		err = json.Unmarshal(data, st)
	}
	if err != nil || st.NQN != nqn {
		return nil, fmt.Errorf("read %s: %w (remove it if no volume of %s is attached)", s.path(nqn), errors.Join(err, errors.New("not this subsystem's record")), nqn)
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
func (s states) record(nqn, key string, add bool) error {
	st, err := s.read(nqn)
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
		return s.fs.RemoveFileDurable(s.path(nqn))
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err == nil {
		err = s.fs.WriteFileAtomic(s.path(nqn), append(data, '\n'))
	}
	if err != nil {
		return fmt.Errorf("save %s: %w", s.path(nqn), err)
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
