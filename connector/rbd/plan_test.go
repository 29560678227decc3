package rbd

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
)

// TestPlan: the connect plan shows the map argv without the key, reuses an
// existing mapping, and the disconnect plan names the unmap; planning runs
// only `rbd device list`.
func TestPlan(t *testing.T) {
	c, f, r, _ := newTestConnector(t, Options{Driver: DriverKRBD})
	info := cinderInfo(t, func(d map[string]any) {
		d["keyring"] = testKeyring
		d["secret_uuid"] = "not-a-uuid"
	})
	p, err := c.PlanConnect(context.Background(), info)
	require.NoError(t, err)
	steps := strings.Join(p.Steps, "\n")
	require.Contains(t, steps, "rbd device map --device-type krbd --conf "+confPlaceholder+" --id cinder volumes/volume-6d54cb90-a5d1-40d8-9cb2-c6adf43a02af")
	require.NotContains(t, steps, testKey)
	require.Len(t, p.Warnings, 1, "the ignored secret_uuid")

	p, err = c.PlanDisconnect(context.Background(), info, nil, connector.DisconnectOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"the image is not mapped: nothing to do"}, p.Steps)

	dev, err := c.Connect(context.Background(), info)
	require.NoError(t, err)
	p, err = c.PlanConnect(context.Background(), info)
	require.NoError(t, err)
	require.Equal(t, []string{"reuse the existing mapping " + dev.Path}, p.Steps)
	p, err = c.PlanDisconnect(context.Background(), info, dev, connector.DisconnectOptions{})
	require.NoError(t, err)
	require.Contains(t, strings.Join(p.Steps, "\n"), "rbd device unmap --device-type krbd "+dev.Path)
	for _, call := range r.Calls() {
		require.NotContains(t, call, "unmap")
	}
	require.Len(t, f.mappings, 1)
}
