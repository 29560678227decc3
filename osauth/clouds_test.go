package osauth

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/secret"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
}

// TestSecureYAMLOverlay: every key of secure.yaml reaches the options,
// including the ones the field-by-field merge used to forget.
func TestSecureYAMLOverlay(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "clouds.yaml")
	writeFile(t, file, `
clouds:
  c:
    auth:
      auth_url: https://ks.example/v3
      username: alice
      project_name: demo
    regions: [R1, {name: R2, values: {interface: internal}}]
    region_name: R1
    verify: true
    volume_api_version: "3"
`)
	writeFile(t, filepath.Join(dir, "secure.yaml"), `
clouds:
  c:
    auth_type: v3password
    endpoint_type: internalURL
    volume_endpoint_override: http://cinder.example/v3/$(project_id)s
    verify: false
    region_name: ""
    auth:
      password: pw-from-secure
      user_domain_name: Users
      default_domain: dflt
  other:
    auth:
      password: not-this-one
`)
	red := host.NewRedactor()
	o, err := Resolve(Options{Cloud: "c", CloudsFiles: []string{file}, Redactor: red})
	require.NoError(t, err)
	require.Equal(t, AuthPassword, o.AuthType)
	require.Equal(t, "https://ks.example/v3", o.AuthURL)
	require.Equal(t, "alice", o.Username)
	require.Equal(t, "pw-from-secure", o.Password.Reveal())
	require.Equal(t, "Users", o.UserDomainName)
	require.Equal(t, "dflt", o.DefaultDomain)
	require.Equal(t, "internalURL", o.Interface)
	require.Equal(t, "http://cinder.example/v3/$(project_id)s", o.CinderEndpoint)
	require.Equal(t, "R1", o.RegionName, "an empty value in secure.yaml does not erase one")
	require.True(t, o.Insecure)
	require.Equal(t, "***", red.Redact("pw-from-secure"))
}

func TestOverlay(t *testing.T) {
	for _, tc := range []struct{ base, over, want string }{
		{"a: 1", "b: 2", "a: 1\nb: 2\n"},
		{"a: {x: 1, y: 2}", "a: {y: 3}", "a: {x: 1, y: 3}\n"},
		{"a: {x: 1}", "a: 7", "a: 7\n"},
		{"a: 1", "a: null", "a: 1\n"},
		{"a: [1]", "a: [2]", "a: [2]\n"},
	} {
		var base, over yamlDoc
		require.NoError(t, base.parse(tc.base))
		require.NoError(t, over.parse(tc.over))
		overlay(base.root(), over.root())
		require.Equal(t, tc.want, base.String(t), tc.base+" + "+tc.over)
	}
}

func TestCloudsFileFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "my-clouds.yaml")
	writeFile(t, file, "clouds:\n  envcloud:\n    auth_type: none\n    block_storage_endpoint_override: http://h:8776/v3\n")
	writeFile(t, filepath.Join(dir, "secure.yaml"), "clouds:\n  envcloud:\n    auth:\n      project_id: abc\n")
	t.Setenv("OS_CLIENT_CONFIG_FILE", file)
	o, err := Resolve(Options{Cloud: "envcloud"})
	require.NoError(t, err)
	require.Equal(t, "http://h:8776/v3", o.CinderEndpoint)
	require.Equal(t, "abc", o.ProjectID)

	t.Setenv("OS_CLIENT_CONFIG_FILE", filepath.Join(dir, "missing.yaml"))
	_, err = Resolve(Options{Cloud: "envcloud"})
	require.ErrorIs(t, err, ErrConfig)
	require.Contains(t, err.Error(), "missing.yaml")
}

// authBody is the part of a Keystone token request the tests look at.
type authBody struct {
	Auth struct {
		Identity struct {
			Password struct {
				User struct {
					ID, Name string
					Domain   map[string]string
				}
			}
			ApplicationCredential struct {
				Name string
				User struct {
					Name   string
					Domain map[string]string
				}
			} `json:"application_credential"`
		}
		Scope struct {
			Project struct {
				ID, Name string
				Domain   map[string]string
			}
		}
	}
}

// yamlDoc is a parsed YAML document for overlay tests.
type yamlDoc struct{ doc yaml.Node }

func (d *yamlDoc) parse(s string) error { return yaml.Unmarshal([]byte(s), &d.doc) }
func (d *yamlDoc) root() *yaml.Node     { return d.doc.Content[0] }
func (d *yamlDoc) String(t *testing.T) string {
	out, err := yaml.Marshal(d.root())
	require.NoError(t, err)
	return string(out)
}

// TestDefaultDomain: a user and a project named without a domain land in
// the default domain (or --os-default-domain), as with openstackclient;
// domains that are given, and users given by id, are left alone.
func TestDefaultDomain(t *testing.T) {
	var got authBody
	ks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = authBody{}
		require.NoError(t, json.NewDecoder(r.Body).Decode(&got))
		w.Header().Set("X-Subject-Token", "tok")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"token":{"project":{"id":"p1"},"catalog":[]}}`))
	}))
	defer ks.Close()
	base := Options{AuthURL: ks.URL + "/v3", CinderEndpoint: "http://c/v3", Password: secret.New("pw")}
	for _, tc := range []struct {
		name                     string
		edit                     func(*Options)
		userDomain, scopeDomain  map[string]string
		appCredUserDomain        map[string]string
		wantUserID, wantScopedID string
	}{
		{name: "none given", edit: func(o *Options) { o.Username, o.ProjectName = "u", "demo" },
			userDomain: map[string]string{"id": "default"}, scopeDomain: map[string]string{"id": "default"}},
		{name: "default domain set", edit: func(o *Options) { o.Username, o.ProjectName, o.DefaultDomain = "u", "demo", "d2" },
			userDomain: map[string]string{"id": "d2"}, scopeDomain: map[string]string{"id": "d2"}},
		{name: "given by name", edit: func(o *Options) {
			o.Username, o.ProjectName, o.UserDomainName, o.ProjectDomainName = "u", "demo", "Users", "Projects"
		}, userDomain: map[string]string{"name": "Users"}, scopeDomain: map[string]string{"name": "Projects"}},
		{name: "shared domain", edit: func(o *Options) { o.Username, o.ProjectName, o.DomainID = "u", "demo", "shared" },
			userDomain: map[string]string{"id": "shared"}, scopeDomain: map[string]string{"id": "shared"}},
		{name: "ids need no domain", edit: func(o *Options) { o.UserID, o.ProjectID = "uid", "pid" },
			wantUserID: "uid", wantScopedID: "pid"},
		{name: "app cred by name", edit: func(o *Options) {
			o.AuthType, o.AppCredName, o.AppCredSecret, o.Username = AuthApplicationCredential, "ac", secret.New("s"), "u"
		}, appCredUserDomain: map[string]string{"id": "default"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			tc.edit(&o)
			_, err := BlockStorageClient(context.Background(), o)
			require.NoError(t, err)
			id := got.Auth.Identity
			require.Equal(t, tc.userDomain, id.Password.User.Domain)
			require.Equal(t, tc.wantUserID, id.Password.User.ID)
			require.Equal(t, tc.scopeDomain, got.Auth.Scope.Project.Domain)
			require.Equal(t, tc.wantScopedID, got.Auth.Scope.Project.ID)
			require.Equal(t, tc.appCredUserDomain, id.ApplicationCredential.User.Domain)
		})
	}
}

// clouds.yaml's volume_api_version / block_storage_api_version: the major
// version 3 negotiates, 3.N forces a microversion, anything else is
// refused in one line; --os-volume-api-version wins over the file.
func TestCloudVolumeAPIVersion(t *testing.T) {
	for _, tc := range []struct {
		name, keys, flag, want, err string
	}{
		{"absent", ``, "", "", ""},
		{"major 3 unquoted", `volume_api_version: 3`, "", "", ""},
		{"major 3 quoted", `volume_api_version: "3"`, "", "", ""},
		{"microversion", `volume_api_version: 3.44`, "", "3.44", ""},
		{"sdk name", `block_storage_api_version: "3.27"`, "", "3.27", ""},
		{"sdk name wins", "block_storage_api_version: 3.50\n    volume_api_version: 3.44", "", "3.50", ""},
		{"flag wins", `volume_api_version: 2`, "3.0", "3.0", ""},
		{"v2", `volume_api_version: 2`, "", "",
			`openstack auth configuration: cloud "c": volume_api_version "2": brick speaks the Block Storage (Cinder) API v3 only; set 3 (negotiate the microversion), 3.N to force one, or remove the key`},
		{"garbage", `block_storage_api_version: 3.x`, "", "",
			`openstack auth configuration: cloud "c": block_storage_api_version "3.x": brick speaks the Block Storage (Cinder) API v3 only; set 3 (negotiate the microversion), 3.N to force one, or remove the key`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "clouds.yaml")
			writeFile(t, file, "clouds:\n  c:\n    auth:\n      auth_url: https://ks.example/v3\n    "+tc.keys+"\n")
			o, err := Resolve(Options{Cloud: "c", CloudsFiles: []string{file}, VolumeAPIVersion: tc.flag})
			if tc.err != "" {
				require.ErrorIs(t, err, ErrConfig)
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, o.VolumeAPIVersion)
		})
	}
}

// TestCloudsYAMLMistakes: a misspelt key, an unknown cloud and a missing
// file each say what is wrong in the user's words.
func TestCloudsYAMLMistakes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "clouds.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`clouds:
  prod:
    auht:
      auth_url: http://ks/v3
      username: u
  staging:
    auth:
      auth_ulr: http://ks/v3
      password: pw
  lab:
    auth_type: none
`), 0o600))
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	for _, tc := range []struct{ cloud, want string }{
		{"prod", `openstack auth configuration: no OpenStack credentials: clouds.yaml entry "prod" has "auht" (auth?), which brick does not read: fix the spelling`},
		{"staging", `clouds.yaml entry "staging" has auth."auth_ulr" (auth.auth_url?), which brick does not read`},
		{"prd", `openstack auth configuration: cloud "prd" not found in ` + file + ` (did you mean "prod"? it has: lab, prod, staging)`},
		{"elsewhere", `openstack auth configuration: cloud "elsewhere" not found in ` + file + ` (it has: lab, prod, staging)`},
	} {
		_, err := BlockStorageClient(t.Context(), Options{Cloud: tc.cloud, CloudsFiles: []string{file}, Log: log})
		require.ErrorIs(t, err, ErrConfig, tc.cloud)
		require.ErrorContains(t, err, tc.want, tc.cloud)
	}
	require.Contains(t, logs.String(), `brick does not read \"auht\" (auth?): misspelt?`)

	missing := []string{filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")}
	_, err := Resolve(Options{Cloud: "prod", CloudsFiles: missing})
	require.EqualError(t, err, `openstack auth configuration: cloud "prod": no clouds.yaml found (tried `+missing[0]+", "+missing[1]+")")
}
