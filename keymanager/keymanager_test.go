package keymanager

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
)

const keyID = "5a8c2c1e-2d5b-4f7e-9a51-1f0f6f0b9d11"

var theKey = []byte("0123456789abcdef0123456789abcdef")

func fakeBarbican(t *testing.T, status int, body []byte) *Barbican {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/secrets/"+keyID+"/payload" || r.Header.Get("Accept") != "application/octet-stream" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	pc := &gophercloud.ProviderClient{HTTPClient: *srv.Client()}
	return &Barbican{SC: &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: srv.URL + "/v1/", ResourceBase: srv.URL + "/v1/"}}
}

func TestBarbicanKey(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   []byte
		id     string
		is     error
		says   string
	}{
		{name: "payload", status: 200, body: theKey, id: keyID},
		{name: "reader", status: 403, body: []byte(`{"code": 403, "description": "secret body"}`), id: keyID, is: apierr.ErrForbidden, says: "member, not reader"},
		{name: "gone", status: 404, body: []byte("{}"), id: keyID, is: apierr.ErrNotFound, says: "HTTP 404"},
		{name: "server error", status: 500, body: []byte("<html>boom</html>"), id: keyID, is: apierr.ErrUnreachable, says: "HTTP 500"},
		{name: "empty", status: 200, body: nil, id: keyID, is: apierr.ErrInvalid},
		{name: "huge", status: 200, body: make([]byte, MaxKeySize+1), id: keyID, is: apierr.ErrInvalid},
		{name: "bad id", status: 200, body: theKey, id: "../../v1/secrets", is: apierr.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := fakeBarbican(t, tc.status, tc.body)
			key, err := b.Key(context.Background(), tc.id)
			if tc.is == nil {
				require.NoError(t, err)
				require.Equal(t, theKey, key)
				return
			}
			require.ErrorIs(t, err, tc.is)
			require.ErrorContains(t, err, tc.says)
			require.NotContains(t, err.Error(), "secret body")
			require.NotContains(t, err.Error(), "\n")
		})
	}
}

func TestBarbicanUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	pc := &gophercloud.ProviderClient{HTTPClient: http.Client{}}
	b := &Barbican{SC: &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: url + "/v1/", ResourceBase: url + "/v1/"}}
	_, err := b.Key(context.Background(), keyID)
	require.ErrorIs(t, err, apierr.ErrUnreachable)
}

// osFileSystem reads the real file system as host.FS does (tests only).
type osFileSystem struct{}

func (osFileSystem) ReadChecked(p string, noFollow bool, max int64, check func(fs.FileInfo) error) ([]byte, error) {
	flags := os.O_RDONLY
	if noFollow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(p, flags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := check(fi); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(f, max))
}

var osFiles osFileSystem

// anyOwner trusts every owner, as brick does when not root.
func anyOwner(string, fs.FileInfo) error { return nil }

func TestFixedKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), mode))
		require.NoError(t, os.Chmod(p, mode))
		return p
	}
	good := write("good", "00ff10\n", 0o600)
	f, err := LoadFixed(osFiles, good, anyOwner)
	require.NoError(t, err)
	key, err := f.Key(context.Background(), FixedKeyID)
	require.NoError(t, err)
	require.Equal(t, []byte{0x00, 0xff, 0x10}, key)
	_, err = f.Key(context.Background(), keyID)
	require.ErrorIs(t, err, apierr.ErrInvalid)

	_, err = LoadFixed(osFiles, write("open", "00ff10", 0o644), anyOwner)
	require.ErrorContains(t, err, "chmod 600")
	_, err = LoadFixed(osFiles, write("nothex", "secretzz", 0o600), anyOwner)
	require.ErrorContains(t, err, "hex digits")
	require.NotContains(t, err.Error(), "secretzz")
	require.NotContains(t, err.Error(), "'z'")
	_, err = LoadFixed(osFiles, write("empty", "\n", 0o600), anyOwner)
	require.Error(t, err)
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(good, link))
	_, err = LoadFixed(osFiles, link, anyOwner)
	require.ErrorContains(t, err, "not a regular file")
	_, err = LoadFixed(osFiles, filepath.Join(dir, "missing"), anyOwner)
	require.Error(t, err)
	require.False(t, strings.Contains(err.Error(), "00ff10"))
	refused := errors.New("owned by uid 1000")
	_, err = LoadFixed(osFiles, good, func(p string, _ fs.FileInfo) error {
		require.Equal(t, good, p)
		return refused
	})
	require.ErrorIs(t, err, refused)
	require.Error(t, err)
	require.False(t, strings.Contains(err.Error(), "00ff10"))
}

func TestNewBarbicanSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"not in the catalog", &gophercloud.ErrEndpointNotFound{}, "no key-manager endpoint in the catalog"},
		{"not answering", errors.New("Get \"http://10.0.2.2:9311/\": dial tcp: connection refused\nmore"), "did not answer as Barbican v1 (Get \"http://10.0.2.2:9311/\": dial tcp: connection refused): check that the key manager runs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewBarbican(context.Background(), func(context.Context) (*gophercloud.ServiceClient, error) { return nil, tc.err })
			require.ErrorIs(t, err, apierr.ErrUnreachable)
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), "\n")
		})
	}
}
