package nvmeof

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
)

// TestPlanFollowsTheDecision: the dry run shows what Connect and
// Disconnect then do, and changes nothing.
func TestPlanFollowsTheDecision(t *testing.T) {
	r := newRig(t)
	_, p1 := listener(t)
	_, p2 := listener(t)
	ctx := context.Background()
	p, err := r.c.PlanConnect(ctx, infoFor(t, uuidA, p1, p2))
	require.NoError(t, err)
	steps := strings.Join(p.Steps, "\n")
	require.Contains(t, steps, "connect tcp:127.0.0.1:")
	require.Contains(t, steps, "wait for namespace uuid "+uuidA)
	require.True(t, p.Multipath)
	require.Zero(t, r.k.connects(), "a plan connects nothing")

	_, err = r.c.Connect(ctx, infoFor(t, uuidA, p1, p2))
	require.NoError(t, err)
	_, err = r.c.Connect(ctx, infoFor(t, uuidB, p1, p2))
	require.NoError(t, err)
	p, err = r.c.PlanConnect(ctx, infoFor(t, uuidA, p1, p2))
	require.NoError(t, err)
	require.Contains(t, p.Steps[0], "reuse controller nvme")

	p, err = r.c.PlanDisconnect(ctx, infoFor(t, uuidA, p1, p2), nil, connector.DisconnectOptions{})
	require.NoError(t, err)
	steps = strings.Join(p.Steps, "\n")
	require.Contains(t, steps, "flush /dev/nvme0n1")
	require.Contains(t, steps, "keep controllers nvme0, nvme1: still needed by nvme0n2 (attached through brick)")
	require.NoError(t, r.c.Disconnect(ctx, infoFor(t, uuidA, p1, p2), nil, connector.DisconnectOptions{}))

	p, err = r.c.PlanDisconnect(ctx, infoFor(t, uuidB, p1, p2), nil, connector.DisconnectOptions{Force: true})
	require.NoError(t, err)
	steps = strings.Join(p.Steps, "\n")
	require.Contains(t, steps, "delete controllers nvme0, nvme1")
	require.NotContains(t, steps, "refuse")
	entries, _ := os.ReadDir(filepath.Join(r.root, "sys/class/nvme"))
	require.Len(t, entries, 2, "a plan deletes nothing")
}

func TestPlanReplicated(t *testing.T) {
	r, f := newMDRig(t)
	ctx := context.Background()
	info := kumoScaleInfo(t, 2, [2]any{legNQN1, legU1}, [2]any{legNQN2, legU2})
	p, err := r.c.PlanConnect(ctx, info)
	require.NoError(t, err)
	steps := strings.Join(p.Steps, "\n")
	require.Contains(t, steps, "leg 1: connect tcp:127.0.0.1:")
	require.Contains(t, steps, ",fast_io_fail_tmo=5 to /dev/nvme-fabrics")
	require.Contains(t, steps, "create an md RAID1 over all 2 legs")
	require.Empty(t, f.log(), "a plan runs no mdadm")

	dev, err := r.c.Connect(ctx, info)
	require.NoError(t, err)
	p, err = r.c.PlanDisconnect(ctx, info, dev, connector.DisconnectOptions{})
	require.NoError(t, err)
	steps = strings.Join(p.Steps, "\n")
	require.Contains(t, steps, "stop the md array md127")
	require.Contains(t, steps, "leg 0: delete controllers")
	require.Contains(t, steps, "leg 1: delete controllers")
}
