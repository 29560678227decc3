//go:build e2e

package e2e

// Contract tests of ironicapi against the real Ironic (Debian's 21.4.4,
// test/ironic/up.sh): every call on connectors and targets, node-scoped
// and filtered lists, sorting, pagination under a small [api] max_limit,
// and the errors Ironic gives (409 duplicates, 400 while powered on, 404,
// an API version without the volume resources).

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/ironicapi"
	"github.com/brick-storage/brick/ironicattach"
)

func iqnFor(prefix string, i int) string {
	return fmt.Sprintf("iqn.2004-10.com.example:%s-%d", prefix, i)
}

func newVolumeID(i int) string {
	return fmt.Sprintf("7b6c1a6e-3f1e-4a53-b8f1-%012d", i)
}

func TestIronicConnectorContract(t *testing.T) {
	lane(t, laneServices)
	bed := realIronic(t)
	ctx := testContext(t)
	sc, _ := bed.client(t)
	node := newNode(t, ctx, sc, "conn", ironicapi.PowerOff)
	wwpn := fmt.Sprintf("21%014x", time.Now().UnixNano()&0xffffffffffffff)

	// create: type and ID normalized, node by UUID
	c, err := ironicapi.CreateConnector(ctx, sc, ironicapi.ConnectorCreateOpts{
		NodeUUID: node.UUID, Type: "wwpn", ConnectorID: "0x" + strings.ToUpper(wwpn),
		Extra: map[string]any{"rack": "r1"},
	}).Extract()
	require.NoError(t, err)
	require.Equal(t, node.UUID, c.NodeUUID)
	require.Equal(t, "wwpn", c.Type)
	require.Equal(t, wwpn, c.ConnectorID)
	require.Equal(t, map[string]any{"rack": "r1"}, c.Extra)
	require.False(t, c.CreatedAt.IsZero())
	iqn, err := ironicapi.CreateConnector(ctx, sc, ironicapi.ConnectorCreateOpts{NodeUUID: node.UUID, Type: "iqn", ConnectorID: iqnFor(node.Name, 0)}).Extract()
	require.NoError(t, err)

	// show (all fields, and fields=)
	got, err := ironicapi.GetConnector(ctx, sc, c.UUID, nil).Extract()
	require.NoError(t, err)
	require.Equal(t, c.ConnectorID, got.ConnectorID)
	got, err = ironicapi.GetConnector(ctx, sc, c.UUID, &ironicapi.GetOpts{Fields: []string{"uuid", "type"}}).Extract()
	require.NoError(t, err)
	require.Equal(t, "wwpn", got.Type)
	require.Empty(t, got.ConnectorID, "fields= returns only what was asked")

	// lists: by node name, node-scoped by UUID, detail, fields, sort
	byName, err := ironicapi.AllConnectors(ctx, ironicapi.ListConnectors(sc, ironicapi.ConnectorListOpts{Node: node.Name}), 0)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{c.UUID, iqn.UUID}, uuidsOf(byName))
	require.Nil(t, byName[0].Extra, "plain list has no extra")
	scoped, err := ironicapi.AllConnectors(ctx, ironicapi.ListNodeConnectors(sc, node.UUID, ironicapi.ConnectorListOpts{Detail: true, SortKey: "connector_id", SortDir: "desc"}), 0)
	require.NoError(t, err)
	require.Equal(t, []string{iqn.UUID, c.UUID}, uuidsOf(scoped), "iqn... sorts after 21... (the wwpn): first when descending")
	require.NotNil(t, scoped[0].Extra, "detail list has extra")
	fields, err := ironicapi.AllConnectors(ctx, ironicapi.ListConnectors(sc, ironicapi.ConnectorListOpts{Node: node.UUID, Fields: []string{"uuid", "connector_id"}, SortKey: "connector_id"}), 0)
	require.NoError(t, err)
	require.Equal(t, []string{c.UUID, iqn.UUID}, uuidsOf(fields))
	require.Empty(t, fields[0].Type)

	// patch (node powered off): type+ID pair, extra add and remove
	upd, err := ironicapi.UpdateConnector(ctx, sc, c.UUID, ironicapi.ConnectorUpdateOpts{
		ironicapi.Replace("/type", "wwnn"), ironicapi.Replace("/connector_id", "20:00:00:24:ff:5a:7b:3c"),
		ironicapi.Add(ironicapi.ExtraPath("a-b_c"), 1), ironicapi.Remove(ironicapi.ExtraPath("rack")),
	}).Extract()
	require.NoError(t, err)
	require.Equal(t, "wwnn", upd.Type)
	require.Equal(t, "20000024ff5a7b3c", upd.ConnectorID)
	require.Equal(t, map[string]any{"a-b_c": float64(1)}, upd.Extra)
	require.False(t, upd.UpdatedAt.IsZero())

	// delete, then it is gone
	require.NoError(t, ironicapi.DeleteConnector(ctx, sc, c.UUID).ExtractErr())
	_, err = ironicapi.GetConnector(ctx, sc, c.UUID, nil).Extract()
	require.ErrorIs(t, err, apierr.ErrNotFound)
	err = ironicapi.DeleteConnector(ctx, sc, c.UUID).ExtractErr()
	require.ErrorIs(t, err, apierr.ErrNotFound)
	require.NoError(t, ironicapi.DeleteConnector(ctx, sc, iqn.UUID).ExtractErr())
}

func TestIronicTargetContract(t *testing.T) {
	lane(t, laneServices)
	bed := realIronic(t)
	ctx := testContext(t)
	sc, _ := bed.client(t)
	node := newNode(t, ctx, sc, "tgt", ironicapi.PowerOff)

	props := map[string]any{
		"target_iqn": "iqn.2010-10.org.openstack:volume-1", "target_portal": "127.0.0.1:3260", "target_lun": 1,
		"auth_method": "CHAP", "auth_username": "user", "auth_password": "s3cr3t-pass",
	}
	t0, err := ironicapi.CreateTarget(ctx, sc, ironicapi.TargetCreateOpts{
		NodeUUID: node.UUID, VolumeType: "iscsi", BootIndex: 0, VolumeID: newVolumeID(1), Properties: props,
		Extra: map[string]any{"by": "e2e"},
	}).Extract()
	require.NoError(t, err)
	require.Equal(t, 0, t0.BootIndex)
	require.Equal(t, "iscsi", t0.VolumeType)
	require.Equal(t, "******", t0.Properties["auth_password"], "Ironic masks secrets on output")
	require.Equal(t, "user", t0.Properties["auth_username"])
	t1, err := ironicapi.CreateTarget(ctx, sc, ironicapi.TargetCreateOpts{
		NodeUUID: node.UUID, VolumeType: "fibre_channel", BootIndex: 1, VolumeID: newVolumeID(2),
	}).Extract()
	require.NoError(t, err)

	got, err := ironicapi.GetTarget(ctx, sc, t0.UUID, nil).Extract()
	require.NoError(t, err)
	require.Equal(t, newVolumeID(1), got.VolumeID)
	require.NotContains(t, fmt.Sprint(got.Properties), "s3cr3t-pass")

	list, err := ironicapi.AllTargets(ctx, ironicapi.ListTargets(sc, ironicapi.TargetListOpts{Node: node.Name, SortKey: "boot_index", SortDir: "desc"}), 0)
	require.NoError(t, err)
	require.Equal(t, []string{t1.UUID, t0.UUID}, targetUUIDs(list))
	scoped, err := ironicapi.AllTargets(ctx, ironicapi.ListNodeTargets(sc, node.UUID, ironicapi.TargetListOpts{Detail: true}), 0)
	require.NoError(t, err)
	require.Len(t, scoped, 2)
	fields, err := ironicapi.AllTargets(ctx, ironicapi.ListTargets(sc, ironicapi.TargetListOpts{Node: node.UUID, Fields: []string{"uuid", "properties"}}), 0)
	require.NoError(t, err)
	require.Len(t, fields, 2)

	upd, err := ironicapi.UpdateTarget(ctx, sc, t1.UUID, ironicapi.TargetUpdateOpts{
		ironicapi.Replace("/boot_index", 5), ironicapi.Add(ironicapi.PropertyPath("target_wwn"), []string{"500a0982991b8dc5"}),
	}).Extract()
	require.NoError(t, err)
	require.Equal(t, 5, upd.BootIndex)
	upd, err = ironicapi.UpdateTarget(ctx, sc, t0.UUID, ironicapi.TargetUpdateOpts{
		ironicapi.Remove(ironicapi.PropertyPath("auth_password")), ironicapi.Remove(ironicapi.ExtraPath("by")),
	}).Extract()
	require.NoError(t, err)
	require.NotContains(t, upd.Properties, "auth_password")
	require.Empty(t, upd.Extra)

	require.NoError(t, ironicapi.DeleteTarget(ctx, sc, t0.UUID).ExtractErr())
	require.NoError(t, ironicapi.DeleteTarget(ctx, sc, t1.UUID).ExtractErr())
	_, err = ironicapi.GetTarget(ctx, sc, t1.UUID, nil).Extract()
	require.ErrorIs(t, err, apierr.ErrNotFound)
}

// TestIronicPaginationKeepsNode: with a small max_limit, a node's list
// spans several pages; Ironic's next link drops node= (and the node-scoped
// path), and brick's pager still returns exactly that node's records.
func TestIronicPaginationKeepsNode(t *testing.T) {
	lane(t, laneServices)
	bed := realIronic(t)
	if bed.maxLimit == 0 || bed.maxLimit > 5 {
		t.Skipf("needs Ironic started with BRICK_TB_IRONIC_MAX_LIMIT <= 5 (have %d)", bed.maxLimit)
	}
	ctx := testContext(t)
	sc, counter := bed.client(t)
	a := newNode(t, ctx, sc, "page-a", "")
	b := newNode(t, ctx, sc, "page-b", "")
	const n = 7 // > 2 pages at max_limit 3
	var wantConn, wantTgt []string
	for i := 0; i < n; i++ {
		// Interleave so that every page of the unfiltered list mixes nodes.
		for _, nd := range []nodes.Node{b, a} {
			c, err := ironicapi.CreateConnector(ctx, sc, ironicapi.ConnectorCreateOpts{NodeUUID: nd.UUID, Type: "iqn", ConnectorID: iqnFor(nd.Name, i)}).Extract()
			require.NoError(t, err)
			tg, err := ironicapi.CreateTarget(ctx, sc, ironicapi.TargetCreateOpts{NodeUUID: nd.UUID, VolumeType: "iscsi", BootIndex: i, VolumeID: newVolumeID(i)}).Extract()
			require.NoError(t, err)
			if nd.UUID == a.UUID {
				wantConn = append(wantConn, c.UUID)
				wantTgt = append(wantTgt, tg.UUID)
			}
		}
	}

	// What Ironic itself does: the first page's next link has no node=.
	raw := *sc
	raw.Microversion = "1.32"
	var first struct {
		Next string `json:"next"`
	}
	_, err := raw.Get(ctx, raw.ServiceURL("volume", "connectors")+"?node="+a.Name, &first, nil)
	require.NoError(t, err)
	require.NotEmpty(t, first.Next)
	require.NotContains(t, first.Next, "node=", "Ironic's next link drops the node filter (the bug brick works around)")

	pages := func(f func() ([]string, error)) []string {
		before := counter.n.Load()
		got, err := f()
		require.NoError(t, err)
		require.GreaterOrEqual(t, counter.n.Load()-before, int64((n+bed.maxLimit-1)/bed.maxLimit), "followed every page")
		return got
	}
	sorted := func(s []string) []string { s = append([]string(nil), s...); sort.Strings(s); return s }
	for name, list := range map[string]func() ([]string, error){
		"connectors node=name": func() ([]string, error) {
			l, err := ironicapi.AllConnectors(ctx, ironicapi.ListConnectors(sc, ironicapi.ConnectorListOpts{Node: a.Name}), 0)
			return requireNode(t, a.UUID, l), err
		},
		"connectors node-scoped detail": func() ([]string, error) {
			l, err := ironicapi.AllConnectors(ctx, ironicapi.ListNodeConnectors(sc, a.UUID, ironicapi.ConnectorListOpts{Detail: true}), 0)
			return requireNode(t, a.UUID, l), err
		},
		"connectors node= fields": func() ([]string, error) {
			l, err := ironicapi.AllConnectors(ctx, ironicapi.ListConnectors(sc, ironicapi.ConnectorListOpts{Node: a.UUID, Fields: []string{"uuid", "node_uuid"}}), 0)
			return requireNode(t, a.UUID, l), err
		},
	} {
		t.Run(name, func(t *testing.T) { require.Equal(t, sorted(wantConn), sorted(pages(list))) })
	}
	for name, list := range map[string]func() ([]ironicapi.VolumeTarget, error){
		"targets node=name": func() ([]ironicapi.VolumeTarget, error) {
			return ironicapi.AllTargets(ctx, ironicapi.ListTargets(sc, ironicapi.TargetListOpts{Node: a.Name, SortKey: "boot_index"}), 0)
		},
		"targets node-scoped": func() ([]ironicapi.VolumeTarget, error) {
			return ironicapi.AllTargets(ctx, ironicapi.ListNodeTargets(sc, a.UUID, ironicapi.TargetListOpts{SortKey: "boot_index"}), 0)
		},
	} {
		t.Run(name, func(t *testing.T) {
			before := counter.n.Load()
			l, err := list()
			require.NoError(t, err)
			require.Greater(t, counter.n.Load()-before, int64(2))
			for _, tg := range l {
				require.Equal(t, a.UUID, tg.NodeUUID, "another node's target leaked in")
			}
			require.Equal(t, wantTgt, targetUUIDs(l), "sorted by boot index across pages")
		})
	}
	// A limit stops early and a marker resumes.
	l, err := ironicapi.AllConnectors(ctx, ironicapi.ListConnectors(sc, ironicapi.ConnectorListOpts{Node: a.UUID, Limit: 2}), 4)
	require.NoError(t, err)
	require.Len(t, l, 4)
	rest, err := ironicapi.AllConnectors(ctx, ironicapi.ListConnectors(sc, ironicapi.ConnectorListOpts{Node: a.UUID, Marker: l[3].UUID}), 0)
	require.NoError(t, err)
	require.Equal(t, sorted(wantConn), sorted(append(uuidsOf(l), uuidsOf(rest)...)))
	requireNode(t, a.UUID, rest)
}

func TestIronicErrors(t *testing.T) {
	lane(t, laneServices)
	bed := realIronic(t)
	ctx := testContext(t)
	sc, _ := bed.client(t)
	on := newNode(t, ctx, sc, "err-on", ironicapi.PowerOn)
	other := newNode(t, ctx, sc, "err-other", "")
	id := iqnFor(on.Name, 0)

	c, err := ironicapi.CreateConnector(ctx, sc, ironicapi.ConnectorCreateOpts{NodeUUID: on.UUID, Type: "iqn", ConnectorID: id}).Extract()
	require.NoError(t, err, "create works while powered on")

	t.Run("duplicate connector 409, across nodes", func(t *testing.T) {
		_, err := ironicapi.CreateConnector(ctx, sc, ironicapi.ConnectorCreateOpts{NodeUUID: other.UUID, Type: "iqn", ConnectorID: id}).Extract()
		require.ErrorIs(t, err, apierr.ErrConflict)
		require.ErrorContains(t, err, "already exists")
		require.ErrorContains(t, err, "connector list --long")
		t.Log(err)
	})
	tg, err := ironicapi.CreateTarget(ctx, sc, ironicapi.TargetCreateOpts{NodeUUID: on.UUID, VolumeType: "iscsi", BootIndex: 0, VolumeID: newVolumeID(10)}).Extract()
	require.NoError(t, err)
	t.Run("duplicate boot index 409", func(t *testing.T) {
		_, err := ironicapi.CreateTarget(ctx, sc, ironicapi.TargetCreateOpts{NodeUUID: on.UUID, VolumeType: "iscsi", BootIndex: 0, VolumeID: newVolumeID(11)}).Extract()
		require.ErrorIs(t, err, apierr.ErrConflict)
		require.ErrorContains(t, err, "boot index '0'")
		require.ErrorContains(t, err, "another --boot-index")
		t.Log(err)
	})
	t.Run("update and delete while powered on: 400, told to power off", func(t *testing.T) {
		for _, err := range []error{
			ironicapi.UpdateConnector(ctx, sc, c.UUID, ironicapi.ConnectorUpdateOpts{ironicapi.Add(ironicapi.ExtraPath("k"), "v")}).Err,
			ironicapi.DeleteConnector(ctx, sc, c.UUID).ExtractErr(),
			ironicapi.UpdateTarget(ctx, sc, tg.UUID, ironicapi.TargetUpdateOpts{ironicapi.Replace("/boot_index", 3)}).Err,
			ironicapi.DeleteTarget(ctx, sc, tg.UUID).ExtractErr(),
		} {
			require.ErrorIs(t, err, apierr.ErrInvalidState)
			var e *apierr.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, 400, e.Status)
			node, state, ok := ironicapi.NodePowerState(err)
			require.True(t, ok, err)
			require.Equal(t, ironicapi.PowerOn, state)
			require.Equal(t, on.UUID, node)
			require.ErrorContains(t, err, "power it off (openstack baremetal node power off "+on.UUID+")")
		}
		t.Log(ironicapi.DeleteTarget(ctx, sc, tg.UUID).ExtractErr())
	})
	t.Run("power state never set is not off either", func(t *testing.T) {
		oc, err := ironicapi.CreateConnector(ctx, sc, ironicapi.ConnectorCreateOpts{NodeUUID: other.UUID, Type: "iqn", ConnectorID: iqnFor(other.Name, 7)}).Extract()
		require.NoError(t, err)
		err = ironicapi.DeleteConnector(ctx, sc, oc.UUID).ExtractErr()
		require.ErrorIs(t, err, apierr.ErrInvalidState)
		require.ErrorContains(t, err, "unknown (never set)")
	})
	t.Run("TargetRegistry delete while on says how to finish", func(t *testing.T) {
		err := ironicattach.TargetRegistry{Client: sc}.DeleteTarget(ctx, on.Name, tg.UUID)
		require.ErrorIs(t, err, apierr.ErrInvalidState)
		require.ErrorContains(t, err, "brick ironic target delete "+tg.UUID)
	})
	t.Run("after power off they work", func(t *testing.T) {
		setPower(t, ctx, sc, on.UUID, ironicapi.PowerOff)
		require.NoError(t, ironicattach.TargetRegistry{Client: sc}.DeleteTarget(ctx, on.Name, tg.UUID))
		require.NoError(t, ironicattach.TargetRegistry{Client: sc}.DeleteTarget(ctx, on.Name, tg.UUID), "already gone is success")
		require.NoError(t, ironicapi.DeleteConnector(ctx, sc, c.UUID).ExtractErr())
	})
	t.Run("bad node", func(t *testing.T) {
		_, err := ironicapi.ResolveNode(ctx, sc, "no-such-node-e2e")
		require.ErrorIs(t, err, apierr.ErrNotFound)
		require.ErrorContains(t, err, "Node no-such-node-e2e could not be found")
		_, err = ironicapi.AllConnectors(ctx, ironicapi.ListConnectors(sc, ironicapi.ConnectorListOpts{Node: "no-such-node-e2e"}), 0)
		require.ErrorIs(t, err, apierr.ErrNotFound)
		_, err = ironicapi.AllTargets(ctx, ironicapi.ListNodeTargets(sc, "11111111-2222-4333-8444-555555555555", nil), 0)
		require.ErrorIs(t, err, apierr.ErrNotFound)
		// Ironic answers a UUID-shaped unknown node_uuid in a body with 400.
		_, err = ironicapi.CreateConnector(ctx, sc, ironicapi.ConnectorCreateOpts{NodeUUID: "11111111-2222-4333-8444-555555555555", Type: "ip", ConnectorID: "192.0.2.78"}).Extract()
		require.ErrorIs(t, err, apierr.ErrInvalid)
		t.Log(err)
	})
	t.Run("server without API 1.32", func(t *testing.T) {
		// The real Ironic, asked for 1.31 by a proxy that plays an Ironic
		// which does not know 1.32: its genuine bare 404.
		target, err := url.Parse(bed.endpoint)
		require.NoError(t, err)
		proxy := httputil.NewSingleHostReverseProxy(target)
		inner := proxy.Director
		proxy.Director = func(r *http.Request) {
			inner(r)
			r.Header.Set("X-OpenStack-Ironic-API-Version", "1.31")
			r.Header.Del("OpenStack-API-Version")
		}
		srv := httptest.NewServer(proxy)
		defer srv.Close()
		old := ironicBed{endpoint: srv.URL}
		osc, _ := old.client(t)
		_, err = ironicapi.AllConnectors(ctx, ironicapi.ListConnectors(osc, nil), 0)
		require.ErrorIs(t, err, apierr.ErrUnsupported)
		require.ErrorContains(t, err, "Ironic too old for volume resources")
		t.Log(err)
		_, err = ironicapi.CreateTarget(ctx, osc, ironicapi.TargetCreateOpts{NodeUUID: other.UUID, VolumeType: "iscsi", VolumeID: newVolumeID(12)}).Extract()
		require.ErrorIs(t, err, apierr.ErrUnsupported)
	})
	t.Run("microversion above the server's: 406, not too old", func(t *testing.T) {
		hi := *sc
		hi.Microversion = "1.999"
		_, err := ironicapi.AllConnectors(ctx, ironicapi.ListConnectors(&hi, nil), 0)
		var e *apierr.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, 406, e.Status)
		require.False(t, errors.Is(err, apierr.ErrUnsupported))
		t.Log(err)
	})
	t.Run("client-side validation the server lacks", func(t *testing.T) {
		for _, err := range []error{
			ironicapi.CreateConnector(ctx, sc, ironicapi.ConnectorCreateOpts{NodeUUID: other.UUID, Type: "nqn", ConnectorID: "x"}).Err,
			ironicapi.CreateConnector(ctx, sc, ironicapi.ConnectorCreateOpts{NodeUUID: other.UUID, Type: "mac", ConnectorID: "10.0.0.1"}).Err,
			ironicapi.CreateTarget(ctx, sc, ironicapi.TargetCreateOpts{NodeUUID: other.UUID, VolumeType: "bogus", VolumeID: newVolumeID(13)}).Err,
			ironicapi.CreateTarget(ctx, sc, ironicapi.TargetCreateOpts{NodeUUID: other.UUID, VolumeType: "iscsi", BootIndex: -1, VolumeID: newVolumeID(13)}).Err,
			ironicapi.CreateTarget(ctx, sc, ironicapi.TargetCreateOpts{NodeUUID: other.UUID, VolumeType: "iscsi", VolumeID: "vol-1"}).Err,
			ironicapi.CreateTarget(ctx, sc, ironicapi.TargetCreateOpts{NodeUUID: other.Name, VolumeType: "iscsi", VolumeID: newVolumeID(13)}).Err,
		} {
			require.ErrorIs(t, err, apierr.ErrInvalid)
			var e *apierr.Error
			require.ErrorAs(t, err, &e)
			require.Zero(t, e.Status, "refused before sending")
		}
		l, err := ironicapi.AllTargets(ctx, ironicapi.ListTargets(sc, ironicapi.TargetListOpts{Node: other.UUID}), 0)
		require.NoError(t, err)
		require.Empty(t, l)
	})
	t.Run("capabilities", func(t *testing.T) {
		changed, err := ironicattach.SetCapabilities(ctx, sc, other.UUID, []ironicattach.Capability{{Key: "iscsi_boot", Value: "True"}})
		require.NoError(t, err)
		require.True(t, changed)
		changed, err = ironicattach.SetCapabilities(ctx, sc, other.UUID, []ironicattach.Capability{{Key: "iscsi_boot", Value: "True"}, {Key: "fibre_channel_boot", Value: "True"}})
		require.NoError(t, err)
		require.True(t, changed)
		n, err := ironicapi.GetNode(ctx, sc, other.Name).Extract()
		require.NoError(t, err)
		require.Equal(t, "iscsi_boot:True,fibre_channel_boot:True", n.Properties["capabilities"])
	})
}

func uuidsOf(cs []ironicapi.VolumeConnector) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.UUID
	}
	return out
}

func targetUUIDs(ts []ironicapi.VolumeTarget) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.UUID
	}
	return out
}

func requireNode(t *testing.T, node string, cs []ironicapi.VolumeConnector) []string {
	t.Helper()
	for _, c := range cs {
		require.Equal(t, node, c.NodeUUID, "another node's connector leaked in")
	}
	return uuidsOf(cs)
}
