package testbed

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"time"
)

// Defaults of IronicOptions; the same as test/ironic/up.sh's.
const (
	DefaultIronicStateDir = "/var/tmp/brick-testbed/ironic"
	DefaultIronicPort     = 6385
	// The keystone-mode Ironic's, so that it runs beside the noauth one.
	DefaultIronicKeystoneStateDir = "/var/tmp/brick-testbed/ironic-keystone"
	DefaultIronicKeystonePort     = 6386
	DefaultIronicMaxLimit         = 1000
)

// IronicVolumeMicroversion is the lowest microversion with the volume
// connector/target API.
const IronicVolumeMicroversion = "1.32"

// IronicOptions are the settings of the test bed's Ironic. The zero value
// is the default Ironic on 127.0.0.1:6385.
type IronicOptions struct {
	// Keystone runs Ironic with auth_strategy = keystone: tokens of the
	// test bed Keystone (which must run) are checked and policy applies.
	// It has its own defaults for StateDir and Port, so it runs beside
	// the noauth Ironic.
	Keystone bool
	// StateDir holds config, database and logs (default
	// $BRICK_TB_IRONIC_STATE, else /var/tmp/brick-testbed/ironic, with
	// Keystone /var/tmp/brick-testbed/ironic-keystone).
	StateDir string
	// Port is the API port on 127.0.0.1 (default $BRICK_TB_IRONIC_PORT,
	// else 6385, with Keystone 6386). With another StateDir and Port,
	// several Ironics can run side by side (e.g. one per engineer or CI
	// job on a shared host).
	Port int
	// MaxLimit is [api] max_limit, the largest page the API returns
	// (default 1000). Pagination tests set it small.
	MaxLimit int
	// Keep keeps the database across a restart.
	Keep bool
	// Debug turns on Ironic's debug logging.
	Debug bool
}

func (o IronicOptions) normalized() IronicOptions {
	switch {
	case o.StateDir != "":
	case o.Keystone:
		o.StateDir = envOr("BRICK_TB_IRONIC_KEYSTONE_STATE", DefaultIronicKeystoneStateDir)
	default:
		o.StateDir = envOr("BRICK_TB_IRONIC_STATE", DefaultIronicStateDir)
	}
	switch {
	case o.Port != 0:
	case o.Keystone:
		o.Port = envIntOr("BRICK_TB_IRONIC_KEYSTONE_PORT", DefaultIronicKeystonePort)
	default:
		o.Port = envIntOr("BRICK_TB_IRONIC_PORT", DefaultIronicPort)
	}
	if o.MaxLimit == 0 {
		o.MaxLimit = DefaultIronicMaxLimit
	}
	return o
}

func (o IronicOptions) env() map[string]string {
	o = o.normalized()
	return map[string]string{
		"BRICK_TB_IRONIC_STATE":     o.StateDir,
		"BRICK_TB_IRONIC_PORT":      strconv.Itoa(o.Port),
		"BRICK_TB_IRONIC_MAX_LIMIT": strconv.Itoa(o.MaxLimit),
		"BRICK_TB_IRONIC_KEEP":      boolEnv(o.Keep),
		"BRICK_TB_DEBUG":            boolEnv(o.Debug),
		"BRICK_TB_IRONIC_AUTH":      map[bool]string{false: "noauth", true: "keystone"}[o.Keystone],
	}
}

// Ironic is a running test bed Ironic.
type Ironic struct {
	// Endpoint is http://127.0.0.1:6385 (BRICK_IRONIC_ENDPOINT).
	Endpoint string
	// MaxMicroversion is the highest API microversion (1.82).
	MaxMicroversion string
	MaxLimit        int
	StateDir        string
	LogFile         string
	// Started tells whether the StartIronic call that returned this value
	// started the service (false: it was already running, unchanged).
	Started bool
	// Keystone: it checks tokens (auth_strategy = keystone).
	Keystone bool
	// AuthToken, when set, is sent as X-Auth-Token by Request and the
	// helpers built on it (a keystone-mode Ironic refuses requests
	// without one).
	AuthToken string
	// Env is the whole env file.
	Env map[string]string

	opts IronicOptions
}

// StartIronic runs test/ironic/up.sh with opts: it starts Ironic, restarts
// it when it runs with other settings, or does nothing when it already runs
// as asked. It returns when the API lists the fake-hardware driver.
func StartIronic(ctx context.Context, opts IronicOptions) (*Ironic, error) {
	opts = opts.normalized()
	envFile := filepath.Join(opts.StateDir, "env")
	env, err := startService(ctx, "test/ironic/up.sh", opts.StateDir, opts.env())
	if err != nil {
		return nil, err
	}
	i := &Ironic{Env: env, opts: opts, StateDir: opts.StateDir}
	for _, f := range []struct {
		dst *string
		key string
	}{
		{&i.Endpoint, "BRICK_IRONIC_ENDPOINT"},
		{&i.MaxMicroversion, "BRICK_TB_IRONIC_MAX_MICROVERSION"},
		{&i.LogFile, "BRICK_TB_IRONIC_LOG"},
	} {
		if *f.dst, err = need(env, f.key, envFile); err != nil {
			return nil, err
		}
	}
	if i.MaxLimit, err = strconv.Atoi(env["BRICK_TB_IRONIC_MAX_LIMIT"]); err != nil {
		return nil, fmt.Errorf("testbed: %s: BRICK_TB_IRONIC_MAX_LIMIT: %w", envFile, err)
	}
	i.Started = env["BRICK_TB_IRONIC_STARTED_BY"] == starterToken
	i.Keystone = env["BRICK_TB_IRONIC_AUTH"] == "keystone"
	if i.Keystone != opts.Keystone {
		return nil, fmt.Errorf("testbed: %s: BRICK_TB_IRONIC_AUTH is %q", envFile, env["BRICK_TB_IRONIC_AUTH"])
	}
	return i, nil
}

// Stop runs test/ironic/down.sh (a no-op when Ironic does not run).
func (i *Ironic) Stop(ctx context.Context) error {
	return StopIronic(ctx, i.opts)
}

// StopIronic runs test/ironic/down.sh for the state dir of opts.
func StopIronic(ctx context.Context, opts IronicOptions) error {
	opts = opts.normalized()
	_, err := runScript(ctx, "test/ironic/down.sh", map[string]string{"BRICK_TB_IRONIC_STATE": opts.StateDir})
	return err
}

// Request sends one API call: path is relative to Endpoint ("/v1/nodes"),
// microversion (e.g. "1.32") is sent as X-OpenStack-Ironic-API-Version when
// not empty, in is sent as JSON, a 2xx JSON answer is decoded into out. A
// non-2xx answer is an *HTTPError.
func (i *Ironic) Request(ctx context.Context, method, path, microversion string, in, out any) error {
	h := map[string]string{}
	if microversion != "" {
		h["X-OpenStack-Ironic-API-Version"] = microversion
	}
	if i.AuthToken != "" {
		h["X-Auth-Token"] = i.AuthToken
	}
	return doJSON(ctx, method, i.Endpoint+path, h, in, out)
}

// Node is the part of an Ironic node the tests look at.
type Node struct {
	UUID             string `json:"uuid"`
	Name             string `json:"name"`
	Driver           string `json:"driver"`
	PowerState       string `json:"power_state"`
	TargetPowerState string `json:"target_power_state"`
	ProvisionState   string `json:"provision_state"`
	LastError        string `json:"last_error"`
}

// CreateNode enrolls a fake-hardware node; name may be empty.
func (i *Ironic) CreateNode(ctx context.Context, name string) (*Node, error) {
	body := map[string]any{"driver": "fake-hardware"}
	if name != "" {
		body["name"] = name
	}
	var n Node
	// 1.32 is enough for names and fake-hardware, and is what the volume
	// API needs anyway.
	if err := i.Request(ctx, http.MethodPost, "/v1/nodes", IronicVolumeMicroversion, body, &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// GetNode returns the node (by UUID or name).
func (i *Ironic) GetNode(ctx context.Context, node string) (*Node, error) {
	var n Node
	if err := i.Request(ctx, http.MethodGet, "/v1/nodes/"+url.PathEscape(node), IronicVolumeMicroversion, nil, &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// SetPowerState asks for target ("power on", "power off", "rebooting") and
// waits until the node reports it. Volume connectors and targets can only
// be changed or deleted while the node is "power off"; a new node's power
// state is null.
func (i *Ironic) SetPowerState(ctx context.Context, node, target string) error {
	body := map[string]any{"target": target}
	if err := i.Request(ctx, http.MethodPut, "/v1/nodes/"+url.PathEscape(node)+"/states/power", IronicVolumeMicroversion, body, nil); err != nil {
		return err
	}
	want := target
	if target == "rebooting" {
		want = "power on"
	}
	return poll(ctx, 200*time.Millisecond, "node "+node+" to be "+want, func() (bool, string, error) {
		n, err := i.GetNode(ctx, node)
		if err != nil {
			return false, "", err
		}
		if n.PowerState == want && n.TargetPowerState == "" {
			return true, "", nil
		}
		if n.LastError != "" && n.TargetPowerState == "" {
			return false, "", fmt.Errorf("testbed: node %s power %q: %s", node, target, n.LastError)
		}
		return false, fmt.Sprintf("power_state %q target %q", n.PowerState, n.TargetPowerState), nil
	})
}

// DeleteNode deletes the node; an already missing node is success. Its
// volume connectors and targets go with it.
func (i *Ironic) DeleteNode(ctx context.Context, node string) error {
	err := i.Request(ctx, http.MethodDelete, "/v1/nodes/"+url.PathEscape(node), IronicVolumeMicroversion, nil, nil)
	if StatusOf(err) == http.StatusNotFound {
		return nil
	}
	return err
}
