package reconcile

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/cmd/factory/factorytest"
)

func TestNewCmdReconcileRestore(t *testing.T) {
	f := factorytest.New(t.TempDir())
	r, err := factorytest.Parse(t, f, NewCmdReconcile, "--apply", "--fixed-key-file", "/k")
	require.NoError(t, err)
	require.True(t, r.Apply)
	require.Equal(t, "/k", r.Attacher.FixedKeyFile)
	s, err := factorytest.Parse(t, f, NewCmdRestore, "--shutdown")
	require.NoError(t, err)
	require.True(t, s.Shutdown)
}
