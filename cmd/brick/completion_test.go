package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/internal/cmd/factory"
)

func TestCompletion(t *testing.T) {
	root, fake := cinderHost(t)
	fake.AddVolume("11111111-1111-4111-8111-111111111111", "data")
	cloud := []string{"--os-auth-type", "noauth", "--cinder-endpoint", fake.Endpoint()}
	ironic := []string{"--os-auth-type", "noauth", "--ironic-endpoint", fakeNodeList(t)}
	const rec = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	recRoot := fixtureHost(t)
	hosttest.WriteFile(t, recRoot, "/var/lib/brick/volumes/"+rec+".json", `{"version":1,"volume_id":"`+rec+`","volume_name":"logs","phase":"attached","step":"done","flow":"v3",
"host_name":"fixture-node","mode":"rw","connector":{},"connection_info":{"driver_volume_type":"iscsi","data":{}},
"device":{"path":"/dev/sdx","type":"block","protocol":"iscsi"},"created_at":"2026-12-02T10:00:00Z","updated_at":"2026-12-02T10:00:00Z"}`)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"format", []string{"get-connector", "-f", ""}, []string{"table", "json", "csv"}},
		{"mode", []string{"local-attach", "--mode", ""}, []string{"rw", "ro"}},
		{"quote", []string{"list", "--quote", ""}, []string{"nonnumeric", "minimal", "all", "none"}},
		{"mkfs", []string{"local-attach", "--mkfs", ""}, []string{"ext4", "xfs"}},
		{"list columns", []string{"list", "-c", ""}, []string{"Volume", "multipath_id", "cinder_status", "Size"}},
		{"list sort columns", []string{"list", "--sort-column", ""}, []string{"Volume", "Phase"}},
		{"connector columns", []string{"get-connector", "-c", ""}, []string{"initiator", "wwpns", "system_uuid", "nvme_native_multipath", "do_local_attach"}},
		{"rbd driver", []string{"connect", "--rbd-driver", ""}, []string{"krbd", "nbd"}},
		{"protocol", []string{"get-all-volume-paths", "--protocol", ""}, []string{"iscsi", "iser", "nvmeof"}},
		{"connector type", []string{"ironic", "connector", "create", "--type", ""}, []string{"iqn", "wwpn", "portgroup"}},
		{"target type", []string{"ironic", "target", "create", "--type", ""}, []string{"iscsi", "fibre_channel"}},
		{"nic", []string{"--host-root", root, "get-connector", "--nic", ""}, []string{"eth0"}},
		{"cinder volumes", append(append([]string{"--host-root", root}, cloud...), "local-attach", ""), []string{"11111111-1111-4111-8111-111111111111\tdata available", "data\t11111111-1111-4111-8111-111111111111 available"}},
		{"attached volumes", []string{"--host-root", recRoot, "local-detach", ""}, []string{rec + "\tlogs"}},
		{"ironic nodes", append(append([]string{"--host-root", root}, ironic...), "local-attach", "--ironic-node", ""), []string{"5f0c1a4e-0000-4000-8000-000000000001\tnode-1", "node-1\t5f0c1a4e-0000-4000-8000-000000000001"}},
		{"boot node", append(append([]string{"--host-root", root}, ironic...), "ironic", "boot-from-volume", ""), []string{"node-1\t5f0c1a4e-0000-4000-8000-000000000001"}},
		{"boot volume", append(append([]string{"--host-root", root}, cloud...), "ironic", "boot-from-volume", "node-1", "--volume", ""), []string{"data\t11111111-1111-4111-8111-111111111111 available"}},
		{"ironic attach volume", append(append([]string{"--host-root", root}, cloud...), "ironic", "attach-volume", "--node", "node-1", ""), []string{"data\t11111111-1111-4111-8111-111111111111 available"}},
		{"after the volume", append(append([]string{"--host-root", root}, cloud...), "local-attach", "data", ""), nil},
		{"cinder down", []string{"--host-root", root, "--os-auth-type", "noauth", "--cinder-endpoint", "http://127.0.0.1:1/v3", "local-attach", ""}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runVolumeCmd(t, append([]string{"__complete", "--config", "/dev/null"}, tt.args...)...)
			require.Equal(t, 0, code, errs)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			require.Equal(t, ":4", lines[len(lines)-1], "no file completion")
			for _, w := range tt.want {
				require.Contains(t, lines, w)
			}
			if tt.want == nil {
				require.Len(t, lines, 1)
			}
		})
	}
}

// fakeNodeList is an Ironic that knows one node, enough for completion.
func fakeNodeList(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/nodes" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"nodes": [{"uuid": "5f0c1a4e-0000-4000-8000-000000000001", "name": "node-1"}]}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestPrintError(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "brick: plain\n"},
		{"a\nb", "brick: a; b\n"},
		{"unknown command \"lsit\" for \"brick\"\n\nDid you mean this?\n\tlist\n\tlast\x1b\n", "brick: unknown command \"lsit\" for \"brick\"\n\nDid you mean this?\n\tlist\n\tlast\\x1b\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		factory.PrintError(&b, tt.in)
		require.Equal(t, tt.want, b.String())
	}
	code, _, errs := runVolumeCmd(t, "lisst")
	require.Equal(t, 2, code)
	require.Equal(t, "brick: unknown command \"lisst\" for \"brick\"\n\nDid you mean this?\n\tlist\n", errs)
}
