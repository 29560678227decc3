package iscsi

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// A SendTargets answer must not send brick's CHAP logins to any number of
// portals, nor to another address family than the portal Cinder gave.
func TestFollowDiscoveredCapsAndKeepsFamily(t *testing.T) {
	const iqn = "iqn.2026-12.org.brick:t1"
	v4 := Target{Portal: Portal{Host: "10.0.0.1", Port: 3260}, IQN: iqn, LUN: 1}
	v6 := Target{Portal: Portal{Host: "fd00::1", Port: 3260}, IQN: iqn, LUN: 1}
	many := func(n int) []DiscoveredTarget {
		var d []DiscoveredTarget
		for i := 0; i < n; i++ {
			d = append(d, DiscoveredTarget{Portal: Portal{Host: fmt.Sprintf("10.0.1.%d", i), Port: 3260}, IQN: iqn})
		}
		return d
	}
	for _, tc := range []struct {
		name        string
		given       Target
		found       []DiscoveredTarget
		wantPaths   int
		wantSkipped int
	}{
		{"capped", v4, many(100), maxDiscoveredPaths, 100 - (maxDiscoveredPaths - 1)},
		{"other family skipped", v4, []DiscoveredTarget{
			{Portal: Portal{Host: "fd00::2", Port: 3260}, IQN: iqn},
			{Portal: Portal{Host: "10.0.0.2", Port: 3260}, IQN: iqn},
		}, 2, 1},
		{"ipv6 keeps ipv6", v6, []DiscoveredTarget{
			{Portal: Portal{Host: "fd00::2", Port: 3260}, IQN: iqn},
			{Portal: Portal{Host: "192.0.2.9", Port: 3260}, IQN: iqn},
		}, 2, 1},
		{"other target and self ignored", v4, []DiscoveredTarget{
			{Portal: v4.Portal, IQN: iqn},
			{Portal: Portal{Host: "10.0.0.3", Port: 3260}, IQN: "iqn.2026-12.org.brick:other"},
		}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, skipped := followDiscovered(tc.given, tc.found)
			require.Len(t, out, tc.wantPaths)
			require.Equal(t, tc.given, out[0])
			require.Len(t, skipped, tc.wantSkipped)
			for _, o := range out {
				require.Equal(t, addrFamily(tc.given.Portal.Host), addrFamily(o.Portal.Host))
			}
		})
	}
}
