package nfs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/brick-storage/brick/host"
)

// shareState is what brick remembers about one mounted share: which of its
// volume files brick has attached, so the share is unmounted only when the
// last of them detaches. It lives under Options.StateDir (a tmpfs, /run, by
// default: a reboot forgets the mounts and the state together). Written
// under the share's lock, to a temporary file renamed into place, so a
// crash leaves the old or the new record, never half of one.
type shareState struct {
	Export     string          `json:"export"`
	MountPoint string          `json:"mount_point"`
	Version    string          `json:"nfs_version,omitempty"`
	Users      map[string]user `json:"users"` // by volume file name
}

// user is one attached volume file on the share.
type user struct {
	// Loop is the loop device brick set up over the file, if any.
	Loop string `json:"loop_device,omitempty"`
}

// states keeps the shares' records in one directory.
type states struct {
	fs  host.FS
	dir string
}

func (s states) path(id string) string {
	return filepath.Join(s.dir, id+".json")
}

// read returns the share's record; none is an empty record.
func (s states) read(id string) (*shareState, error) {
	st := &shareState{Users: map[string]user{}}
	data, err := s.fs.ReadFile(s.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read nfs share state %s: %w", s.path(id), err)
	}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("read nfs share state %s: %w", s.path(id), err)
	}
	if st.Users == nil {
		st.Users = map[string]user{}
	}
	return st, nil
}

// write replaces the share's record atomically, or removes it when no
// user is left.
func (s states) write(id string, st *shareState) error {
	if len(st.Users) == 0 {
		return s.fs.RemoveFileDurable(s.path(id))
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := s.fs.WriteFileAtomic(s.path(id), append(data, '\n')); err != nil {
		return fmt.Errorf("save nfs share state: %w", err)
	}
	return nil
}

// userNames lists the attached files, sorted, for messages.
func (st *shareState) userNames() []string {
	out := make([]string, 0, len(st.Users))
	for n := range st.Users {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
