package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/cinderapi/cindertest"
)

// fakeKeystone issues a token on the first password auth and refuses
// every later one (a password changed or a user disabled mid-run, or
// Keystone down after the start), counting the attempts.
type fakeKeystone struct {
	*httptest.Server
	mu    sync.Mutex
	auths int
}

func newFakeKeystone(t *testing.T) *fakeKeystone {
	k := &fakeKeystone{}
	k.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v3/auth/tokens" {
			http.NotFound(w, r)
			return
		}
		k.mu.Lock()
		k.auths++
		n := k.auths
		k.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n > 1 {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"code":401,"title":"Unauthorized","message":"The request you have made requires authentication."}}`))
			return
		}
		w.Header().Set("X-Subject-Token", "ks-token-1:"+cindertest.Project)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"token": map[string]any{
			"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
			"project":    map[string]any{"id": cindertest.Project, "name": "p", "domain": map[string]any{"id": "default"}},
			"user":       map[string]any{"id": "u1", "name": "u", "domain": map[string]any{"id": "default"}},
			"catalog":    []any{},
		}})
	}))
	t.Cleanup(k.Close)
	return k
}

func (k *fakeKeystone) attempts() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.auths
}

// TestRollbackWhenReauthFails: Cinder refuses the token in the middle of
// local-attach (it expired) and the renewal fails too. brick still undoes
// what it did (the reservation), prints one line naming the step, and the
// volume is available again.
func TestRollbackWhenReauthFails(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	root := fixtureHost(t)
	f := &fakeTools{t: t, root: root}
	fake := cindertest.New(t)
	const vol = "22222222-2222-4222-8222-222222222222"
	fake.AddVolume(vol, "data")
	ks := newFakeKeystone(t)
	// The first export call finds the token expired.
	fake.Fail("attachment-update", cindertest.Fault{Status: 401, Times: 1, Body: `{"error":{"code":401,"title":"Unauthorized","message":"The request you have made requires authentication."}}`})

	code, out := runCaptured(t, f, "--host-root", root, "--config", "/dev/null",
		"--os-auth-url", ks.URL+"/v3", "--os-username", "u", "--os-password", "pw", "--os-project-name", "p",
		"--cinder-endpoint", fake.URL+"/v3/"+cindertest.Project, "local-attach", "data")
	t.Logf("exit %d\n%s", code, out)
	require.Equal(t, 1, code)
	require.Equal(t, 2, ks.attempts(), "brick tried to renew the token once")
	st, n := fake.Status(vol)
	require.Equal(t, "available", st, "the rollback ran")
	require.Zero(t, n, "no attachment left")
	stderr := out[strings.Index(out, "STDERR:\n")+len("STDERR:\n"):]
	require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	require.Equal(t, "brick: local-attach data: cinder attachment update volume "+vol+": Cinder refused the token (expired or revoked) "+
		"and getting a new one failed: renew the token at "+ks.URL+"/v3: Keystone refused the credentials that worked at the start "+
		"(password changed, user disabled, or application credential deleted?) (HTTP 401)\n", stderr)
}

// TestRollbackWhenReauthFailsForGood: the token stays refused for the
// undo too. The rollback still runs (it asks Cinder to delete the
// attachment), and the user learns what is left and how to clean it up.
func TestRollbackWhenReauthFailsForGood(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	root := fixtureHost(t)
	f := &fakeTools{t: t, root: root}
	fake := cindertest.New(t)
	const vol = "33333333-3333-4333-8333-333333333333"
	fake.AddVolume(vol, "data")
	ks := newFakeKeystone(t)
	body := `{"error":{"code":401,"title":"Unauthorized","message":"The request you have made requires authentication."}}`
	fake.Fail("attachment-update", cindertest.Fault{Status: 401, Body: body})
	fake.Fail("attachment-delete", cindertest.Fault{Status: 401, Body: body})

	code, out := runCaptured(t, f, "--host-root", root, "--config", "/dev/null",
		"--os-auth-url", ks.URL+"/v3", "--os-username", "u", "--os-password", "pw", "--os-project-name", "p",
		"--cinder-endpoint", fake.URL+"/v3/"+cindertest.Project, "local-attach", "data")
	t.Logf("exit %d\n%s", code, out)
	require.Equal(t, 1, code)
	require.Contains(t, fake.Ops(), "attachment-delete", "the rollback ran")
	stderr := out[strings.Index(out, "STDERR:\n")+len("STDERR:\n"):]
	require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	require.Contains(t, stderr, "getting a new one failed: renew the token at "+ks.URL+"/v3: Keystone refused the credentials that worked at the start")
	require.Contains(t, stderr, "rollback incomplete (release: cinder attachment delete volume "+vol)
	require.True(t, strings.HasSuffix(stderr, "run brick cleanup "+vol+"\n"), stderr)
}

// TestHelpBuildsNoClient: --help of a cloud command, with every cloud
// option given, neither authenticates nor reads clouds.yaml.
func TestHelpBuildsNoClient(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	root := fixtureHost(t)
	f := &fakeTools{t: t, root: root}
	ks := newFakeKeystone(t)
	for _, cmd := range [][]string{{"local-attach", "--help"}, {"ironic", "attach-volume", "--help"}, {"cleanup", "--help"}} {
		args := append([]string{"--host-root", root, "--config", "/dev/null", "--os-cloud", "nosuch",
			"--os-auth-url", ks.URL + "/v3", "--os-username", "u", "--os-password", "pw"}, cmd...)
		code, out := runCaptured(t, f, args...)
		require.Zero(t, code, out)
	}
	require.Zero(t, ks.attempts())
}
