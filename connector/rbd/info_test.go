package rbd

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
)

// Made-up cephx keys in the real format (AES type, 16 secret bytes).
const (
	testKey  = "AQAAAAAAAAAAABAAyWOxrO/00vSiTjJRxjetgA=="
	otherKey = "AQAAAAAAAAAAABAAVTCKITHoMtWYsQB5gXH68w=="
)

var testKeyring = "[client.cinder]\n\tkey = " + testKey + "\n\tcaps mon = \"profile rbd\"\n\tcaps osd = \"profile rbd pool=volumes\"\n"

// cinderInfo is what Cinder's RBD driver returns (ports as strings).
func cinderInfo(t testing.TB, mutate func(d map[string]any)) connector.ConnectionInfo {
	t.Helper()
	d := map[string]any{
		"name":          "volumes/volume-6d54cb90-a5d1-40d8-9cb2-c6adf43a02af",
		"hosts":         []any{"192.0.2.10", "192.0.2.11"},
		"ports":         []any{"6789", "6789"},
		"cluster_name":  "ceph",
		"auth_enabled":  true,
		"auth_username": "cinder",
		"secret_type":   "ceph",
		"secret_uuid":   "457EB676-33DA-42EC-9A8C-9293D545C337",
		"volume_id":     "6d54cb90-a5d1-40d8-9cb2-c6adf43a02af",
		"discard":       true,
		"qos_specs":     nil,
		"access_mode":   "rw",
		"encrypted":     false,
	}
	if mutate != nil {
		mutate(d)
	}
	raw, err := json.Marshal(map[string]any{"driver_volume_type": "rbd", "data": d})
	require.NoError(t, err)
	info, err := connector.ParseConnectionInfo(raw)
	require.NoError(t, err)
	return info
}

func TestParseVolume(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(d map[string]any)
		check   func(t *testing.T, v Volume)
		wantKey string // the key the error must name; "" for success
	}{
		{
			name: "cinder defaults",
			check: func(t *testing.T, v Volume) {
				require.Equal(t, "volumes", v.Pool)
				require.Equal(t, "", v.Namespace)
				require.Equal(t, "volume-6d54cb90-a5d1-40d8-9cb2-c6adf43a02af", v.Image)
				require.Equal(t, []string{"192.0.2.10:6789", "192.0.2.11:6789"}, v.Monitors)
				require.Equal(t, "cinder", v.User)
				require.Equal(t, "ceph", v.Cluster)
				require.True(t, v.Key.IsZero())
				require.False(t, v.ReadOnly)
				require.Equal(t, "457eb676-33da-42ec-9a8c-9293d545c337", v.SecretUUID)
				require.Equal(t, "ceph", v.SecretType)
				require.NotNil(t, v.Discard)
				require.True(t, *v.Discard)
				require.Equal(t, "volumes/volume-6d54cb90-a5d1-40d8-9cb2-c6adf43a02af", v.Spec())
			},
		},
		{
			name:   "namespace",
			mutate: func(d map[string]any) { d["name"] = "volumes/tenant_a/vol1" },
			check: func(t *testing.T, v Volume) {
				require.Equal(t, "tenant_a", v.Namespace)
				require.Equal(t, "volumes/tenant_a/vol1", v.Spec())
			},
		},
		{
			name: "ipv6 bare and bracketed, hostname, numeric ports",
			mutate: func(d map[string]any) {
				d["hosts"] = []any{"2001:db8::1", "[2001:db8::2]", "mon-3.example.org"}
				d["ports"] = []any{6789, 3300, "6789"}
			},
			check: func(t *testing.T, v Volume) {
				require.Equal(t, []string{"[2001:db8::1]:6789", "[2001:db8::2]:3300", "mon-3.example.org:6789"}, v.Monitors)
			},
		},
		{
			name:   "hosts without ports keep Ceph's default port",
			mutate: func(d map[string]any) { delete(d, "ports"); d["hosts"] = []any{"192.0.2.1", "::1"} },
			check:  func(t *testing.T, v Volume) { require.Equal(t, []string{"192.0.2.1", "[::1]"}, v.Monitors) },
		},
		{
			name:   "no monitors: the host's ceph.conf names them",
			mutate: func(d map[string]any) { delete(d, "hosts"); delete(d, "ports") },
			check:  func(t *testing.T, v Volume) { require.Empty(t, v.Monitors) },
		},
		{
			name:   "read-only",
			mutate: func(d map[string]any) { d["access_mode"] = "ro" },
			check:  func(t *testing.T, v Volume) { require.True(t, v.ReadOnly) },
		},
		{
			name:   "keyring contents",
			mutate: func(d map[string]any) { d["keyring"] = testKeyring },
			check: func(t *testing.T, v Volume) {
				require.Equal(t, testKey, v.Key.Reveal())
				require.Equal(t, []string{testKeyring, testKey}, v.Secrets())
			},
		},
		{
			name: "keyring with several clients picks auth_username",
			mutate: func(d map[string]any) {
				d["keyring"] = "[client.admin]\nkey = " + otherKey + "\n[client.cinder]\nkey=" + testKey + "\n"
			},
			check: func(t *testing.T, v Volume) { require.Equal(t, testKey, v.Key.Reveal()) },
		},
		{
			name: "keyring names the user when auth_username is absent",
			mutate: func(d map[string]any) {
				delete(d, "auth_username")
				d["keyring"] = "[client.glance]\n key = " + testKey + "\n"
			},
			check: func(t *testing.T, v Volume) {
				require.Equal(t, "glance", v.User)
				require.Equal(t, testKey, v.Key.Reveal())
			},
		},
		{
			name:   "bare key",
			mutate: func(d map[string]any) { d["keyring"] = " " + testKey + "\n" },
			check:  func(t *testing.T, v Volume) { require.Equal(t, testKey, v.Key.Reveal()) },
		},
		{
			name:   "client. prefix on the user",
			mutate: func(d map[string]any) { d["auth_username"] = "client.cinder" },
			check:  func(t *testing.T, v Volume) { require.Equal(t, "cinder", v.User) },
		},
		{
			name:   "empty cluster name is ceph",
			mutate: func(d map[string]any) { d["cluster_name"] = nil },
			check:  func(t *testing.T, v Volume) { require.Equal(t, "ceph", v.Cluster) },
		},
		{
			name:   "qos_specs object passes through",
			mutate: func(d map[string]any) { d["qos_specs"] = map[string]any{"total_iops_sec": "100"} },
			check:  func(t *testing.T, v Volume) { require.Equal(t, map[string]any{"total_iops_sec": "100"}, v.QoS) },
		},

		{name: "name missing", mutate: func(d map[string]any) { delete(d, "name") }, wantKey: "name"},
		{name: "name without pool", mutate: func(d map[string]any) { d["name"] = "vol1" }, wantKey: "name"},
		{name: "name too deep", mutate: func(d map[string]any) { d["name"] = "a/b/c/d" }, wantKey: "name"},
		{name: "option injection in pool", mutate: func(d map[string]any) { d["name"] = "--conf=/tmp/x/vol" }, wantKey: "name"},
		{name: "dot-dot image", mutate: func(d map[string]any) { d["name"] = "volumes/.." }, wantKey: "name"},
		{name: "snapshot spec", mutate: func(d map[string]any) { d["name"] = "volumes/vol@snap" }, wantKey: "name"},
		{name: "space in image", mutate: func(d map[string]any) { d["name"] = "volumes/vol 1" }, wantKey: "name"},
		{name: "empty image", mutate: func(d map[string]any) { d["name"] = "volumes/" }, wantKey: "name"},
		{name: "name not a string", mutate: func(d map[string]any) { d["name"] = 7 }, wantKey: "name"},
		{name: "long image", mutate: func(d map[string]any) { d["name"] = "v/" + strings.Repeat("a", 129) }, wantKey: "name"},
		{name: "ports count", mutate: func(d map[string]any) { d["ports"] = []any{"6789"} }, wantKey: "ports"},
		{name: "port range", mutate: func(d map[string]any) { d["ports"] = []any{"6789", "70000"} }, wantKey: "ports[1]"},
		{name: "port zero", mutate: func(d map[string]any) { d["ports"] = []any{"0", "6789"} }, wantKey: "ports[0]"},
		{name: "port not a number", mutate: func(d map[string]any) { d["ports"] = []any{"6789", "x"} }, wantKey: "ports[1]"},
		{name: "host with option", mutate: func(d map[string]any) { d["hosts"] = []any{"-m", "192.0.2.1"} }, wantKey: "hosts[0]"},
		{name: "host with comma", mutate: func(d map[string]any) { d["hosts"] = []any{"a,b", "c"} }, wantKey: "hosts[0]"},
		{name: "host with port", mutate: func(d map[string]any) { d["hosts"] = []any{"192.0.2.1:6789", "c"} }, wantKey: "hosts[0]"},
		{name: "host newline", mutate: func(d map[string]any) { d["hosts"] = []any{"a\nkeyring = /etc/shadow", "c"} }, wantKey: "hosts[0]"},
		{name: "bracketed non-ipv6", mutate: func(d map[string]any) { d["hosts"] = []any{"[example.org]", "c"} }, wantKey: "hosts[0]"},
		{name: "zoned ipv6", mutate: func(d map[string]any) { d["hosts"] = []any{"fe80::1%eth0", "c"} }, wantKey: "hosts[0]"},
		{name: "empty host", mutate: func(d map[string]any) { d["hosts"] = []any{"", "c"} }, wantKey: "hosts[0]"},
		{name: "hosts not a list", mutate: func(d map[string]any) { d["hosts"] = map[string]any{} }, wantKey: "hosts"},
		{name: "user injection", mutate: func(d map[string]any) { d["auth_username"] = "--keyring=/x" }, wantKey: "auth_username"},
		{name: "user with slash", mutate: func(d map[string]any) { d["auth_username"] = "a/b" }, wantKey: "auth_username"},
		{name: "cluster with dot", mutate: func(d map[string]any) { d["cluster_name"] = "../etc" }, wantKey: "cluster_name"},
		{name: "access mode", mutate: func(d map[string]any) { d["access_mode"] = "rwx" }, wantKey: "access_mode"},
		{name: "keyring not base64", mutate: func(d map[string]any) { d["keyring"] = "[client.cinder]\nkey = not*base64!!\n" }, wantKey: "keyring"},
		{name: "keyring wrong user", mutate: func(d map[string]any) { d["keyring"] = "[client.admin]\nkey = " + testKey + "\n" }, wantKey: "keyring"},
		{name: "keyring key malformed", mutate: func(d map[string]any) {
			d["keyring"] = "[client.cinder]\nkey = AQDTb9/wvFUxhYEKCOWUkbIBPAbZdr13bx6BaA==\n"
		}, wantKey: "keyring"},
		{name: "bare key malformed", mutate: func(d map[string]any) { d["keyring"] = "AQAAAAAAAAAAABEAyWOxrO/00vSiTjJRxjetgA==" }, wantKey: "keyring"},
		{name: "keyring garbage", mutate: func(d map[string]any) { d["keyring"] = "hello world" }, wantKey: "keyring"},
		{name: "keyring key before section", mutate: func(d map[string]any) { d["keyring"] = "key = " + testKey + "\n[client.cinder]\n" }, wantKey: "keyring"},
		{name: "keyring unterminated section", mutate: func(d map[string]any) { d["keyring"] = "[client.cinder\nkey = " + testKey + "\n" }, wantKey: "keyring"},
		{name: "keyring line without =", mutate: func(d map[string]any) { d["keyring"] = "[client.cinder]\nkey " + testKey + "\n" }, wantKey: "keyring"},
		{name: "keyring huge", mutate: func(d map[string]any) { d["keyring"] = "[client.cinder]\n#" + strings.Repeat("x", 5000) }, wantKey: "keyring"},
		{
			name: "keyring ambiguous",
			mutate: func(d map[string]any) {
				delete(d, "auth_username")
				d["keyring"] = "[client.a]\nkey = " + testKey + "\n[client.b]\nkey = " + otherKey + "\n"
			},
			wantKey: "keyring",
		},
		{
			name: "keyring non-client section",
			mutate: func(d map[string]any) {
				delete(d, "auth_username")
				d["keyring"] = "[mon.]\nkey = " + testKey + "\n"
			},
			wantKey: "keyring",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := ParseVolume(cinderInfo(t, tt.mutate))
			if tt.wantKey == "" {
				require.NoError(t, err)
				tt.check(t, v)
				return
			}
			require.Error(t, err)
			require.ErrorIs(t, err, connector.ErrInvalid)
			var ie *connector.InvalidError
			require.True(t, errors.As(err, &ie))
			require.Equal(t, tt.wantKey, ie.Key, "error: %v", err)
			require.NotContains(t, err.Error(), testKey, "an error must never repeat the key")
			require.NotContains(t, err.Error(), otherKey)
		})
	}
}

func TestParseVolumeFlatV3(t *testing.T) {
	raw := `{"driver_volume_type":"rbd","attachment_id":"x","name":"volumes/vol1","hosts":["127.0.0.1"],"ports":["6789"],"auth_username":"cinder","keyring":null}`
	info, err := connector.ParseConnectionInfo([]byte(raw))
	require.NoError(t, err)
	v, err := ParseVolume(info)
	require.NoError(t, err)
	require.Equal(t, "volumes/vol1", v.Spec())
	require.Equal(t, []string{"127.0.0.1:6789"}, v.Monitors)
}

// FuzzParseVolume: no input panics, and whatever is accepted is safe to put
// on a command line and into a Ceph config file.
func FuzzParseVolume(f *testing.F) {
	f.Add(`{"driver_volume_type":"rbd","data":{"name":"volumes/vol1","hosts":["127.0.0.1","::1"],"ports":["6789",3300],"auth_username":"cinder"}}`)
	f.Add(`{"driver_volume_type":"rbd","data":{"name":"p/ns/img","keyring":"[client.cinder]\n key = ` + testKey + `\n","access_mode":"ro"}}`)
	f.Add(`{"driver_volume_type":"rbd","name":"p/i","hosts":"[2001:db8::1]","ports":6789,"keyring":"` + testKey + `"}`)
	f.Add(`{"connection_info":{"driver_volume_type":"rbd","data":{"name":"a/b","cluster_name":"c1","qos_specs":{},"discard":"true"}}}`)
	f.Fuzz(func(t *testing.T, raw string) {
		info, err := connector.ParseConnectionInfo([]byte(raw))
		if err != nil {
			return
		}
		v, err := ParseVolume(info)
		if err != nil {
			if !v.Key.IsZero() && strings.Contains(err.Error(), v.Key.Reveal()) {
				t.Fatalf("error repeats the key: %v", err)
			}
			return
		}
		for _, s := range append([]string{v.Pool, v.Namespace, v.Image, v.User, v.Cluster, v.Key.Reveal()}, v.Monitors...) {
			if strings.HasPrefix(s, "-") || strings.ContainsAny(s, "\x00\n\r\t ,;=") && s != v.Key.Reveal() {
				t.Fatalf("unsafe value accepted: %q", s)
			}
			if strings.ContainsAny(s, "\x00\n\r") {
				t.Fatalf("line break accepted: %q", s)
			}
		}
		for _, s := range []string{v.Pool, v.Namespace, v.Image} {
			if s == "." || s == ".." || strings.ContainsAny(s, "/@") {
				t.Fatalf("unsafe name accepted: %q", s)
			}
		}
		if v.Pool == "" || v.Image == "" || v.Cluster == "" {
			t.Fatalf("empty required field: %+v", v)
		}
		argv := strings.Join(mapArgs(v, DriverKRBD, "", true), " ")
		if !v.Key.IsZero() && strings.Contains(argv, v.Key.Reveal()) {
			t.Fatalf("key in argv: %s", argv)
		}
	})
}

// TestParseVolumeIgnoresUnusedKeys: keys brick passes through but never
// acts on (Nova's libvirt secret reference, discard, QoS, labels) do not
// fail the attach when unreadable, as with os-brick, which never reads
// them; the reason is kept for a debug line and the value left out.
func TestParseVolumeIgnoresUnusedKeys(t *testing.T) {
	for _, tc := range []struct {
		key   string
		value any
	}{
		{"secret_uuid", "not-a-uuid"},
		{"secret_uuid", 5},
		{"secret_type", strings.Repeat("x", 65)},
		{"volume_id", "../../x"},
		{"volume_id", 1},
		{"discard", "maybe"},
		{"auth_enabled", "yes"},
		{"qos_specs", "fast"},
	} {
		v, err := ParseVolume(cinderInfo(t, func(d map[string]any) { d[tc.key] = tc.value }))
		require.NoError(t, err, "%s=%v", tc.key, tc.value)
		require.Len(t, v.Ignored, 1, tc.key)
		require.Contains(t, v.Ignored[0], tc.key)
		require.Equal(t, "volumes/volume-6d54cb90-a5d1-40d8-9cb2-c6adf43a02af", v.Spec())
	}
	v, err := ParseVolume(cinderInfo(t, nil))
	require.NoError(t, err)
	require.Empty(t, v.Ignored)
	require.Equal(t, "457eb676-33da-42ec-9a8c-9293d545c337", v.SecretUUID)
}
