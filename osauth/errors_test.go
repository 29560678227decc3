package osauth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"

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
		{"wrong user", Options{Username: "x", Password: secret.New("p"), ProjectName: "demo"}, ErrUnauthorized,
			at + `wrong password, or no user "x" in domain id "default" (check --os-username or --os-user-id, --os-password and --os-user-domain-name)`},
		{"unknown project", Options{Username: "u", Password: secret.New("p"), ProjectName: "nope", ProjectDomainName: "D"}, ErrUnauthorized,
			at + `user "u" in domain id "default" may not use project "nope" in domain "D": it does not exist there or the user has no role on it (check --os-project-name or --os-project-id and --os-project-domain-name)`},
		{"no endpoint", Options{Username: "u", Password: secret.New("p"), ProjectName: "demo", RegionName: "R3"}, ErrNoEndpoint,
			`the service catalog has no Cinder endpoint (type block-storage, block-store, volume, volumev2, volumev3) for interface "public" in region "R3"; it has: R1 public, R2 internal (set --os-region-name, --os-interface or --cinder-endpoint)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.AuthURL = ks.URL + "/v3"
			_, err := BlockStorageClient(context.Background(), tc.opts)
			require.ErrorIs(t, err, tc.kind)
			require.Equal(t, tc.want, err.Error())
			if tc.kind == ErrUnauthorized {
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
