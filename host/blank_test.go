package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFirstNonZero(t *testing.T) {
	const span = 1 << 20
	for _, tc := range []struct {
		name  string
		size  int64
		write int64 // offset of one 0x01 byte; -1 none
		want  int64
	}{
		{"blank", 8 << 20, -1, -1},
		{"first byte", 8 << 20, 0, 0},
		{"end of first MiB", 8 << 20, span - 1, span - 1},
		{"middle is not read", 8 << 20, 4 << 20, -1},
		{"start of last MiB", 8 << 20, 7 << 20, 7 << 20},
		{"last byte", 8 << 20, 8<<20 - 1, 8<<20 - 1},
		{"small device", 100 << 10, 99 << 10, 99 << 10},
		{"ends overlap", span + 10, span + 5, span + 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, "dev", "sdx")
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			f, err := os.Create(p)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(tc.size))
			if tc.write >= 0 {
				_, err = f.WriteAt([]byte{1}, tc.write)
				require.NoError(t, err)
			}
			require.NoError(t, f.Close())
			got, err := NewBlockDevices(NewFS(root)).FirstNonZero("/dev/sdx", span)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	_, err := NewBlockDevices(NewFS(t.TempDir())).FirstNonZero("/dev/none", span)
	require.ErrorContains(t, err, "read /dev/none")
}
