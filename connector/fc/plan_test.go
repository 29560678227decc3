package fc_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/fc"
)

// TestPlanChangesNothing: the plan names the scan brick would make on the
// online HBA, the port sysfs does not show yet, and after a connect the
// disk a disconnect would delete; planning scans and deletes nothing.
func TestPlanChangesNothing(t *testing.T) {
	h, f := realHost(t, nil)
	f.mapLUN(tgtA, 5, wwidVol)
	c := fc.New(h, quickOpts())
	vol := ci(t, `"target_wwn":["`+tgtA+`","`+strings.Repeat("7", 16)+`"],"target_lun":5`)

	p, err := c.PlanConnect(context.Background(), vol)
	require.NoError(t, err)
	steps := strings.Join(p.Steps, "\n")
	require.Contains(t, steps, `scan 5:0:0:5 (write "0 0 5" to /sys/class/scsi_host/host5/scan)`)
	require.Contains(t, steps, "0x7777777777777777 lun 5: target port not in sysfs yet")
	require.Empty(t, f.Scans())

	dev, err := c.Connect(context.Background(), vol)
	require.NoError(t, err)
	p, err = c.PlanConnect(context.Background(), vol)
	require.NoError(t, err)
	require.Contains(t, strings.Join(p.Steps, "\n"), "LUN present at 5:0:0:5; no scan")
	p, err = c.PlanDisconnect(context.Background(), vol, dev, connector.DisconnectOptions{})
	require.NoError(t, err)
	require.Contains(t, strings.Join(p.Steps, "\n"), "flush and delete "+dev.Path+" (5:0:0:5)")
	require.Len(t, f.Scans(), 1)
	require.Empty(t, f.Deletes())

	_, err = c.PlanConnect(context.Background(), ci(t, `"target_wwn":"nope","target_lun":5`))
	require.ErrorIs(t, err, connector.ErrInvalid)
}

// TestPlanWarnsOfSinglePathFallback: the plan comes from the connect's own
// decision, so asking for multipath without multipathd shows the single
// path fallback as a warning, as the connect logs it.
func TestPlanWarnsOfSinglePathFallback(t *testing.T) {
	h, f := realHost(t, nil)
	f.mapLUN(tgtA, 5, wwidVol)
	opts := quickOpts()
	opts.Multipath = true
	p, err := fc.New(h, opts).PlanConnect(context.Background(), ci(t, `"target_wwn":["`+tgtA+`"],"target_lun":5`))
	require.NoError(t, err)
	require.False(t, p.Multipath)
	require.Contains(t, strings.Join(p.Warnings, "\n"), "multipathd is not running")
}
