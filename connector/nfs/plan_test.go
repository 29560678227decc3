package nfs

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
)

// TestPlan: the connect plan shows the mount argv a connect would run
// (with the version fallbacks), the disconnect plan keeps a share other
// volumes use; planning mounts nothing.
func TestPlan(t *testing.T) {
	c, k, r := newFake(t)
	ctx := context.Background()
	a, b := nfsInfo(t, volA), nfsInfo(t, volB)
	exp, _ := ParseExport("10.0.0.5:/srv/cinder")
	mp := c.h.FS.Path(filepath.Join(DefaultMountBase, exp.ID()))

	p, err := c.PlanConnect(ctx, a)
	require.NoError(t, err)
	steps := strings.Join(p.Steps, "\n")
	require.Contains(t, steps, "\nmount -t nfs -o nosuid,nodev,noexec,vers=4.2 10.0.0.5:/srv/cinder "+mp+"\n")
	require.Contains(t, steps, "if that fails: mount -t nfs -o nosuid,nodev,noexec,vers=3 ")
	p, err = c.PlanDisconnect(ctx, a, nil, connector.DisconnectOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"the volume is not attached: nothing to do"}, p.Steps)
	require.Empty(t, r.Calls())
	require.False(t, c.h.FS.Exists(mp))

	devA, err := c.Connect(ctx, a)
	require.NoError(t, err)
	_, err = c.Connect(ctx, b)
	require.NoError(t, err)
	n := len(r.Calls())
	p, err = c.PlanConnect(ctx, a)
	require.NoError(t, err)
	require.Equal(t, []string{"already attached at " + devA.Path + ": nothing to do"}, p.Steps)
	p, err = c.PlanDisconnect(ctx, a, devA, connector.DisconnectOptions{})
	require.NoError(t, err)
	require.Contains(t, strings.Join(p.Steps, "\n"), "keep the share mounted for: volume-b")
	require.Len(t, r.Calls(), n)
	require.Equal(t, 1, k.mounted())
}
