package attach

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
)

// DefaultStateDir holds one record per locally attached volume.
const DefaultStateDir = "/var/lib/brick/volumes"

// recordVersion is the schema of Record; a newer one is refused.
const recordVersion = 1

// Phases of a record.
const (
	PhaseAttaching = "attaching" // local-attach under way (or crashed): cleanup undoes it
	PhaseAttached  = "attached"  // done
	PhaseDetaching = "detaching" // local-detach under way (or crashed): cleanup finishes it
)

// Record is what brick keeps about one locally attached volume: everything
// a detach or a crash cleanup needs, and no secret (the connection info is
// stored redacted; a disconnect needs no credential).
type Record struct {
	Version      int    `json:"version"`
	VolumeID     string `json:"volume_id"`
	VolumeName   string `json:"volume_name,omitempty"`
	Phase        string `json:"phase"`
	Step         string `json:"step"` // the step started last
	Flow         string `json:"flow"` // cinderapi.FlowV3 or FlowLegacy
	Microversion string `json:"microversion"`
	AttachmentID string `json:"attachment_id,omitempty"`
	// ExternalAttachment: AttachmentID was reserved by someone else
	// (AttachOptions.Attachment), who deletes it; brick never does.
	ExternalAttachment bool   `json:"external_attachment,omitempty"`
	HostName           string `json:"host_name"`
	Mode               string `json:"mode"`
	// Connector is what was sent to Cinder; terminate_connection needs the
	// same one.
	Connector      cinderapi.HostConnector   `json:"connector"`
	ConnectionInfo *connector.ConnectionInfo `json:"connection_info,omitempty"`
	Device         *connector.Device         `json:"device,omitempty"`
	Mountpoint     string                    `json:"mountpoint,omitempty"`
	// MountFSType and MountSuidDev are the mount's --mount-fstype and
	// --mount-suid-dev, so a restore mounts the same way.
	MountFSType  string `json:"mount_fstype,omitempty"`
	MountSuidDev bool   `json:"mount_suid_dev,omitempty"`
	// Mounted is true when brick mounted Mountpoint (and so unmounts it).
	Mounted bool `json:"mounted,omitempty"`
	// Formatted is the filesystem type brick created, if it did.
	Formatted string `json:"formatted,omitempty"`
	// SizeBytes is the device's size as the host saw it after the last
	// extend (0: not extended by brick).
	SizeBytes        int64     `json:"size_bytes,omitempty"`
	IronicNode       string    `json:"ironic_node,omitempty"`
	IronicTargetUUID string    `json:"ironic_target_uuid,omitempty"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`

	// Crypt is the dm-crypt mapping of an encrypted volume (crypt.go).
	Crypt *CryptRecord `json:"crypt,omitempty"`

	// Persist marks an attachment that is restored at boot (persist.go).
	Persist bool `json:"persist,omitempty"`
}

// ErrCorruptRecord marks a state record brick cannot read.
var ErrCorruptRecord = errors.New("corrupt state record")

// ErrNoRecord means brick has no record for the volume.
var ErrNoRecord = errors.New("no local record")

// store reads and writes records under dir (a host path) through the
// rooted filesystem.
type store struct {
	fs  host.FS
	dir string
}

func (s store) path(volumeID string) string {
	return filepath.Join(s.dir, volumeID+".json")
}

// validVolumeID accepts Cinder's UUIDs only: the ID becomes a file name
// and a lock name.
func validVolumeID(id string) (string, error) {
	u, ok := ident.ParseUUID(id)
	if !ok {
		return "", fmt.Errorf("volume id %s is not a UUID", connector.Quote(id))
	}
	return u, nil
}

// save writes the record atomically: temp file, fsync, rename, fsync dir,
// mode 0600 in a 0700 directory.
func (s store) save(r *Record) error {
	if _, err := validVolumeID(r.VolumeID); err != nil {
		return err
	}
	r.Version = recordVersion
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state record for %s: %w", r.VolumeID, err)
	}
	if err := s.fs.PrivateDir(s.dir, true); err != nil {
		return fmt.Errorf("save state record of %s: %w", r.VolumeID, err)
	}
	if err := s.fs.WriteFileAtomic(s.path(r.VolumeID), append(data, '\n')); err != nil {
		return fmt.Errorf("save state record of %s: %w", r.VolumeID, err)
	}
	return nil
}

// load reads the record of a volume; ErrNoRecord when there is none.
func (s store) load(volumeID string) (*Record, error) {
	if _, err := validVolumeID(volumeID); err != nil {
		return nil, err
	}
	p := s.path(volumeID)
	err := s.fs.PrivateDir(s.dir, false)
	var data []byte
	if err == nil {
		data, err = s.fs.ReadFile(p)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("volume %s: %w", volumeID, ErrNoRecord)
	}
	if err != nil {
		return nil, fmt.Errorf("read state record %s: %w", p, err)
	}
	return parseRecord(p, data)
}

// maxRecordSize bounds a record; real ones are a few KiB.
const maxRecordSize = 1 << 20

func parseRecord(p string, data []byte) (*Record, error) {
	if len(data) > maxRecordSize {
		return nil, corrupt(p, "larger than %d bytes", maxRecordSize)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var r Record
	if err := dec.Decode(&r); err != nil {
		return nil, corrupt(p, "%v", err)
	}
	switch {
	case r.Version != recordVersion:
		return nil, corrupt(p, "schema version %d, this brick reads %d", r.Version, recordVersion)
	case r.Phase != PhaseAttaching && r.Phase != PhaseAttached && r.Phase != PhaseDetaching:
		return nil, corrupt(p, "unknown phase %s", connector.Quote(r.Phase))
	case r.Flow != cinderapi.FlowV3 && r.Flow != cinderapi.FlowLegacy:
		return nil, corrupt(p, "unknown flow %s", connector.Quote(r.Flow))
	case r.SizeBytes < 0:
		return nil, corrupt(p, "negative size %d", r.SizeBytes)
	}
	if _, err := validVolumeID(r.VolumeID); err != nil {
		return nil, corrupt(p, "%v", err)
	}
	if want := strings.TrimSuffix(filepath.Base(p), ".json"); want != r.VolumeID {
		return nil, corrupt(p, "holds volume %s", r.VolumeID)
	}
	return &r, nil
}

// corrupt builds the error for an unreadable record: it names the file and
// says how to recover (without a record, cleanup asks Cinder instead).
func corrupt(p, format string, args ...any) error {
	return fmt.Errorf("%w %s: %s (move the file away, then run 'brick cleanup' for the volume)", ErrCorruptRecord, p, fmt.Sprintf(format, args...))
}

// remove deletes the record; a missing one is fine.
func (s store) remove(volumeID string) error {
	if err := s.fs.RemoveFileDurable(s.path(volumeID)); err != nil {
		return fmt.Errorf("remove state record of %s: %w", volumeID, err)
	}
	return nil
}

// list returns every record, sorted by volume ID; unreadable ones are
// returned as errors next to the good ones.
func (s store) list() ([]*Record, []error) {
	err := s.fs.PrivateDir(s.dir, false)
	var entries []fs.DirEntry
	if err == nil {
		entries, err = s.fs.ReadDir(s.dir)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{fmt.Errorf("read state dir %s: %w", s.dir, err)}
	}
	var out []*Record
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		id := strings.TrimSuffix(name, ".json")
		if _, err := validVolumeID(id); err != nil {
			errs = append(errs, corrupt(filepath.Join(s.dir, name), "not named <volume UUID>.json"))
			continue
		}
		r, err := s.load(id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].VolumeID < out[j].VolumeID })
	return out, errs
}
