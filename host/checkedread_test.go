package host

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadChecked(t *testing.T) {
	dir := t.TempDir()
	f := NewFS(dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), []byte("abc"), 0o600))
	require.NoError(t, os.Symlink("file", filepath.Join(dir, "link")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	ok := func(fs.FileInfo) error { return nil }

	data, err := f.ReadChecked("/file", true, 3, ok)
	require.NoError(t, err)
	require.Equal(t, "abc", string(data))
	_, err = f.ReadChecked("/file", true, 2, ok)
	require.ErrorContains(t, err, "larger than 2 bytes")
	refused := errors.New("refused")
	_, err = f.ReadChecked("/file", false, 3, func(fi fs.FileInfo) error {
		require.EqualValues(t, 3, fi.Size())
		return refused
	})
	require.ErrorIs(t, err, refused)
	data, err = f.ReadChecked("/link", false, 3, ok)
	require.NoError(t, err)
	require.Equal(t, "abc", string(data))
	_, err = f.ReadChecked("/link", true, 3, ok)
	require.ErrorIs(t, err, syscall.ELOOP)
	_, err = f.ReadChecked("/fifo", true, 3, func(fi fs.FileInfo) error {
		require.False(t, fi.Mode().IsRegular(), "judged without blocking on the FIFO")
		return refused
	})
	require.ErrorIs(t, err, refused)
	_, err = f.ReadChecked("/missing", true, 3, ok)
	require.ErrorIs(t, err, fs.ErrNotExist)
}
