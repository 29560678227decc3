package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host/hosttest"
)

// TestListWhenCinderDown: brick list shows the local records when Cinder
// (or Keystone) cannot be reached, with the status "unknown" and a warning,
// and a damaged record costs only its own row (a warning naming the file).
func TestListWhenCinderDown(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	root := fixtureHost(t)
	rec := func(id string) string {
		return `{"version":1,"volume_id":"` + id + `","phase":"attached","step":"done","flow":"v3","microversion":"3.54",
"host_name":"fixture-node","mode":"rw","connector":{},"connection_info":{"driver_volume_type":"iscsi","data":{"auth_password":"***"}},
"device":{"path":"/dev/sdx","type":"block","protocol":"iscsi"},"created_at":"2026-12-02T10:00:00Z","updated_at":"2026-12-02T10:00:00Z"}`
	}
	const a, b, c = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb", "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
	dir := "/var/lib/brick/volumes/"
	hosttest.WriteFile(t, root, dir+a+".json", rec(a))
	hosttest.WriteFile(t, root, dir+b+".json", rec(b))
	hosttest.WriteFile(t, root, dir+c+".json", rec(c)[:100]) // truncated by a crash
	hosttest.WriteFile(t, root, dir+"."+a+".42.tmp", "{")    // a crashed save's temp file

	base := []string{"--host-root", root, "--config", "/dev/null", "list", "-f", "json"}
	for name, auth := range map[string][]string{
		"cinder refuses":  {"--os-auth-type", "noauth", "--cinder-endpoint", "http://127.0.0.1:1/v3"},
		"keystone down":   {"--os-auth-url", "http://127.0.0.1:1/v3", "--os-username", "u", "--os-password", "pw-s3cret", "--os-project-name", "p", "--os-user-domain-name", "Default", "--os-project-domain-name", "Default"},
		"no cloud at all": {},
	} {
		start := time.Now()
		code, out, errs := runVolumeCmd(t, append(auth, base...)...)
		require.Equal(t, 0, code, "%s: %s", name, errs)
		var rows []map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &rows), name)
		require.Len(t, rows, 2, name)
		for i, id := range []string{a, b} {
			require.Equal(t, id, rows[i]["volume_id"], name)
			require.Equal(t, "unknown", rows[i]["cinder_status"], name)
			require.Equal(t, "/dev/sdx", rows[i]["path"], name)
			require.Nil(t, rows[i]["size"], name)
		}
		require.Contains(t, errs, filepath.Join(dir, c+".json"), "%s: the damaged record is named", name)
		require.Contains(t, errs, "brick cleanup", name)
		require.NotContains(t, errs, ".tmp", name)
		require.Less(t, time.Since(start), 10*time.Second, name)
		t.Logf("%s: %s", name, strings.TrimSpace(errs))
	}
}

// TestListEmpty: no attachment prints nothing in table form (cliff's
// default) and a hint on stderr; the other forms print an empty list.
func TestListEmpty(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	root := fixtureHost(t)
	tests := []struct {
		format, out, errs string
	}{
		{"table", "", "brick: no volume attached by brick on this host (brick local-attach VOLUME attaches one)\n"},
		{"json", "[]\n", ""},
		{"value", "", ""},
		{"csv", `"Volume","Name","Device","Protocol","Multipath ID","Attachment ID","Mountpoint","Phase","Cinder Status","Size"` + "\n", ""},
	}
	for _, tt := range tests {
		code, out, errs := runVolumeCmd(t, "--host-root", root, "--config", "/dev/null", "list", "--offline", "-f", tt.format)
		require.Equal(t, 0, code, errs)
		require.Equal(t, tt.out, out, tt.format)
		require.Equal(t, tt.errs, errs, tt.format)
	}
}
