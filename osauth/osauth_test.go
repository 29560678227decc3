package osauth

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/secret"
)

func TestNoAuthCinderURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://h:8776/v3", "http://h:8776/v3/p1/"},
		{"http://h:8776/v3/", "http://h:8776/v3/p1/"},
		{"http://h:8776/v3/abc", "http://h:8776/v3/abc/"},
		{"http://h:8776/v3/%(project_id)s", "http://h:8776/v3/p1/"},
		{"https://h/volume/v3.0", "https://h/volume/v3.0/p1/"},
	} {
		got, err := noauthCinderURL(tc.in, "p1")
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{"h:8776/v3", "ftp://h/v3", "", "http:///v3"} {
		_, err := noauthCinderURL(bad, "p1")
		require.ErrorIs(t, err, ErrConfig, bad)
	}
}

func TestBlockStorageNoAuth(t *testing.T) {
	var gotToken, gotPath string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotToken, gotPath = r.Header.Get("X-Auth-Token"), r.URL.Path
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	red := host.NewRedactor()
	sc, err := BlockStorageClient(context.Background(), Options{AuthType: "none", CinderEndpoint: srv.URL + "/v3", Redactor: red})
	require.NoError(t, err)
	require.Equal(t, srv.URL+"/v3/"+DefaultNoAuthProject+"/", sc.Endpoint)
	_, err = sc.Get(context.Background(), sc.ServiceURL("volumes", "x"), nil, nil)
	require.NoError(t, err)
	require.Equal(t, "brick:"+DefaultNoAuthProject, gotToken)
	require.Equal(t, "/v3/"+DefaultNoAuthProject+"/volumes/x", gotPath)

	// Implicit noauth: an endpoint and no auth URL.
	sc, err = BlockStorageClient(context.Background(), Options{CinderEndpoint: srv.URL + "/v3", ProjectID: "abc", UserID: "u"})
	require.NoError(t, err)
	_, err = sc.Get(context.Background(), sc.ServiceURL("volumes"), nil, nil)
	require.NoError(t, err)
	require.Equal(t, "u:abc", gotToken)

	_, err = BlockStorageClient(context.Background(), Options{AuthType: "noauth"})
	require.ErrorIs(t, err, ErrConfig)
	require.Contains(t, err.Error(), "--cinder-endpoint")
	_, err = BlockStorageClient(context.Background(), Options{AuthType: "kerberos"})
	require.ErrorIs(t, err, ErrConfig)
}

// fakeKeystone answers POST /v3/auth/tokens with a catalog naming cinder.
func fakeKeystone(t *testing.T, cinderURL, wantPassword string) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v3/auth/tokens":
			var body map[string]any
			require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
			raw, _ := json.Marshal(body)
			if !strings.Contains(string(raw), wantPassword) {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			w.Header().Set("X-Subject-Token", "tok-SECRET-123")
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"token":{"project":{"id":"proj1","name":"demo"},"catalog":[
			 {"type":"block-storage","name":"cinder","endpoints":[
			  {"interface":"public","region":"R1","region_id":"R1","url":"` + cinderURL + `/v3/proj1"},
			  {"interface":"internal","region":"R1","region_id":"R1","url":"` + cinderURL + `/internal/v3/proj1"}]}]}}`))
		case "/v3/", "/v3":
			_, _ = w.Write([]byte(`{"version":{"id":"v3.14","status":"stable"}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	return srv
}

func TestBlockStoragePassword(t *testing.T) {
	ks := fakeKeystone(t, "http://cinder.example", "pw-SECRET")
	defer ks.Close()
	red := host.NewRedactor()
	opts := Options{AuthURL: ks.URL + "/v3", Username: "u", Password: secret.New("pw-SECRET"), ProjectName: "demo",
		UserDomainName: "Default", ProjectDomainName: "Default", RegionName: "R1", Redactor: red}
	sc, err := BlockStorageClient(context.Background(), opts)
	require.NoError(t, err)
	require.Equal(t, "http://cinder.example/v3/proj1/", sc.Endpoint)
	require.Equal(t, "x *** *** y", red.Redact("x tok-SECRET-123 pw-SECRET y"))

	opts.Interface = "internal"
	sc, err = BlockStorageClient(context.Background(), opts)
	require.NoError(t, err)
	require.Equal(t, "http://cinder.example/internal/v3/proj1/", sc.Endpoint)

	opts.CinderEndpoint = "http://other:8776/v3/$(project_id)s"
	sc, err = BlockStorageClient(context.Background(), opts)
	require.NoError(t, err)
	require.Equal(t, "http://other:8776/v3/proj1/", sc.Endpoint)

	opts.Password = secret.New("wrong")
	_, err = BlockStorageClient(context.Background(), opts)
	require.Error(t, err)
	require.Contains(t, err.Error(), "authenticate")

	_, err = BlockStorageClient(context.Background(), Options{AuthType: "password", AuthURL: ks.URL + "/v3"})
	require.ErrorIs(t, err, ErrConfig)
}

func TestCloudsYAML(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "clouds.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`
clouds:
  standalone:
    auth_type: none
    block_storage_endpoint_override: http://10.0.2.2:8776/v3
    auth:
      endpoint: http://10.0.2.2:6385
      project_id: abcdef
  keystone:
    auth:
      auth_url: https://ks.example/v3
      username: alice
      project_name: demo
    region_name: R2
    interface: internal
    verify: false
`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secure.yaml"), []byte(`
clouds:
  keystone:
    auth:
      password: s3cret-pass
`), 0o600))
	red := host.NewRedactor()
	o, err := Resolve(Options{Cloud: "standalone", CloudsFiles: []string{filepath.Join(dir, "missing.yaml"), file}})
	require.NoError(t, err)
	require.Equal(t, AuthNoAuth, o.AuthType)
	require.Equal(t, "http://10.0.2.2:8776/v3", o.CinderEndpoint)
	require.Equal(t, "http://10.0.2.2:6385", o.IronicEndpoint)
	require.Equal(t, "abcdef", o.ProjectID)
	require.False(t, o.Insecure)

	o, err = Resolve(Options{Cloud: "keystone", CloudsFiles: []string{file}, RegionName: "flag-wins", Redactor: red})
	require.NoError(t, err)
	require.Equal(t, AuthPassword, o.AuthType)
	require.Equal(t, "s3cret-pass", o.Password.Reveal())
	require.Equal(t, "flag-wins", o.RegionName)
	require.Equal(t, "internal", o.Interface)
	require.True(t, o.Insecure)
	require.Equal(t, "***", red.Redact("s3cret-pass"))

	_, err = Resolve(Options{Cloud: "nope", CloudsFiles: []string{file}})
	require.ErrorIs(t, err, ErrConfig)
	require.Contains(t, err.Error(), `"nope"`)
	_, err = Resolve(Options{Cloud: "x", CloudsFiles: []string{filepath.Join(dir, "none.yaml")}})
	require.ErrorIs(t, err, ErrConfig)
}

func TestTLSVerification(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	get := func(o Options) error {
		o.AuthType, o.CinderEndpoint = AuthNoAuth, srv.URL+"/v3"
		sc, err := BlockStorageClient(context.Background(), o)
		require.NoError(t, err)
		_, err = sc.Get(context.Background(), sc.ServiceURL("volumes"), nil, nil)
		return err
	}
	err := get(Options{})
	require.Error(t, err, "verification is on by default")
	require.Contains(t, err.Error(), "certificate")
	require.NoError(t, get(Options{Insecure: true}))

	ca := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600))
	require.NoError(t, get(Options{CACert: ca}))

	_, err = BlockStorageClient(context.Background(), Options{AuthType: AuthNoAuth, CinderEndpoint: srv.URL, CACert: filepath.Join(t.TempDir(), "x")})
	require.ErrorIs(t, err, ErrConfig)
}

func TestBaremetal(t *testing.T) {
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	red := host.NewRedactor()
	sc, err := BaremetalClient(context.Background(), Options{AuthType: "http_basic", IronicEndpoint: srv.URL, Username: "u", Password: secret.New("p4ss"), Redactor: red})
	require.NoError(t, err)
	_, err = sc.Get(context.Background(), sc.ServiceURL("nodes"), nil, nil)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(auth, "Basic "))
	require.NotContains(t, red.Redact(auth), strings.TrimPrefix(auth, "Basic "))

	sc, err = BaremetalClient(context.Background(), Options{AuthType: "none", IronicEndpoint: srv.URL})
	require.NoError(t, err)
	require.Equal(t, srv.URL+"/", sc.Endpoint)
	_, err = BaremetalClient(context.Background(), Options{AuthType: "noauth"})
	require.ErrorIs(t, err, ErrConfig)
	_, err = BlockStorageClient(context.Background(), Options{AuthType: "http_basic", CinderEndpoint: srv.URL})
	require.ErrorIs(t, err, ErrConfig)
	// Flag names, not gophercloud's field names (IronicUser).
	for _, o := range []Options{{Username: "u"}, {Password: secret.New("p4ss")}} {
		o.AuthType, o.IronicEndpoint = "http_basic", srv.URL
		_, err = BaremetalClient(context.Background(), o)
		require.ErrorIs(t, err, ErrConfig)
		require.ErrorContains(t, err, "http_basic Ironic needs --os-username and --os-password (OS_USERNAME, OS_PASSWORD)")
		require.NotContains(t, err.Error(), "IronicUser")
	}
}
