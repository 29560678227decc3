package dockerplugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
)

// stateVersion is the schema of the state file; a newer one is refused.
const stateVersion = 1

// maxStateSize bounds the state file brick reads back.
const maxStateSize = 16 << 20

// Volume is what the plugin keeps about one Docker volume.
type Volume struct {
	Name     string `json:"name"`
	VolumeID string `json:"volume_id"`
	// Created is true when the plugin created the Cinder volume (and so
	// deletes it on Remove); false for an adopted one.
	Created bool   `json:"created"`
	FS      string `json:"fs"`
	// Mounts are the IDs Docker passed to Mount (one per container) and
	// not yet to Unmount: the volume stays attached while any is left.
	Mounts    []string  `json:"mounts,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

type stateFile struct {
	Version int       `json:"version"`
	Volumes []*Volume `json:"volumes"`
}

// store keeps the plugin's volumes in one JSON file (0600 in a 0700
// directory), rewritten atomically on every change.
type store struct {
	fs   host.FS
	path string
}

func (s store) load() (map[string]*Volume, error) {
	out := map[string]*Volume{}
	data, err := s.fs.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read docker plugin state: %w", err)
	}
	if len(data) > maxStateSize {
		return nil, fmt.Errorf("docker plugin state %s: larger than %d bytes", s.path, maxStateSize)
	}
	var f stateFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("docker plugin state %s: %w", s.path, err)
	}
	if f.Version > stateVersion {
		return nil, fmt.Errorf("docker plugin state %s: version %d is newer than this brick (%d)", s.path, f.Version, stateVersion)
	}
	for _, v := range f.Volumes {
		if v == nil || checkName(v.Name) != nil || !ident.IsUUID(v.VolumeID) || out[v.Name] != nil {
			return nil, fmt.Errorf("docker plugin state %s: bad or repeated volume entry", s.path)
		}
		out[v.Name] = v
	}
	return out, nil
}

func (s store) save(vols map[string]*Volume) error {
	f := stateFile{Version: stateVersion}
	for _, name := range sortedNames(vols) {
		f.Volumes = append(f.Volumes, vols[name])
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encode docker plugin state: %w", err)
	}
	if err := s.fs.PrivateDir(filepath.Dir(s.path), true); err != nil {
		return fmt.Errorf("save docker plugin state: %w", err)
	}
	if err := s.fs.WriteFileAtomic(s.path, append(data, '\n')); err != nil {
		return fmt.Errorf("save docker plugin state: %w", err)
	}
	return nil
}

func sortedNames(vols map[string]*Volume) []string {
	names := make([]string, 0, len(vols))
	for n := range vols {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
