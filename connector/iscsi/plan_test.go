package iscsi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/host/hosttest"
)

// TestPlanChangesNothing: the connect and disconnect plans name the
// logins, LUNs, disks and logouts, run no command and leave sessions,
// records and disks as they were; a bad dict fails the plan as it would
// fail the connect.
func TestPlanChangesNothing(t *testing.T) {
	fk, r, h := newFakeKernel(t)
	fk.password = secret
	fk.luns = map[int]string{1: fk.luns[1]}
	c := iscsi.New(h, fastOptions())
	ctx := context.Background()
	ci := singleInfo(t, 1, true)

	p, err := c.PlanConnect(ctx, ci)
	require.NoError(t, err)
	require.Empty(t, r.Calls())
	require.Equal(t, "connect", p.Action)
	steps := strings.Join(p.Steps, "\n")
	require.Contains(t, steps, "iscsiadm -m node -T "+tgtIQN+" -p 127.0.0.1:3260 -o new")
	require.Contains(t, steps, "--login")
	require.Contains(t, steps, "scan LUN 1")
	require.Contains(t, steps, "password ***")
	require.NotContains(t, steps, secret)
	require.Equal(t, connector.PlanDetail{Key: "kernel_luns", Value: []int{1}}, p.Details[2])

	p, err = c.PlanDisconnect(ctx, ci, nil, connector.DisconnectOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"nothing of this volume is attached: nothing to do"}, p.Steps)

	dev, err := c.Connect(ctx, ci)
	require.NoError(t, err)
	n := len(r.Calls())
	sessions, records, disks := fk.state()

	p, err = c.PlanConnect(ctx, ci)
	require.NoError(t, err)
	require.Contains(t, p.Steps[0], "reuse session 1")
	p, err = c.PlanDisconnect(ctx, ci, dev, connector.DisconnectOptions{})
	require.NoError(t, err)
	steps = strings.Join(p.Steps, "\n")
	require.Contains(t, steps, "flush and delete /dev/sda")
	require.Contains(t, steps, "iscsiadm -m session -r 1 --logout")
	require.Len(t, r.Calls(), n, "planning runs nothing")
	s2, r2, d2 := fk.state()
	require.Equal(t, []any{sessions, records, disks}, []any{s2, r2, d2})

	_, err = c.PlanConnect(ctx, connInfo(t, `{"driver_volume_type":"iscsi","data":{"target_portal":"127.0.0.1","target_iqn":"--x","target_lun":1}}`))
	require.ErrorIs(t, err, connector.ErrInvalid)
	require.NoError(t, c.Disconnect(ctx, ci, dev, connector.DisconnectOptions{}))
}

// TestPlanMultipathNamesDiscoveryAndMap: with multipathd running and one
// portal, the plan says SendTargets discovery and the map would come, and
// runs neither; a host name portal is shown resolved.
func TestPlanMultipathNamesDiscoveryAndMap(t *testing.T) {
	fk, r, h := newFakeKernel(t)
	hosttest.WriteFile(t, fk.root, "/proc/42/comm", "multipathd\n")
	opts := fastOptions()
	opts.Multipath = true
	opts.Resolver = &fakeResolver{answers: map[string][]string{"san-a": {"127.0.0.1"}}}
	c := iscsi.New(h, opts)
	p, err := c.PlanConnect(context.Background(), connInfo(t, `{"driver_volume_type":"iscsi","data":{"target_portal":"san-a","target_iqn":"`+tgtIQN+`","target_lun":1,"access_mode":"ro"}}`))
	require.NoError(t, err)
	require.True(t, p.Multipath)
	require.Equal(t, connector.PlanDetail{Key: "portals", Value: []string{"127.0.0.1:3260"}}, p.Details[0])
	steps := strings.Join(p.Steps, "\n")
	require.Contains(t, steps, "iscsiadm -m discoverydb -t sendtargets -p 127.0.0.1:3260 --discover")
	require.Contains(t, steps, "multipathd add path")
	require.Contains(t, steps, "blockdev --setro")
	require.Empty(t, r.Calls())
}
