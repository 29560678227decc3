package fc_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/fc"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/scsi"
)

// TestConnectLUNWithoutWWID: an FC LUN without a page 0x83 designator
// attaches on one path (identified by its unit serial, or its address),
// where it used to fail reading sysfs' wwid; multipath is refused naming
// the reason, and brick's scans are taken back.
func TestConnectLUNWithoutWWID(t *testing.T) {
	for _, id := range []string{"serial:SN0042", ""} {
		h, f := realHost(t, nil)
		f.mapLUN(tgtA, 5, id)
		c := fc.New(h, quickOpts())
		vol := ci(t, `"target_wwn":"`+tgtA+`","target_lun":5`)
		dev, err := c.Connect(context.Background(), vol)
		require.NoError(t, err, id)
		require.Equal(t, "/dev/sdb", dev.Path)
		require.Empty(t, dev.WWN)
		if id != "" {
			require.Equal(t, "SN0042", dev.Extra[connector.ExtraUnitSerial], "disconnect checks it")
		}
		require.NoError(t, c.Disconnect(context.Background(), vol, dev, connector.DisconnectOptions{}))

		hosttest.WriteFile(t, h.FS.Root(), "/proc/42/comm", "multipathd\n")
		opts := quickOpts()
		opts.Multipath = true
		_, err = fc.New(h, opts).Connect(context.Background(), vol)
		require.ErrorIs(t, err, scsi.ErrNoWWID, id)
		require.Contains(t, err.Error(), "without --multipath")
		require.Len(t, f.Deletes(), 2, "the disconnect's and the refused connect's devices are gone")
		_, err = os.Stat(filepath.Join(h.FS.Root(), "/etc/multipath/wwids"))
		require.ErrorIs(t, err, os.ErrNotExist, "no WWID was added")
	}
}

// TestVerifyMatchesPathsBySerial: two paths without WWIDs are one LUN when
// their serials agree; a path with another serial is left out.
func TestVerifyMatchesPathsBySerial(t *testing.T) {
	h, f := realHost(t, nil)
	hosttest.WriteFile(t, h.FS.Root(), "/sys/devices/pci0000:00/0000:00:03.0/0000:05:00.3/host6/fc_host/host6/port_state", "Online\n")
	f.addRemotePort(6, 0, 0, 0, tgtB, true)
	f.mapLUN(tgtA, 0, "serial:SN1")
	f.mapLUN(tgtB, 0, "serial:SN2")
	c := fc.New(h, quickOpts())
	dev, err := c.Connect(context.Background(), ci(t, `"target_wwns":["`+tgtA+`","`+tgtB+`"],"target_lun":0`))
	require.NoError(t, err)
	require.Len(t, dev.Paths, 1, "the path with another serial is not the same LUN")
}
