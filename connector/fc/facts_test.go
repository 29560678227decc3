package fc_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/fc"
	"github.com/brick-storage/brick/host/hosttest"
)

// TestHostFacts: get-connector's FC keys come from the HBA reader every
// connect uses, through the registry's Gather: online ports only, in
// fc_host's order, a WWPN kept when its node name cannot be read.
func TestHostFacts(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ports        [][4]string // name, port_state, port_name, node_name ("" = no file)
		wwpns, wwnns []string
		warns        []string
	}{
		{"no FC", nil, nil, nil, nil},
		{"online, offline and broken", [][4]string{
			{"host3", "Online", "0x21000024FF5A7B3C", "0x20000024ff5a7b3c"},
			{"host4", "Linkdown", "0x21000024ff5a7b3d", "0x20000024ff5a7b3d"},
			{"host5", "Online", "0x21000024ff5a7b3e", ""},
			{"host6", "", "0x21000024ff5a7b3f", "0x20000024ff5a7b3f"},
			{"host7", "Online", "garbage", "0x20000024ff5a7b40"},
		}, []string{"21000024ff5a7b3c", "21000024ff5a7b3e"}, []string{"20000024ff5a7b3c", "20000024ff5a7b40"},
			[]string{"/sys/class/fc_host/host5/node_name", "/sys/class/fc_host/host6/port_state", "/sys/class/fc_host/host7/port_name"}},
		{"listing order", [][4]string{
			{"host9", "Online", "0x2100000000000009", "0x2000000000000009"},
			{"host10", "Online", "0x2100000000000010", "0x2000000000000010"},
		}, []string{"2100000000000010", "2100000000000009"}, []string{"2000000000000010", "2000000000000009"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, root := hosttest.New(t, hosttest.NewRunner(nil))
			for _, p := range tc.ports {
				for i, attr := range []string{"port_state", "port_name", "node_name"} {
					if p[i+1] != "" {
						hosttest.WriteFile(t, root, "/sys/class/fc_host/"+p[0]+"/"+attr, p[i+1]+"\n")
					}
				}
			}
			reg := connector.NewRegistry()
			reg.Register(fc.New(h, fc.Options{}), fc.Protocol)
			p, warns, err := reg.Gather(h.FS, connector.GatherOptions{IP: "192.0.2.1", Hostname: "h"})
			require.NoError(t, err)
			require.Equal(t, tc.wwpns, p.WWPNs)
			require.Equal(t, tc.wwnns, p.WWNNs)
			var files []string
			for _, w := range warns {
				files = append(files, w.File)
			}
			require.Equal(t, tc.warns, files)
		})
	}
}
