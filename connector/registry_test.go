package connector

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

type stubConnector struct{}

func (stubConnector) Connect(context.Context, ConnectionInfo) (*Device, error) { return &Device{}, nil }
func (stubConnector) Disconnect(context.Context, ConnectionInfo, *Device, DisconnectOptions) error {
	return nil
}
func (stubConnector) DevicePaths(context.Context, ConnectionInfo) ([]string, error) { return nil, nil }

func TestRegistry(t *testing.T) {
	r := NewRegistry()
	r.Register(stubConnector{}, "iscsi", "ISER")
	_, err := r.For("iSCSI")
	require.NoError(t, err)
	_, err = r.For("iser")
	require.NoError(t, err)
	_, err = r.For("vmdk")
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorContains(t, err, `"vmdk" (supported: iscsi, iser)`)
	require.Equal(t, []string{"iscsi", "iser"}, r.Types())
}
