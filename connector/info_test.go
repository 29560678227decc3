package connector

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseConnectionInfoShapes(t *testing.T) {
	nested := `{"driver_volume_type":"iscsi","data":{"target_portal":"10.0.2.2:3260","target_lun":1,"auth_password":"pw"}}`
	flat := `{"driver_volume_type":"ISCSI","target_portal":"10.0.2.2:3260","target_lun":1,"auth_password":"pw","attachment_id":"a1"}`
	wrapped := `{"connection_info":` + nested + `}`
	for name, raw := range map[string]string{"nested": nested, "flat": flat, "wrapped": wrapped} {
		t.Run(name, func(t *testing.T) {
			ci, err := ParseConnectionInfo([]byte(raw))
			require.NoError(t, err)
			require.Equal(t, "iscsi", ci.DriverVolumeType)
			s, ok, err := ci.String("target_portal")
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, "10.0.2.2:3260", s)
			n, ok, err := ci.Int("target_lun")
			require.NoError(t, err)
			require.True(t, ok)
			require.EqualValues(t, 1, n)
			require.Equal(t, []string{"pw"}, ci.Secrets())
			require.Equal(t, "***", ci.Redacted().Data["auth_password"])
		})
	}
}

func TestParseConnectionInfoRejects(t *testing.T) {
	tests := []struct{ raw, key string }{
		{`[]`, "connection_info"},
		{`{}`, "driver_volume_type"},
		{`{"driver_volume_type":5}`, "driver_volume_type"},
		{`{"driver_volume_type":"is csi"}`, "driver_volume_type"},
		{`{"driver_volume_type":"iscsi;rm"}`, "driver_volume_type"},
		{`{"driver_volume_type":"iscsi","data":[]}`, "data"},
		{`{"connection_info":"x"}`, "connection_info"},
		{`{"driver_volume_type":"iscsi"} {}`, "connection_info"},
		{`{"driver_volume_type":"iscsi"`, "connection_info"},
	}
	for _, tt := range tests {
		_, err := ParseConnectionInfo([]byte(tt.raw))
		var ie *InvalidError
		require.ErrorAs(t, err, &ie, tt.raw)
		require.Equal(t, tt.key, ie.Key, tt.raw)
		require.ErrorIs(t, err, ErrInvalid)
	}
	_, err := ParseConnectionInfo([]byte(`{"driver_volume_type":"x","data":{"a":"` + strings.Repeat("a", MaxConnectionInfoSize) + `"}}`))
	require.ErrorIs(t, err, ErrInvalid)
}

func TestAccessors(t *testing.T) {
	ci, err := ParseConnectionInfo([]byte(`{"driver_volume_type":"iscsi","data":{
		"s":"v","n":3,"ns":"7","nf":1.5,"b":true,"bs":"False","list":["a","b"],"one":"a","ints":[1,2],
		"nul":"a\u0000b","bad":{"x":1},"badlist":["a",1],"nil":null,"auth_password":"hunter2"}}`))
	require.NoError(t, err)

	s, ok, err := ci.String("s")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "v", s)
	_, ok, err = ci.String("missing")
	require.NoError(t, err)
	require.False(t, ok)
	_, ok, err = ci.String("nil")
	require.NoError(t, err)
	require.False(t, ok)
	_, err = ci.RequiredString("missing")
	require.ErrorContains(t, err, `key "missing": missing`)
	_, _, err = ci.String("n")
	require.ErrorContains(t, err, `key "n": must be a string, got a number`)
	_, _, err = ci.String("nul")
	require.ErrorContains(t, err, "NUL")

	n, _, err := ci.Int("ns")
	require.NoError(t, err)
	require.EqualValues(t, 7, n)
	_, _, err = ci.Int("nf")
	require.ErrorContains(t, err, `key "nf": must be an integer`)
	_, _, err = ci.Int("s")
	require.ErrorContains(t, err, `key "s"`)

	b, _, err := ci.Bool("b")
	require.NoError(t, err)
	require.True(t, b)
	b, _, err = ci.Bool("bs")
	require.NoError(t, err)
	require.False(t, b)
	_, _, err = ci.Bool("n")
	require.Error(t, err)

	l, _, err := ci.Strings("list")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, l)
	l, _, err = ci.Strings("one")
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, l)
	_, _, err = ci.Strings("badlist")
	require.ErrorContains(t, err, `key "badlist[1]"`)

	is, _, err := ci.Ints("ints")
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2}, is)
	is, _, err = ci.Ints("n")
	require.NoError(t, err)
	require.Equal(t, []int64{3}, is)

	_, _, err = ci.Object("bad")
	require.NoError(t, err)
	_, _, err = ci.Object("s")
	require.Error(t, err)

	// A wrong-typed secret is rejected without echoing its value.
	ci.Data["auth_password"] = []any{"hunter2"}
	_, _, err = ci.String("auth_password")
	require.Error(t, err)
	require.NotContains(t, err.Error(), "hunter2")
}

func TestConnectionInfoJSONRoundTrip(t *testing.T) {
	ci, err := ParseConnectionInfo([]byte(`{"driver_volume_type":"rbd","name":"pool/img","hosts":["a"]}`))
	require.NoError(t, err)
	b, err := json.Marshal(ci)
	require.NoError(t, err)
	var back ConnectionInfo
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, ci.DriverVolumeType, back.DriverVolumeType)
	require.Equal(t, "pool/img", back.Data["name"])
}

func TestIsSecretKey(t *testing.T) {
	for _, k := range []string{"auth_password", "discovery_auth_password", "keyring", "secret", "chap_secret", "token", "access_key"} {
		require.True(t, IsSecretKey(k), k)
	}
	for _, k := range []string{"auth_username", "secret_uuid", "secret_type", "target_lun", "volume_id"} {
		require.False(t, IsSecretKey(k), k)
	}
}

func FuzzParseConnectionInfo(f *testing.F) {
	f.Add([]byte(`{"driver_volume_type":"iscsi","data":{"target_portal":"1.2.3.4:3260","target_lun":1}}`))
	f.Add([]byte(`{"driver_volume_type":"rbd","name":"p/i","hosts":["::1"],"ports":["6789"]}`))
	f.Add([]byte(`{"connection_info":{"driver_volume_type":"nfs","data":{"export":"h:/e"}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ci, err := ParseConnectionInfo(raw)
		if err != nil {
			return
		}
		if !validTypeName(ci.DriverVolumeType) {
			t.Fatalf("accepted bad type %q", ci.DriverVolumeType)
		}
		for k := range ci.Data {
			_, _, _ = ci.String(k)
			_, _, _ = ci.Int(k)
			_, _, _ = ci.Bool(k)
			_, _, _ = ci.Strings(k)
			_, _, _ = ci.Ints(k)
		}
		for k, v := range ci.Redacted().Data {
			if s, ok := v.(string); ok && s != "" && IsSecretKey(k) && s != "***" {
				t.Fatalf("secret key %q survived redaction", k)
			}
		}
	})
}

func BenchmarkParseConnectionInfo(b *testing.B) {
	raw := []byte(`{"driver_volume_type":"iscsi","data":{"target_discovered":false,"target_portals":["10.0.2.2:3260","10.0.3.2:3260"],"target_iqns":["iqn.2010-10.org.openstack:volume-1","iqn.2010-10.org.openstack:volume-1"],"target_luns":[1,1],"volume_id":"8d5f0e5c-1111-2222-3333-444455556666","auth_method":"CHAP","auth_username":"u","auth_password":"p","encrypted":false,"access_mode":"rw"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseConnectionInfo(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func TestReadOnlyAndVolumeID(t *testing.T) {
	tests := []struct {
		data     string
		ro       bool
		id       string
		wantErr  string
		errOnVID bool
	}{
		{data: `{}`},
		{data: `{"access_mode":"rw","volume_id":""}`},
		{data: `{"access_mode":"ro","volume_id":"8D5F0E5C-1111-2222-3333-444455556666"}`, ro: true, id: "8d5f0e5c-1111-2222-3333-444455556666"},
		{data: `{"access_mode":"RW"}`, wantErr: `key "access_mode": must be rw or ro`},
		{data: `{"access_mode":1}`, wantErr: `key "access_mode": must be a string`},
		{data: `{"volume_id":"vol-1"}`, wantErr: `key "volume_id": must be a UUID`, errOnVID: true},
	}
	for _, tt := range tests {
		ci, err := ParseConnectionInfo([]byte(`{"driver_volume_type":"iscsi","data":` + tt.data + `}`))
		require.NoError(t, err)
		ro, rerr := ci.ReadOnly()
		id, verr := ci.VolumeID()
		if tt.wantErr != "" {
			got := rerr
			if tt.errOnVID {
				got = verr
			}
			require.ErrorContains(t, got, tt.wantErr, tt.data)
			require.ErrorIs(t, got, ErrInvalid)
			continue
		}
		require.NoError(t, rerr, tt.data)
		require.NoError(t, verr, tt.data)
		require.Equal(t, tt.ro, ro, tt.data)
		require.Equal(t, tt.id, id, tt.data)
	}
}
