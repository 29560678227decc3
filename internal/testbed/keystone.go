package testbed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Defaults of KeystoneOptions; the same as test/keystone/up.sh's.
const (
	DefaultKeystoneStateDir = "/var/tmp/brick-testbed/keystone"
	DefaultKeystonePort     = 5000
)

// KeystoneOptions are the settings of the test bed's Keystone. The zero
// value is the default Keystone on 127.0.0.1:5000 with one-hour tokens.
type KeystoneOptions struct {
	// StateDir holds config, database, keys and logs (default
	// $BRICK_TB_KEYSTONE_STATE, else /var/tmp/brick-testbed/keystone).
	StateDir string
	// Port is the API port on 127.0.0.1 (default $BRICK_TB_KEYSTONE_PORT,
	// else 5000). The catalog's identity endpoints name it.
	Port int
	// TokenExpiration is [token] expiration (default one hour); expiry
	// tests set it to seconds.
	TokenExpiration time.Duration
	// Keep keeps the database (application credentials made by tests)
	// across a restart.
	Keep bool
	// Debug turns on Keystone's debug logging.
	Debug bool
}

func (o KeystoneOptions) normalized() KeystoneOptions {
	if o.StateDir == "" {
		o.StateDir = envOr("BRICK_TB_KEYSTONE_STATE", DefaultKeystoneStateDir)
	}
	if o.Port == 0 {
		o.Port = envIntOr("BRICK_TB_KEYSTONE_PORT", DefaultKeystonePort)
	}
	if o.TokenExpiration <= 0 {
		o.TokenExpiration = time.Hour
	}
	return o
}

func (o KeystoneOptions) env() map[string]string {
	o = o.normalized()
	return map[string]string{
		"BRICK_TB_KEYSTONE_STATE":            o.StateDir,
		"BRICK_TB_KEYSTONE_PORT":             strconv.Itoa(o.Port),
		"BRICK_TB_KEYSTONE_TOKEN_EXPIRATION": strconv.Itoa(int(o.TokenExpiration.Seconds())),
		"BRICK_TB_KEYSTONE_KEEP":             boolEnv(o.Keep),
		"BRICK_TB_DEBUG":                     boolEnv(o.Debug),
	}
}

// KeystoneUser is one of the test bed's users, all in the default domain.
type KeystoneUser struct {
	Name, ID, Password string
}

// Keystone is a running test bed Keystone. Its catalog has Cinder as
// block-storage (RegionOne: public http://127.0.0.1:8776/v3/<project>,
// internal http://127.0.0.3:8776/...) and as volumev3 (RegionTwo: public
// http://127.0.0.2:8776/...), Ironic as baremetal (RegionOne public
// http://127.0.0.1:6385 and internal http://127.0.0.3:6385, RegionTwo
// public http://127.0.0.2:6385), and RegionThree with no such endpoint.
// RegionOne's public endpoints are the test bed's Cinder and Ironic; the
// 127.0.0.2 and 127.0.0.3 ones are for tests to serve.
type Keystone struct {
	// AuthURL is http://127.0.0.1:5000/v3.
	AuthURL string
	// Project is "brick" (ProjectID its id) in the default domain; Member,
	// Reader and ProjectAdmin have the member, reader and admin role on it.
	Project, ProjectID string
	Member             KeystoneUser
	Reader             KeystoneUser
	ProjectAdmin       KeystoneUser
	TokenExpiration    time.Duration
	StateDir, LogFile  string
	// Started tells whether the StartKeystone call that returned this
	// value started the service (false: it was already running).
	Started bool
	// Env is the whole env file.
	Env map[string]string

	opts KeystoneOptions
	user *userLock
}

// StartKeystone runs test/keystone/up.sh with opts: it starts Keystone,
// restarts it when it runs with other settings, or does nothing when it
// already runs as asked. It returns when the member user gets a token.
// The caller calls Done when it no longer needs the service.
func StartKeystone(ctx context.Context, opts KeystoneOptions) (*Keystone, error) {
	opts = opts.normalized()
	envFile := filepath.Join(opts.StateDir, "env")
	env, err := startService(ctx, "test/keystone/up.sh", opts.StateDir, opts.env())
	if err != nil {
		return nil, err
	}
	k := &Keystone{Env: env, opts: opts, StateDir: opts.StateDir, TokenExpiration: opts.TokenExpiration}
	get := func(dst *string, key string) {
		if err == nil {
			*dst, err = need(env, "BRICK_TB_KEYSTONE_"+key, envFile)
		}
	}
	get(&k.AuthURL, "AUTH_URL")
	get(&k.Project, "PROJECT")
	get(&k.ProjectID, "PROJECT_ID")
	get(&k.LogFile, "LOG")
	for prefix, u := range map[string]*KeystoneUser{"MEMBER": &k.Member, "READER": &k.Reader, "PROJECT_ADMIN": &k.ProjectAdmin} {
		get(&u.Name, prefix+"_USER")
		get(&u.ID, prefix+"_USER_ID")
		get(&u.Password, prefix+"_PASSWORD")
	}
	if err != nil {
		return nil, err
	}
	k.Started = env["BRICK_TB_KEYSTONE_STARTED_BY"] == starterToken
	if k.user, err = lockShared(k.StateDir); err != nil {
		return nil, fmt.Errorf("testbed: keystone users lock: %w", err)
	}
	return k, nil
}

// Done releases this process's use of Keystone and stops it when this
// StartKeystone started it, no other test process uses it and
// BRICK_TB_KEEP_UP is not 1.
func (k *Keystone) Done(ctx context.Context) error {
	if k.user == nil {
		return nil
	}
	sole, done := k.user.releaseAndCheckSole()
	defer done()
	k.user = nil
	if !k.Started || !sole || os.Getenv(EnvKeepUp) == "1" {
		return nil
	}
	return StopKeystone(ctx, k.opts)
}

// StopKeystone runs test/keystone/down.sh for the state dir of opts.
func StopKeystone(ctx context.Context, opts KeystoneOptions) error {
	opts = opts.normalized()
	_, err := runScript(ctx, "test/keystone/down.sh", map[string]string{"BRICK_TB_KEYSTONE_STATE": opts.StateDir})
	return err
}

// Token returns a token of u scoped to the brick project.
func (k *Keystone) Token(ctx context.Context, u KeystoneUser) (string, error) {
	body := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{
			"user": map[string]any{"id": u.ID, "password": u.Password}}},
		"scope": map[string]any{"project": map[string]any{"id": k.ProjectID}},
	}}
	resp, err := k.post(ctx, "/auth/tokens", "", body, nil)
	if err != nil {
		return "", err
	}
	return resp.Header.Get("X-Subject-Token"), nil
}

// ApplicationCredential is a credential a user made for itself.
type ApplicationCredential struct {
	ID, Name, Secret string
}

// CreateApplicationCredential makes u (with its own token, as a member
// would in Horizon) an application credential named name.
func (k *Keystone) CreateApplicationCredential(ctx context.Context, u KeystoneUser, name string) (ApplicationCredential, error) {
	tok, err := k.Token(ctx, u)
	if err != nil {
		return ApplicationCredential{}, err
	}
	var out struct {
		AC ApplicationCredential `json:"application_credential"`
	}
	in := map[string]any{"application_credential": map[string]any{"name": name}}
	if _, err := k.post(ctx, "/users/"+u.ID+"/application_credentials", tok, in, &out); err != nil {
		return ApplicationCredential{}, err
	}
	return out.AC, nil
}

// post sends in as JSON to AuthURL+path and decodes a 2xx answer into out.
func (k *Keystone) post(ctx context.Context, path, token string, in, out any) (*http.Response, error) {
	data, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, k.AuthURL+path, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return nil, &HTTPError{Method: req.Method, URL: req.URL.String(), Status: resp.StatusCode, Body: string(body)}
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return nil, fmt.Errorf("testbed: %s %s: %w", req.Method, req.URL, err)
		}
	}
	return resp, nil
}
