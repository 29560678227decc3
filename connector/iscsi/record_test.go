package iscsi

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/secret"
)

const sampleRecord = `# BEGIN RECORD 2.1.8
node.name = iqn.2026-12.org.brick:target1
node.tpgt = -1
node.startup = manual
node.session.auth.authmethod = None
node.session.auth.chap_algs = MD5
node.session.scan = auto
node.conn[0].timeo.login_timeout = 15
# END RECORD
`

func TestSetRecord(t *testing.T) {
	out := string(SetRecord([]byte(sampleRecord), nodeSettings(&CHAP{Username: "alice", Password: secret.New("pw")}, IfaceTCP, 5)))
	rec := ParseRecord([]byte(out))
	require.Equal(t, "manual", rec["node.session.scan"])
	require.Equal(t, "5", rec["node.conn[0].timeo.login_timeout"])
	require.Equal(t, "1", rec["node.session.initial_login_retry_max"])
	require.Equal(t, "CHAP", rec["node.session.auth.authmethod"])
	require.Equal(t, "alice", rec["node.session.auth.username"])
	require.Equal(t, "pw", rec["node.session.auth.password"])
	require.Equal(t, "MD5", rec["node.session.auth.chap_algs"])
	require.Equal(t, 1, strings.Count(out, "node.session.scan"))
	require.True(t, strings.HasPrefix(out, "# BEGIN RECORD 2.1.8\n"))

	// Back to no auth: the credentials are removed from the file.
	out = string(SetRecord([]byte(out), nodeSettings(nil, IfaceTCP, 15)))
	rec = ParseRecord([]byte(out))
	require.Equal(t, "None", rec["node.session.auth.authmethod"])
	require.NotContains(t, out, "password")
	require.NotContains(t, out, "alice")

	// Duplicated keys collapse to one line.
	out = string(SetRecord([]byte("a = 1\na = 2\nb = 3"), []recordValue{{"a", "9"}}))
	require.Equal(t, "a = 9\nb = 3\n", out)
}

func FuzzSetRecord(f *testing.F) {
	f.Add([]byte(sampleRecord), "node.session.auth.password", "pw")
	f.Fuzz(func(t *testing.T, data []byte, key, value string) {
		key = strings.TrimSpace(key)
		value = strings.TrimSpace(value)
		if key == "" || strings.ContainsAny(key, "=\n\r#") || strings.ContainsAny(value, "\n\r") || strings.HasPrefix(key, "#") {
			return
		}
		out := SetRecord(data, []recordValue{{key, value}})
		rec := ParseRecord(out)
		if value == "" {
			if _, ok := rec[key]; ok {
				t.Fatalf("key %q not removed", key)
			}
			return
		}
		if rec[key] != value {
			t.Fatalf("key %q = %q, want %q", key, rec[key], value)
		}
	})
}
