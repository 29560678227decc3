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

// TestTrustedProgram: root runs the companion program only when no one
// else can change it or the directories it sits in.
func TestTrustedProgram(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	prog := filepath.Join(dir, "brick-csi")
	require.NoError(t, os.WriteFile(prog, []byte("#!/bin/true\n"), 0o755))
	require.NoError(t, TrustedProgram(prog))

	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(prog, link))
	require.NoError(t, TrustedProgram(link), "a link to a trusted program is that program")

	require.NoError(t, os.Chmod(prog, 0o757))
	err := TrustedProgram(prog)
	require.ErrorIs(t, err, ErrUntrustedPath)
	require.ErrorContains(t, err, "writable by others")

	require.NoError(t, os.Chmod(prog, 0o755))
	require.NoError(t, os.Chmod(dir, 0o777))
	require.ErrorIs(t, TrustedProgram(prog), ErrUntrustedPath, "a directory others can write")

	require.NoError(t, os.Chmod(dir, 0o755))
	require.ErrorIs(t, TrustedProgram(dir), ErrUntrustedPath, "not a regular file")
	require.ErrorIs(t, TrustedProgram(filepath.Join(dir, "none")), fs.ErrNotExist)
}
