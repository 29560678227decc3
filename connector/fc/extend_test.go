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
	"github.com/brick-storage/brick/multipath"
)

func TestExtendSinglePath(t *testing.T) {
	h, f := realHost(t, hosttest.NewRunner(nil))
	f.mapLUN(tgtA, 5, wwidVol)
	c := fc.New(h, quickOpts())
	vol := ci(t, `"target_wwn":"`+tgtA+`","target_lun":5`)
	dev, err := c.Connect(context.Background(), vol)
	require.NoError(t, err)
	disk := filepath.Base(dev.Path)
	root := h.FS.Root()
	// The fixture's disk is 1 MiB; the "rescan" has read 2 MiB already.
	hosttest.WriteFile(t, root, "/sys/block/"+disk+"/size", "4096\n")
	hosttest.WriteFile(t, root, "/sys/block/"+disk+"/device/rescan", "")

	hosttest.WriteFile(t, root, "/sys/block/"+disk+"/device/state", "offline\n")
	_, err = c.Extend(context.Background(), vol, dev, 0)
	require.ErrorIs(t, err, multipath.ErrPathDown)
	require.ErrorContains(t, err, "fc extend: grow: path "+disk+" is offline")

	hosttest.WriteFile(t, root, "/sys/block/"+disk+"/device/state", "running\n")
	sz, err := c.Extend(context.Background(), vol, dev, 2<<20)
	require.NoError(t, err)
	require.Equal(t, &connector.Resize{Device: dev.Path, OldSize: 2 << 20, NewSize: 2 << 20}, sz)
	b, err := os.ReadFile(filepath.Join(root, "/sys/block", disk, "device/rescan"))
	require.NoError(t, err)
	require.Equal(t, "1", string(b), "the path was rescanned")

	other := ci(t, `"target_wwn":"`+tgtA+`","target_lun":9`)
	_, err = c.Extend(context.Background(), other, nil, 0)
	require.ErrorContains(t, err, "no device of the volume")
}
