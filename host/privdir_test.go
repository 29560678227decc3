package host

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPrivateDirRefusesPlantedDirectory: brick's state and mount
// directories are made 0700 and checked on every use; one planted by
// someone else (a link, another owner, writable by others), at the leaf or
// between LibDir and it, is refused naming the directory and the fix.
func TestPrivateDirRefusesPlantedDirectory(t *testing.T) {
	leaf := LibDir + "/volumes"
	for _, tc := range []struct {
		name  string
		at    string // the planted directory
		plant func(t *testing.T, dir string)
		want  string
	}{
		{"symlinked leaf", leaf, func(t *testing.T, dir string) {
			require.NoError(t, os.Symlink(t.TempDir(), dir))
		}, "/var/lib/brick/volumes is not a directory"},
		{"symlinked top", LibDir, func(t *testing.T, dir string) {
			require.NoError(t, os.Symlink(t.TempDir(), dir))
		}, "/var/lib/brick is not a directory"},
		{"world-writable top", LibDir, func(t *testing.T, dir string) {
			require.NoError(t, os.Mkdir(dir, 0o700))
			require.NoError(t, os.Chmod(dir, 0o777))
		}, "/var/lib/brick has mode 0777, writable by others"},
		{"group-writable leaf", leaf, func(t *testing.T, dir string) {
			require.NoError(t, os.Mkdir(dir, 0o700))
			require.NoError(t, os.Chmod(dir, 0o770))
		}, "mode 0770"},
		{"other owner", leaf, func(t *testing.T, dir string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give the directory away")
			}
			require.NoError(t, os.Mkdir(dir, 0o700))
			require.NoError(t, os.Chown(dir, 65534, 65534))
		}, "owned by uid 65534"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			planted := filepath.Join(root, tc.at)
			require.NoError(t, os.MkdirAll(filepath.Dir(planted), 0o700))
			tc.plant(t, planted)
			for _, create := range []bool{true, false} {
				err := NewFS(root).PrivateDir(leaf, create)
				require.ErrorIs(t, err, ErrUnsafeDir)
				require.ErrorContains(t, err, tc.want)
				require.ErrorContains(t, err, "remove it")
			}
		})
	}
}

func TestPrivateDirCreatesAndTightens(t *testing.T) {
	root := t.TempDir()
	f := NewFS(root)
	leaf := LibDir + "/mnt"
	require.ErrorIs(t, f.PrivateDir(leaf, false), fs.ErrNotExist, "missing and not asked to create")
	require.NoError(t, f.PrivateDir(leaf, true))
	for _, d := range []string{LibDir, leaf} {
		st, err := os.Lstat(f.Path(d))
		require.NoError(t, err)
		require.True(t, st.IsDir())
		require.Equal(t, os.FileMode(0o700), st.Mode().Perm(), d)
	}
	// An older brick made it 0755: ours, so closed again.
	require.NoError(t, os.Chmod(f.Path(LibDir), 0o755))
	require.NoError(t, f.PrivateDir(leaf, false))
	st, err := os.Lstat(f.Path(LibDir))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	// Outside LibDir only the directory itself is brick's.
	require.NoError(t, f.PrivateDir("/srv/brick-state", true))
	st, err = os.Lstat(f.Path("/srv"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o755), st.Mode().Perm())
}
