package rbd

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/secret"
)

// TestKilledBrickCredentialsSwept: credentials whose brick was SIGKILLed
// (its lock gone with it) are removed as soon as the next brick builds the
// rbd connector (any map, brick cleanup), without waiting an hour; a live
// brick's credentials and other files stay.
func TestKilledBrickCredentialsSwept(t *testing.T) {
	h, root := hosttest.New(t, nil)
	fsys := host.NewFS(root)
	v := Volume{Pool: "p", Image: "i", Cluster: "ceph", User: "u", Key: secret.New(testKey)}

	live, err := writeCreds(fsys, DefaultTempDir, v, time.Now())
	require.NoError(t, err)
	base := filepath.Join(root, DefaultTempDir)
	// What SIGKILL leaves: the files, and the lock file nobody holds.
	killed := filepath.Join(base, "map-killed")
	require.NoError(t, os.Mkdir(killed, 0o700))
	for _, f := range []string{"lock", "keyring", "ceph.conf"} {
		require.NoError(t, os.WriteFile(filepath.Join(killed, f), nil, 0o600))
	}
	noLockNew := filepath.Join(base, "map-unlocked-new")
	noLockOld := filepath.Join(base, "map-unlocked-old")
	for _, d := range []string{noLockNew, noLockOld} {
		require.NoError(t, os.Mkdir(d, 0o700))
	}
	old := time.Now().Add(-2 * credsAge.Grace)
	require.NoError(t, os.Chtimes(noLockOld, old, old))
	other := filepath.Join(base, "notes")
	require.NoError(t, os.WriteFile(other, nil, 0o600))

	New(h, Options{})

	require.NoDirExists(t, killed, "a killed brick's key stays on disk")
	require.NoDirExists(t, noLockOld)
	require.DirExists(t, live.Dir, "a live brick's credentials were removed mid-map")
	require.DirExists(t, noLockNew, "credentials being created were removed")
	require.FileExists(t, other)
	require.NoError(t, live.remove())
}

// TestSweepSkipsForeignDirectory: a credentials directory that is a
// symlink is not ours to clean.
func TestSweepSkipsForeignDirectory(t *testing.T) {
	root := t.TempDir()
	target := t.TempDir()
	victim := filepath.Join(target, "map-x")
	require.NoError(t, os.Mkdir(victim, 0o700))
	old := time.Now().Add(-2 * credsAge.Stale)
	require.NoError(t, os.Chtimes(victim, old, old))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "run/brick"), 0o700))
	require.NoError(t, os.Symlink(target, filepath.Join(root, DefaultTempDir)))
	require.Empty(t, SweepCredentials(host.NewFS(root), DefaultTempDir, time.Now()))
	require.DirExists(t, victim)
}
