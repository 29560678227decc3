package host

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSiblingPath: a companion program is looked up beside the running
// binary, and one that is not there is fs.ErrNotExist.
func TestSiblingPath(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	p, err := SiblingPath("brick-csi")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(filepath.Dir(self), "brick-csi"), p)

	err = ExecSibling("brick-no-such-companion", []string{"csi"})
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorContains(t, err, filepath.Join(filepath.Dir(self), "brick-no-such-companion"))
}
