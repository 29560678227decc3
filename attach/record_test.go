package attach

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/host/hosttest"
)

const (
	volA = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	volB = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
	volC = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
)

func testRecord(id string) *Record {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	return &Record{VolumeID: id, Phase: PhaseAttached, Step: StepDone, Flow: cinderapi.FlowV3, Microversion: "3.54",
		HostName: "node1", Mode: "rw", CreatedAt: now, UpdatedAt: now}
}

func newStore(t *testing.T) (store, string) {
	h, root := hosttest.New(t, nil)
	return store{fs: h.FS, dir: DefaultStateDir}, filepath.Join(root, DefaultStateDir)
}

// TestRecordStoreSurvivesCrash: what a crash mid-write can leave behind (a
// half-written temp file, a truncated or garbled record) never hides the
// other records, a temp file is never read as a record, and a damaged
// record is refused with an error naming the file and the way out.
func TestRecordStoreSurvivesCrash(t *testing.T) {
	s, dir := newStore(t)
	for _, id := range []string{volA, volB, volC} {
		require.NoError(t, s.save(testRecord(id)))
	}
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	good, err := os.ReadFile(filepath.Join(dir, volA+".json"))
	require.NoError(t, err)

	// A kill -9 between CreateTemp and rename: a half-written temp file
	// (of A, whose real record is intact) and one of a volume with no
	// record at all.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "."+volA+".json.123456.tmp"), good[:len(good)/2], 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".dddddddd-dddd-4ddd-8ddd-dddddddddddd.99.tmp"), []byte("{\"vers"), 0o600))
	// A record truncated by a crash on a filesystem without the rename
	// barrier, and one overwritten with garbage.
	require.NoError(t, os.WriteFile(filepath.Join(dir, volB+".json"), good[:len(good)/3], 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, volC+".json"), []byte{0, 0, 0, 0}, 0o600))
	// A stray file that is no record.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.json"), []byte("{}"), 0o600))

	recs, errs := s.list()
	require.Len(t, recs, 1, "the intact record still loads")
	require.Equal(t, volA, recs[0].VolumeID)
	require.Len(t, errs, 3, "%v", errs)
	for _, e := range errs {
		require.True(t, errors.Is(e, ErrCorruptRecord), "%v", e)
		require.Contains(t, e.Error(), filepath.Join(DefaultStateDir, ""), "names the file")
		require.Contains(t, e.Error(), "move the file away, then run 'brick cleanup'", "says the fix")
		require.Equal(t, 1, strings.Count(e.Error()+"\n", "\n"), "one line: %q", e.Error())
	}
	_, err = s.load(volB)
	require.ErrorIs(t, err, ErrCorruptRecord)
	require.Contains(t, err.Error(), filepath.Join(DefaultStateDir, volB+".json"))
	_, err = s.load("dddddddd-dddd-4ddd-8ddd-dddddddddddd")
	require.ErrorIs(t, err, ErrNoRecord, "a temp file is not a record")

	// The next save of A replaces the record and sweeps A's leftover temp.
	r := testRecord(volA)
	r.Phase = PhaseDetaching
	require.NoError(t, s.save(r))
	got, err := s.load(volA)
	require.NoError(t, err)
	require.Equal(t, PhaseDetaching, got.Phase)
	left, err := filepath.Glob(filepath.Join(dir, "."+volA+".json.*.tmp"))
	require.NoError(t, err)
	require.Empty(t, left, "the crashed save's temp file is removed")
	fi, err = os.Stat(filepath.Join(dir, volA+".json"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// TestRecordCorruptions: each way a record can be wrong is refused naming
// the file and the fix.
func TestRecordCorruptions(t *testing.T) {
	p := filepath.Join(DefaultStateDir, volA+".json")
	for name, data := range map[string]string{
		"empty":       "",
		"truncated":   `{"version":1,"volume_id":"` + volA,
		"not json":    "\x00\x01garbage",
		"version":     `{"version":2,"volume_id":"` + volA + `","phase":"attached","flow":"v3"}`,
		"phase":       `{"version":1,"volume_id":"` + volA + `","phase":"exploded","flow":"v3"}`,
		"flow":        `{"version":1,"volume_id":"` + volA + `","phase":"attached","flow":"sideways"}`,
		"id":          `{"version":1,"volume_id":"../../etc/passwd","phase":"attached","flow":"v3"}`,
		"other id":    `{"version":1,"volume_id":"` + volB + `","phase":"attached","flow":"v3"}`,
		"wrong types": `{"version":"1","volume_id":5,"phase":[],"flow":{}}`,
		"huge":        `{"volume_name":"` + strings.Repeat("x", maxRecordSize) + `"}`,
	} {
		_, err := parseRecord(p, []byte(data))
		require.ErrorIs(t, err, ErrCorruptRecord, name)
		require.Contains(t, err.Error(), p, name)
		require.Contains(t, err.Error(), "run 'brick cleanup'", name)
	}
}

// TestStateDirPlantedIsRefused: a state directory someone else could have
// planted (here a symlink to a directory of theirs) is neither written nor
// read: its records could be forged.
func TestStateDirPlantedIsRefused(t *testing.T) {
	s, dir := newStore(t)
	theirs := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Dir(dir), 0o700))
	require.NoError(t, os.Symlink(theirs, dir))
	err := s.save(testRecord(volA))
	require.ErrorContains(t, err, "save state record of "+volA+": unsafe directory: /var/lib/brick/volumes is not a directory (a symlink?)")
	require.NoFileExists(t, filepath.Join(theirs, volA+".json"))
	require.NoError(t, os.WriteFile(filepath.Join(theirs, volA+".json"), []byte("{}"), 0o600))
	_, err = s.load(volA)
	require.ErrorContains(t, err, "unsafe directory")
	_, errs := s.list()
	require.Len(t, errs, 1)
	require.ErrorContains(t, errs[0], "unsafe directory")
}

// TestRecordRedactsNestedSecrets: a secret-named key anywhere in the
// connection info (nested objects, lists) is masked in the record.
func TestRecordRedactsNestedSecrets(t *testing.T) {
	f := newFixture(t, "")
	f.fake.ConnectionInfo = func(id string, _ map[string]any) map[string]any {
		return map[string]any{
			"driver_volume_type": "iscsi", "target_iqn": "iqn.2010-10.org.openstack:volume-" + id,
			"target_portal": "127.0.0.1:3260", "target_lun": 1,
			"auth":      map[string]any{"auth_password": "nested-pw-1", "user": "u"},
			"discovery": []any{map[string]any{"discovery_auth_password": "nested-pw-2"}},
			"keyring":   map[string]any{"value": "nested-pw-3"},
		}
	}
	m := f.manager()
	_, err := m.Attach(context.Background(), AttachOptions{Volume: "data"})
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(f.root, DefaultStateDir, volID+".json"))
	require.NoError(t, err)
	for _, s := range []string{"nested-pw-1", "nested-pw-2", "nested-pw-3"} {
		require.NotContains(t, string(data), s)
	}
	require.Contains(t, string(data), `"user": "u"`)
	require.NoError(t, m.Detach(context.Background(), DetachOptions{Volume: "data"}))
}
