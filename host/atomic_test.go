package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteFileAtomic(t *testing.T) {
	root := t.TempDir()
	f := NewFS(root)
	stale := filepath.Join(root, "var/lib/x/.rec.json.123.tmp")
	require.NoError(t, os.MkdirAll(filepath.Dir(stale), 0o700))
	require.NoError(t, os.WriteFile(stale, []byte("half"), 0o600))

	require.NoError(t, f.WriteFileAtomic("/var/lib/x/rec.json", []byte("one")))
	require.NoError(t, f.WriteFileAtomic("/var/lib/x/rec.json", []byte("two")))

	data, err := os.ReadFile(filepath.Join(root, "var/lib/x/rec.json"))
	require.NoError(t, err)
	require.Equal(t, "two", string(data))
	st, err := os.Stat(filepath.Join(root, "var/lib/x/rec.json"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	left, _ := filepath.Glob(filepath.Join(root, "var/lib/x/.*.tmp"))
	require.Empty(t, left, "no temp file left")

	require.Error(t, f.WriteFileAtomic("/var/lib/x/rec.json/below", []byte("x")))
}
