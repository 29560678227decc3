package cinderapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
)

func TestParseEncryption(t *testing.T) {
	for _, tc := range []struct {
		body string
		want Encryption
		err  string
	}{
		{body: `{"encryption_key_id": null}`, want: Encryption{}},
		{body: `{"encryption_key_id": "k", "control_location": "front-end", "cipher": "aes-xts-plain64", "key_size": 256, "provider": "luks"}`,
			want: Encryption{KeyID: "k", ControlLocation: "front-end", Cipher: "aes-xts-plain64", KeySize: 256, Provider: "luks"}},
		{body: `{"encryption_key_id": "k", "control_location": "back-end", "provider": "luks", "key_size": null, "cipher": null}`,
			want: Encryption{KeyID: "k", ControlLocation: "back-end", Provider: "luks"}},
		{body: `{"encryption_key_id": "k", "key_size": "512"}`, want: Encryption{KeyID: "k", KeySize: 512}},
		{body: `[]`, err: "cannot unmarshal"},
		{body: `{"key_size": 2.5}`, err: "key_size"},
		{body: `{"key_size": -8}`, err: "key_size"},
		{body: `{"control_location": "sideways"}`, err: "control_location"},
		{body: `{"cipher": "aes\nx"}`, err: "cipher"},
	} {
		got, err := ParseEncryption([]byte(tc.body))
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.body)
			continue
		}
		require.NoError(t, err, tc.body)
		require.Equal(t, tc.want, got)
	}
	require.True(t, Encryption{KeyID: "k"}.FrontEnd())
	require.False(t, Encryption{KeyID: "k", ControlLocation: "back-end"}.FrontEnd())
	require.False(t, Encryption{}.FrontEnd())
}

func TestClientEncryption(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v3/p/volumes/v1/encryption":
			_, _ = w.Write([]byte(`{"encryption_key_id": "k", "provider": "luks2", "key_size": 512}`))
		case "/v3/p/volumes/bad/encryption":
			_, _ = w.Write([]byte(`{"key_size": "x"}`))
		default:
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"itemNotFound": {"message": "Volume could not be found.", "code": 404}}`))
		}
	}))
	defer srv.Close()
	pc := &gophercloud.ProviderClient{HTTPClient: *srv.Client()}
	c := &Client{SC: &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: srv.URL + "/v3/p/", ResourceBase: srv.URL + "/v3/p/"}}
	e, err := c.Encryption(context.Background(), "v1")
	require.NoError(t, err)
	require.Equal(t, Encryption{KeyID: "k", Provider: "luks2", KeySize: 512}, e)
	_, err = c.Encryption(context.Background(), "bad")
	require.ErrorIs(t, err, apierr.ErrUnexpected)
	_, err = c.Encryption(context.Background(), "gone")
	require.ErrorIs(t, err, apierr.ErrNotFound)
}

func FuzzParseEncryption(f *testing.F) {
	f.Add([]byte(`{"encryption_key_id": "k", "control_location": "front-end", "cipher": "aes-xts-plain64", "key_size": 256, "provider": "luks"}`))
	f.Add([]byte(`{"key_size": "1e3"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		e, err := ParseEncryption(body)
		if err != nil {
			return
		}
		for _, s := range []string{e.KeyID, e.Provider, e.Cipher, e.ControlLocation} {
			require.False(t, strings.ContainsAny(s, "\n\r\x00"))
		}
		require.GreaterOrEqual(t, e.KeySize, 0)
	})
}
