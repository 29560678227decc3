package host

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestListenUnix(t *testing.T) {
	root := t.TempDir()
	fsys := NewFS(root)
	l, err := fsys.ListenUnix("/run/docker/plugins/b.sock")
	require.NoError(t, err)
	p := filepath.Join(root, "run/docker/plugins/b.sock")
	st, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	// A live listener is not taken over.
	_, err = fsys.ListenUnix("/run/docker/plugins/b.sock")
	require.ErrorIs(t, err, ErrSocketBusy)

	// A stale socket file (its process gone) is replaced.
	ul := l.(*net.UnixListener)
	ul.SetUnlinkOnClose(false)
	require.NoError(t, l.Close())
	l2, err := fsys.ListenUnix("/run/docker/plugins/b.sock")
	require.NoError(t, err)
	require.NoError(t, l2.Close())

	require.NoError(t, os.WriteFile(filepath.Join(root, "run/docker/plugins/f.sock"), nil, 0o600))
	_, err = fsys.ListenUnix("/run/docker/plugins/f.sock")
	require.ErrorContains(t, err, "not a socket")
}
