package iscsi_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/host/hosttest"
)

// TestISERInterface: driver_volume_type "iser" (Cinder's LIO and tgt
// targets with target_protocol iser, cinder/volume/targets/iscsi.py
// _get_iscsi_properties) and the transport keys pick open-iscsi's iser
// interface; offload transports and contradictions are refused naming
// the key.
func TestISERInterface(t *testing.T) {
	const portal = `"target_portal":"192.0.2.10:3260","target_iqn":"` + tgtIQN + `","target_lun":1`
	for _, tc := range []struct {
		name, typ, extra string
		want, wantErr    string
	}{
		{name: "iscsi", typ: "iscsi", want: iscsi.IfaceTCP},
		{name: "iser type", typ: "iser", want: iscsi.IfaceISER},
		{name: "iser type upper case", typ: "ISER", want: iscsi.IfaceISER},
		{name: "transport_name", typ: "iscsi", extra: `,"transport_name":"iser"`, want: iscsi.IfaceISER},
		{name: "iscsi_interface", typ: "iscsi", extra: `,"iscsi_interface":"iser"`, want: iscsi.IfaceISER},
		{name: "default interface", typ: "iscsi", extra: `,"iscsi_interface":"default"`, want: iscsi.IfaceTCP},
		{name: "offload", typ: "iscsi", extra: `,"iscsi_interface":"bnx2i.00:11:22:33:44:55"`, wantErr: "iscsi_interface"},
		{name: "contradiction", typ: "iser", extra: `,"transport_name":"tcp"`, wantErr: "transport_name"},
		{name: "not a string", typ: "iscsi", extra: `,"transport_name":1`, wantErr: "transport_name"},
		{name: "other type", typ: "fibre_channel", wantErr: "driver_volume_type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := iscsi.ParseInfo(connInfo(t, `{"driver_volume_type":"`+tc.typ+`","data":{`+portal+tc.extra+`}}`))
			if tc.wantErr != "" {
				require.ErrorIs(t, err, connector.ErrInvalid)
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, info.Iface)
		})
	}
}

func iserInfo(t *testing.T, portals ...string) connector.ConnectionInfo {
	var ps, iqns, luns []string
	for _, p := range portals {
		ps = append(ps, `"`+p+`"`)
		iqns = append(iqns, `"`+tgtIQN+`"`)
		luns = append(luns, "1")
	}
	return connInfo(t, `{"driver_volume_type":"iser","data":{"target_discovered":false,"target_portals":[`+strings.Join(ps, ",")+`],"target_iqns":[`+strings.Join(iqns, ",")+`],"target_luns":[`+strings.Join(luns, ",")+`]}}`)
}

// TestISERMultipathConnectDisconnect: every record, login and logout goes
// through the iser interface, and the detach leaves no session, record,
// disk or map.
func TestISERMultipathConnectDisconnect(t *testing.T) {
	fk, r, h := newFakeKernel(t)
	hosttest.WriteFile(t, fk.root, "/proc/42/comm", "multipathd\n")
	fk.luns = map[int]string{1: fk.luns[1]}
	opts := fastOptions()
	opts.Multipath = true
	c := iscsi.New(h, opts)
	ctx := context.Background()
	ci := iserInfo(t, "127.0.0.1:3260", "127.0.0.2:3260")

	dev, err := c.Connect(ctx, ci)
	require.NoError(t, err)
	require.Equal(t, "/dev/dm-0", dev.Path)
	require.Len(t, dev.Paths, 2)
	for _, p := range []string{"127.0.0.1:3260", "127.0.0.2:3260"} {
		require.Contains(t, r.Calls(), "iscsiadm -m node -T "+tgtIQN+" -p "+p+" -I iser -o new")
		require.Contains(t, r.Calls(), "iscsiadm -m node -T "+tgtIQN+" -p "+p+" -I iser --login")
		rec, err := os.ReadFile(fk.path(fk.recordFile(tgtIQN, p)))
		require.NoError(t, err)
		require.Contains(t, string(rec), "iface.transport_name = iser\n")
	}

	require.NoError(t, c.Disconnect(ctx, ci, dev, connector.DisconnectOptions{}))
	sessions, records, disks := fk.state()
	require.Zero(t, sessions)
	require.Zero(t, records)
	require.Empty(t, disks)
	require.NoFileExists(t, fk.path("/dev/dm-0"))
}

// TestISERReusesTCPRecord: a record left by a TCP attach of the same
// target is switched to the iser interface before the login.
func TestISERReusesTCPRecord(t *testing.T) {
	fk, _, h := newFakeKernel(t)
	fk.luns = map[int]string{1: fk.luns[1]}
	hosttest.WriteFile(t, fk.root, fk.recordFile(tgtIQN, "127.0.0.1:3260"), "node.name = "+tgtIQN+"\niface.iscsi_ifacename = default\niface.transport_name = tcp\nnode.session.scan = auto\n")
	c := iscsi.New(h, fastOptions())
	ci := iserInfo(t, "127.0.0.1:3260")
	dev, err := c.Connect(context.Background(), ci)
	require.NoError(t, err)
	require.NoError(t, c.Disconnect(context.Background(), ci, dev, connector.DisconnectOptions{}))
	sessions, records, _ := fk.state()
	require.Zero(t, sessions)
	require.Zero(t, records)
}

// TestPlanISER: the dry run of an iSER volume comes from the same
// decision as its connect: the interface in every command, and the single
// path fallback's warning (multipathd not running) in the plan.
func TestPlanISER(t *testing.T) {
	_, r, h := newFakeKernel(t)
	opts := fastOptions()
	opts.Multipath = true
	c := iscsi.New(h, opts)
	p, err := c.PlanConnect(context.Background(), iserInfo(t, "127.0.0.1:3260", "127.0.0.2:3260"))
	require.NoError(t, err)
	require.Empty(t, r.Calls())
	require.False(t, p.Multipath)
	require.Contains(t, p.Details, connector.PlanDetail{Key: "transport", Value: "iser"})
	steps := strings.Join(p.Steps, "\n")
	require.Contains(t, steps, "iscsiadm -m node -T "+tgtIQN+" -p 127.0.0.2:3260 -I iser --login")
	require.Contains(t, steps, "interface iser")
	require.Contains(t, strings.Join(p.Warnings, "\n"), "multipathd is not running")
}
