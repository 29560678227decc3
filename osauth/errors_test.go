package osauth

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/secret"
)

// TestAuthErrors: Keystone's 401 becomes one line naming what was sent;
// an unscoped retry tells a wrong password from an unusable project; a
// missing endpoint names the region and what the catalog has instead.
func TestAuthErrors(t *testing.T) {
	ks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body authBody
		require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		scope := body.Auth.Scope.Project
		if body.Auth.Identity.Password.User.Name != "u" || (scope.Name != "" && scope.Name != "demo") {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"code":401,"message":"The request you have made requires authentication.","title":"Unauthorized"}}`))
			return
		}
		w.Header().Set("X-Subject-Token", "tok")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"token":{"project":{"id":"p1"},"catalog":[
		 {"type":"volumev3","endpoints":[{"interface":"public","region":"R1","url":"http://c/v3/p1"},{"interface":"internal","region":"R2","url":"http://c2/v3/p1"}]}]}}`))
	}))
	defer ks.Close()
	at := "authenticate at " + ks.URL + "/v3: "
	for _, tc := range []struct {
		name string
		opts Options
		kind error
		want string
	}{
		{"wrong user", Options{Username: "x", Password: secret.New("p"), ProjectName: "demo"}, apierr.ErrUnauthorized,
			at + `wrong password, or no user "x" in domain id "default" (check --os-username or --os-user-id, --os-password and --os-user-domain-name)`},
		{"unknown project", Options{Username: "u", Password: secret.New("p"), ProjectName: "nope", ProjectDomainName: "D"}, apierr.ErrUnauthorized,
			at + `user "u" in domain id "default" may not use project "nope" in domain "D": it does not exist there or the user has no role on it (check --os-project-name or --os-project-id and --os-project-domain-name)`},
		{"no endpoint", Options{Username: "u", Password: secret.New("p"), ProjectName: "demo", RegionName: "R3"}, apierr.ErrNoEndpoint,
			`the service catalog has no Cinder endpoint (type block-storage, block-store, volume, volumev2, volumev3) for interface "public" in region "R3"; it has: R1 public, R2 internal (set --os-region-name, --os-interface or --cinder-endpoint)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.AuthURL = ks.URL + "/v3"
			_, err := BlockStorageClient(context.Background(), tc.opts)
			require.ErrorIs(t, err, tc.kind)
			require.Equal(t, tc.want, err.Error())
			if tc.kind == apierr.ErrUnauthorized {
				require.True(t, gophercloud.ResponseCodeIs(err, http.StatusUnauthorized))
			}
		})
	}
}

func TestNoCredentials(t *testing.T) {
	_, err := BlockStorageClient(context.Background(), Options{})
	require.ErrorIs(t, err, ErrConfig)
	require.Equal(t, "openstack auth configuration: no OpenStack credentials: set OS_CLOUD (a clouds.yaml entry), or OS_AUTH_URL with OS_USERNAME, OS_PASSWORD and OS_PROJECT_NAME (an openrc file), or use --os-auth-type noauth with --cinder-endpoint when Cinder runs without Keystone", err.Error())
	_, err = BaremetalClient(context.Background(), Options{})
	require.ErrorIs(t, err, ErrConfig)
	require.Contains(t, err.Error(), "--os-auth-type noauth with --ironic-endpoint when Ironic runs")
	_, err = BaremetalClient(context.Background(), Options{AuthType: "none"})
	require.Equal(t, "openstack auth configuration: noauth Ironic needs --ironic-endpoint (BRICK_IRONIC_ENDPOINT), e.g. http://host:6385", err.Error())
}

// TestKeystoneUnreachable: a Keystone that gives no usable answer is one
// line naming the URL, what happened and the fix: never Go's "dial tcp"
// text, an HTML page or a JSON decoder's complaint.
func TestKeystoneUnreachable(t *testing.T) {
	serve := func(h http.HandlerFunc) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	html := serve(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"))
	})
	notJSON := serve(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("hello"))
	})
	release := make(chan struct{})
	hung := serve(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // before srv.Close, which waits for the handler
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(tlsSrv.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())

	check := "; check --os-auth-url (OS_AUTH_URL, or auth_url in clouds.yaml) and that Keystone runs there"
	// Only the hung server needs the short limit; the others get one a busy
	// machine's TLS handshake fits in.
	for _, tc := range []struct{ name, url, want string }{
		{"closed port", closed, "cannot reach " + closed + "/v3/auth/tokens: connection refused" + check},
		{"proxy error page", html, `Keystone answered HTTP 502: an HTML page titled "502 Bad Gateway" (a proxy's?)` + check},
		{"not JSON", notJSON, "the answer is not JSON, so not Keystone's" + check},
		{"hung", hung, "no answer from " + hung + "/v3/auth/tokens within 200ms (the time limit of one request, --api-timeout)" + check},
		{"TLS", tlsSrv.URL, "the server's certificate is not trusted: give the CA bundle with --os-cacert, or verify: false in clouds.yaml / --insecure to skip the check"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limit := 10 * time.Second
			if tc.url == hung {
				limit = 200 * time.Millisecond
			}
			_, err := BlockStorageClient(context.Background(), Options{AuthURL: tc.url + "/v3", Username: "u",
				Password: secret.New("pw-unreach"), ProjectName: "demo", Timeout: limit})
			require.ErrorIs(t, err, apierr.ErrUnreachable)
			require.Equal(t, "authenticate at "+tc.url+"/v3: "+tc.want, err.Error())
		})
	}
	require.Equal(t, `Keystone's message`, bodySummary([]byte(`{"error":{"message":"Keystone's message\nmore"}}`)))
	require.Equal(t, "a body that is not Keystone's JSON", bodySummary([]byte("plain")))
}

// TestConfigErrorsNameFlags: settings gophercloud would refuse in its own
// field names are refused first, naming brick's flags.
func TestConfigErrorsNameFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"user domain twice", Options{Username: "u", Password: secret.New("p"), UserDomainName: "D", UserDomainID: "d"},
			`give --os-user-domain-name or --os-user-domain-id, not both (name "D", id "d")`},
		{"project domain twice", Options{Username: "u", Password: secret.New("p"), ProjectName: "p", ProjectDomainName: "D", DomainID: "d"},
			`give --os-project-domain-name or --os-project-domain-id, not both (name "D", id "d")`},
		{"app credential name without user", Options{AppCredName: "n", AppCredSecret: secret.New("s")},
			"an application credential given by name needs its user: --os-username (or --os-user-id), or use --os-application-credential-id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.AuthURL = "http://127.0.0.1:1/v3"
			_, err := BaremetalClient(context.Background(), tc.opts)
			require.ErrorIs(t, err, ErrConfig)
			require.ErrorContains(t, err, tc.want)
		})
	}
	// A domain that is not used is not checked: the user is given by id.
	_, err := authOptions(Options{AuthType: AuthPassword, AuthURL: "http://k/v3", UserID: "u1", Password: secret.New("p"), UserDomainName: "D", UserDomainID: "d"})
	require.NoError(t, err)
}
