package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMountpointHelpers(t *testing.T) {
	root := t.TempDir()
	f := NewFS(root)
	require.NoError(t, f.MkdirAll("/var/lib/kubelet/pods/p/volumes", 0o750))
	require.NoError(t, f.CreateFile("/var/lib/kubelet/pods/p/volumes/dev"))
	require.NoError(t, f.CreateFile("/var/lib/kubelet/pods/p/volumes/dev"), "an existing file is fine")
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(root, "link")))
	require.Error(t, f.CreateFile("/link"), "a symlink is refused")

	u, err := f.Statfs("/var/lib/kubelet")
	require.NoError(t, err)
	require.Positive(t, u.TotalBytes)
	require.GreaterOrEqual(t, u.TotalBytes, u.AvailableBytes)
	_, err = f.Statfs("/missing")
	require.ErrorIs(t, err, ErrNoFilesystem)
}
