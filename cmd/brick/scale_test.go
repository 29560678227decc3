package main

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host/hosttest"
)

// TestListScale (the scale goal, a fixture-tree check): brick list
// with 32 attachments uses under a second of CPU, with Cinder (a local fake that
// answers at once, so Cinder's own time is left out) and without.
func TestListScale(t *testing.T) {
	root, fake := cinderHost(t)
	const n = 32
	for i := range n {
		id := fmt.Sprintf("%08d-aaaa-4aaa-8aaa-aaaaaaaaaaaa", i)
		fake.AddVolume(id, fmt.Sprintf("vol-%d", i))
		hosttest.WriteFile(t, root, "/var/lib/brick/volumes/"+id+".json", `{"version":1,"volume_id":"`+id+`","phase":"attached","step":"done","flow":"v3","microversion":"3.54",
"host_name":"fixture-node","mode":"rw","connector":{},"connection_info":{"driver_volume_type":"iscsi","data":{"auth_password":"***"}},
"device":{"path":"/dev/sdx","type":"block","protocol":"iscsi"},"size_bytes":1073741824,"created_at":"2026-12-02T10:00:00Z","updated_at":"2026-12-02T10:00:00Z"}`)
	}
	base := []string{"--host-root", root, "--config", "/dev/null", "list", "-f", "json"}
	for name, auth := range map[string][]string{
		"with Cinder":  {"--os-auth-type", "noauth", "--cinder-endpoint", fake.Endpoint()},
		"records only": {},
	} {
		start, cpu0 := time.Now(), hosttest.CPUTime(t)
		code, out, errs := runVolumeCmd(t, append(auth, base...)...)
		took, cpu := time.Since(start), hosttest.CPUTime(t)-cpu0
		require.Equal(t, 0, code, "%s: %s", name, errs)
		var rows []map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &rows), name)
		require.Len(t, rows, n, name)
		t.Logf("list of %d attachments, %s: %v, %v of CPU", n, name, took.Round(time.Millisecond), cpu.Round(time.Millisecond))
		// CPU, not wall time: the fake Cinder's share is in it (it answers
		// at once), a busy machine's other processes are not.
		require.Less(t, cpu, time.Second, name)
	}
}
