package dockerplugin

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/cmd/factory/factorytest"
)

func TestNewCmd(t *testing.T) {
	f := factorytest.New(t.TempDir())
	d, err := factorytest.Parse(t, f, NewCmd, "--socket", "/run/x.sock", "--max-size", "3", "--fixed-key-file", "/k")
	require.NoError(t, err)
	require.Equal(t, "/run/x.sock", d.Socket)
	require.Equal(t, 3, d.Config.MaxSizeGiB)
	require.Equal(t, "/k", d.Attacher.FixedKeyFile)
	_, err = factorytest.Parse(t, f, NewCmd, "--default-size", "-1")
	require.ErrorContains(t, err, "--default-size -1")
}
