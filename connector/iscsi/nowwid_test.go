package iscsi_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/scsi"
)

// TestConnectLUNWithoutWWID: a LUN with no VPD page 0x83 attaches over one
// path with a warning naming its unit serial; with multipath it is refused
// (ErrNoWWID, the reason and the way out in the message) before any map.
func TestConnectLUNWithoutWWID(t *testing.T) {
	for _, id := range []string{"serial:SN0042", ""} {
		fk, _, h := newFakeKernel(t)
		fk.luns = map[int]string{1: id}
		logs := &syncBuffer{}
		h.Log = slog.New(slog.NewTextHandler(logs, nil))
		c := iscsi.New(h, fastOptions())
		ci := singleInfo(t, 1, false)
		dev, err := c.Connect(context.Background(), ci)
		require.NoError(t, err, id)
		require.Equal(t, "/dev/sda", dev.Path)
		require.Empty(t, dev.WWN)
		require.Contains(t, logs.String(), "no WWID")
		if id != "" {
			require.Equal(t, "SN0042", dev.Extra[connector.ExtraUnitSerial], "disconnect checks it")
			require.Contains(t, logs.String(), `unit serial \"SN0042\"`)
		} else {
			require.Contains(t, logs.String(), "address ")
		}
		require.NoError(t, c.Disconnect(context.Background(), ci, dev, connector.DisconnectOptions{}))

		hosttest.WriteFile(t, fk.root, "/proc/42/comm", "multipathd\n")
		opts := fastOptions()
		opts.Multipath = true
		opts.NoPortalCheck = true
		mc := iscsi.New(h, opts)
		mci := connInfo(t, `{"driver_volume_type":"iscsi","target_portals":["127.0.0.1:3260","127.0.0.2:3260"],"target_iqns":["`+tgtIQN+`","`+tgtIQN+`"],"target_luns":[1,1]}`)
		_, err = mc.Connect(context.Background(), mci)
		require.ErrorIs(t, err, scsi.ErrNoWWID)
		require.Contains(t, err.Error(), "without --multipath")
		require.Equal(t, 0, fk.maps, "no map was asked for")
	}
}
