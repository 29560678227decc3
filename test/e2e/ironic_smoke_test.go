//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed"
)

// TestIronicSmoke proves the test bed's Ironic serves the volume connector
// API brick registers targets with: a fake-hardware node is created and
// powered off (connectors can only be changed or deleted then), a connector
// is created with microversion 1.32, listed for the node, and deleted.
func TestIronicSmoke(t *testing.T) {
	lane(t, laneServices)
	ir := needIronic(t, testbed.IronicOptions{MaxLimit: ironicMaxLimit})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const mv = testbed.IronicVolumeMicroversion

	name := fmt.Sprintf("brick-e2e-smoke-%d", time.Now().UnixNano())
	node, err := ir.CreateNode(ctx, name)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ir.DeleteNode(context.Background(), node.UUID) })
	assert.Equal(t, "fake-hardware", node.Driver)
	assert.Equal(t, name, node.Name)

	require.NoError(t, ir.SetPowerState(ctx, node.UUID, "power off"))
	got, err := ir.GetNode(ctx, name)
	require.NoError(t, err)
	assert.Equal(t, "power off", got.PowerState)

	// Without the microversion header the volume API is a bare 404.
	err = ir.Request(ctx, http.MethodGet, "/v1/volume/connectors", "", nil, nil)
	assert.Equal(t, http.StatusNotFound, testbed.StatusOf(err), "volume API without microversion: %v", err)

	iqn := "iqn.1993-08.org.debian:01:" + name
	var conn struct {
		UUID        string `json:"uuid"`
		NodeUUID    string `json:"node_uuid"`
		Type        string `json:"type"`
		ConnectorID string `json:"connector_id"`
	}
	require.NoError(t, ir.Request(ctx, http.MethodPost, "/v1/volume/connectors", mv,
		map[string]any{"node_uuid": node.UUID, "type": "iqn", "connector_id": iqn}, &conn))
	assert.Equal(t, node.UUID, conn.NodeUUID)
	assert.Equal(t, "iqn", conn.Type)
	assert.Equal(t, iqn, conn.ConnectorID)

	var list struct {
		Connectors []struct {
			UUID        string `json:"uuid"`
			ConnectorID string `json:"connector_id"`
		} `json:"connectors"`
	}
	require.NoError(t, ir.Request(ctx, http.MethodGet, "/v1/nodes/"+node.UUID+"/volume/connectors", mv, nil, &list))
	require.Len(t, list.Connectors, 1)
	assert.Equal(t, conn.UUID, list.Connectors[0].UUID)
	assert.Equal(t, iqn, list.Connectors[0].ConnectorID)

	require.NoError(t, ir.Request(ctx, http.MethodDelete, "/v1/volume/connectors/"+conn.UUID, mv, nil, nil))
	err = ir.Request(ctx, http.MethodGet, "/v1/volume/connectors/"+conn.UUID, mv, nil, nil)
	assert.Equal(t, http.StatusNotFound, testbed.StatusOf(err))

	require.NoError(t, ir.DeleteNode(ctx, node.UUID))
}
