package ironicattach

import (
	"context"
	"errors"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/ironicapi"
	"github.com/brick-storage/brick/ironicapi/ironictest"
)

const (
	nodeA = "c30b0d71-fb33-4e21-a129-f02b2b817285"
	nodeB = "24eaabfa-e651-4d63-9a4d-b90f914b1002"
)

func TestRegister(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*ironictest.Server, *gophercloud.ServiceClient) {
		f := ironictest.New(t, 2)
		f.AddNode("node-a", nodeA, "")
		f.AddNode("node-b", nodeB, ironicapi.PowerOff)
		return f, f.Client(t)
	}
	want := []ConnectorSpec{
		{Type: "iqn", ConnectorID: "iqn.2004-10.com.example:host-a"},
		{Type: "wwpn", ConnectorID: "21:00:00:24:ff:5a:7b:3c"},
		{Type: "mac", ConnectorID: "52:54:00:AB:CD:EF"},
	}

	t.Run("twice is idempotent", func(t *testing.T) {
		f, sc := setup(t)
		f.AddConnector(nodeA, "ip", "10.0.0.9") // another tool's: kept
		r, err := Register(ctx, sc, nodeA, want, RegisterOpts{})
		require.NoError(t, err)
		require.Len(t, r.Created, 3)
		require.Equal(t, "21000024ff5a7b3c", r.Created[1].ConnectorID)
		r, err = Register(ctx, sc, nodeA, want, RegisterOpts{})
		require.NoError(t, err)
		require.Empty(t, r.Created)
		require.Len(t, r.Kept, 3)
		require.Len(t, f.Conns, 4)
	})

	t.Run("owned by another node", func(t *testing.T) {
		f, sc := setup(t)
		other := f.AddConnector(nodeB, "iqn", "iqn.2004-10.com.example:host-a")
		_, err := Register(ctx, sc, nodeA, want, RegisterOpts{})
		require.ErrorIs(t, err, apierr.ErrConflict)
		require.ErrorContains(t, err, "registered to node node-b ("+nodeB+") as connector "+other.UUID)
		require.Len(t, f.Conns, 1, "nothing created")
	})

	t.Run("prune needs power off", func(t *testing.T) {
		f, sc := setup(t)
		f.AddConnector(nodeA, "iqn", "iqn.2004-10.com.example:old")
		f.AddConnector(nodeA, "port", "3b6d0e34-0b0c-4e3f-9a6a-111111111111") // never pruned
		_, err := Register(ctx, sc, nodeA, want, RegisterOpts{Prune: true})
		require.ErrorIs(t, err, apierr.ErrInvalidState)
		require.ErrorContains(t, err, "power it off")
		f.Nodes[nodeA].PowerState = ironicapi.PowerOff
		r, err := Register(ctx, sc, nodeA, want, RegisterOpts{Prune: true})
		require.NoError(t, err)
		require.Len(t, r.Pruned, 1)
		require.Equal(t, "iqn.2004-10.com.example:old", r.Pruned[0].ConnectorID)
		require.Len(t, f.Conns, 4)
	})

	t.Run("invalid spec", func(t *testing.T) {
		_, sc := setup(t)
		_, err := Register(ctx, sc, nodeA, []ConnectorSpec{{Type: "wwpn", ConnectorID: "zz"}}, RegisterOpts{})
		require.ErrorIs(t, err, apierr.ErrInvalid)
		_, err = Register(ctx, sc, "node-a", want, RegisterOpts{})
		require.ErrorIs(t, err, apierr.ErrInvalid)
	})
}

func TestSetCapabilities(t *testing.T) {
	ctx := context.Background()
	f := ironictest.New(t, 10)
	f.AddNode("node-a", nodeA, "")
	sc := f.Client(t)

	f.Nodes[nodeA].Properties["capabilities"] = "boot_mode:uefi,iscsi_boot:False"
	changed, err := SetCapabilities(ctx, sc, nodeA, []Capability{{"iscsi_boot", "True"}, {"fibre_channel_boot", "True"}})
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, "boot_mode:uefi,iscsi_boot:True,fibre_channel_boot:True", f.Nodes[nodeA].Properties["capabilities"])
	changed, err = SetCapabilities(ctx, sc, nodeA, []Capability{{"iscsi_boot", "True"}})
	require.NoError(t, err)
	require.False(t, changed)
	_, err = SetCapabilities(ctx, sc, nodeA, []Capability{{"a,b", "c"}})
	require.ErrorIs(t, err, apierr.ErrInvalid)
}

func TestParseCapabilities(t *testing.T) {
	caps, err := ParseCapabilities(" boot_mode:uefi, ,secure_boot ,a:b:c")
	require.NoError(t, err)
	require.Equal(t, []Capability{{"boot_mode", "uefi"}, {"secure_boot", ""}, {"a", "b:c"}}, caps)
	_, err = ParseCapabilities(":x")
	require.Error(t, err)
}

func TestCinderConnector(t *testing.T) {
	conns := []ironicapi.VolumeConnector{
		{Type: "mac", ConnectorID: "52:54:00:ab:cd:ef"},
		{Type: "iqn", ConnectorID: "iqn.2004-10.com.example:a"},
		{Type: "iqn", ConnectorID: "iqn.2004-10.com.example:b"},
		{Type: "ip", ConnectorID: "192.0.2.7"},
		{Type: "wwpn", ConnectorID: "21:00:00:24:ff:5a:7b:3c"},
		{Type: "wwnn", ConnectorID: "20000024ff5a7b3c"},
		{Type: "wwpn", ConnectorID: "garbage"},
	}
	got, err := CinderConnector(nodeA, conns, true)
	require.NoError(t, err)
	require.Equal(t, map[string]any{
		"host": nodeA, "multipath": true, "platform": "x86_64", "os_type": "linux",
		"initiator": "iqn.2004-10.com.example:a", "ip": "192.0.2.7",
		"wwpns": []string{"21000024ff5a7b3c"}, "wwnns": []string{"20000024ff5a7b3c"},
	}, got)
	_, err = CinderConnector(nodeA, conns[:1], false)
	require.True(t, errors.Is(err, ErrNoInitiator))
}

func FuzzParseCapabilities(f *testing.F) {
	for _, s := range []string{"boot_mode:uefi,iscsi_boot:True", "", ",,", "a", ":", "a:b:c, d :e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		caps, err := ParseCapabilities(s)
		if err != nil {
			return
		}
		// Formatting and parsing again is stable.
		again, err := ParseCapabilities(FormatCapabilities(caps))
		if err != nil {
			t.Fatalf("reparse of %q: %v", FormatCapabilities(caps), err)
		}
		if FormatCapabilities(again) != FormatCapabilities(caps) {
			t.Fatalf("unstable: %q -> %q", FormatCapabilities(caps), FormatCapabilities(again))
		}
	})
}
