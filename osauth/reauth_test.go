package osauth

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/secret"
)

// TestRenewedTokenIsSecret: when the service refuses an expired token,
// the client gets a new one, and the redactor learns it as it learned the
// first, so a debug log or an error after the renewal cannot show it.
func TestRenewedTokenIsSecret(t *testing.T) {
	var mu sync.Mutex
	issued, valid := 0, ""
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ok := r.Header.Get("X-Auth-Token") == valid
		mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"volumes":[]}`))
	}))
	defer svc.Close()
	ks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v3/auth/tokens" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		issued++
		tok := fmt.Sprintf("renewable-token-%04d", issued)
		valid = tok
		mu.Unlock()
		w.Header().Set("X-Subject-Token", tok)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"token":{"project":{"id":"proj1","name":"demo"},"catalog":[
		 {"type":"block-storage","name":"cinder","endpoints":[
		  {"interface":"public","region":"R1","region_id":"R1","url":"` + svc.URL + `/v3/proj1"}]}]}}`))
	}))
	defer ks.Close()

	red := host.NewRedactor()
	sc, err := BlockStorageClient(context.Background(), Options{AuthURL: ks.URL + "/v3", Username: "u",
		Password: secret.New("pw-renew"), ProjectName: "demo", Redactor: red})
	require.NoError(t, err)
	first := sc.Token()
	mu.Lock()
	valid = "" // the first token expires
	mu.Unlock()
	_, err = sc.Get(context.Background(), sc.ServiceURL("volumes"), nil, nil)
	require.NoError(t, err, "the refused token is renewed and the call retried")
	renewed := sc.Token()
	require.NotEqual(t, first, renewed)
	require.Equal(t, "a *** b ***", red.Redact("a "+first+" b "+renewed))
}
