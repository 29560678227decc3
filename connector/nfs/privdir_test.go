package nfs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
)

// TestMountBaseMadePrivate: the mount base is made 0700 (so no other user
// walks into a share through it), and one planted by someone else is
// refused before anything is mounted.
func TestMountBaseMadePrivate(t *testing.T) {
	c, _, r := newFake(t)
	_, err := c.Connect(context.Background(), nfsInfo(t, volA))
	require.NoError(t, err)
	for _, d := range []string{host.LibDir, DefaultMountBase} {
		st, err := os.Lstat(c.h.FS.Path(d))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), st.Mode().Perm(), d)
	}

	c, _, r = newFake(t)
	base := c.h.FS.Path(DefaultMountBase)
	require.NoError(t, os.MkdirAll(filepath.Dir(base), 0o700))
	require.NoError(t, os.Symlink(t.TempDir(), base))
	_, err = c.Connect(context.Background(), nfsInfo(t, volA))
	require.ErrorIs(t, err, host.ErrUnsafeDir)
	require.ErrorContains(t, err, "mount base: unsafe directory: /var/lib/brick/mnt is not a directory")
	require.Empty(t, mountCalls(r), "nothing mounted")
}
