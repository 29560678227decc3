package protocols

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host/hosttest"
)

func TestNewRegistersEveryProtocol(t *testing.T) {
	h, _ := hosttest.New(t, nil)
	reg := New(h, Options{Multipath: true})
	require.ElementsMatch(t, []string{"iscsi", "iser", "fibre_channel", "rbd", "nfs", "nvmeof"}, reg.Types())
	for _, typ := range []string{"ISCSI", "Fibre_Channel", "NVMEOF"} {
		_, err := reg.For(typ)
		require.NoError(t, err, "driver_volume_type is matched without case: %s", typ)
	}
	_, err := reg.For("vmdk")
	require.Error(t, err)
}
