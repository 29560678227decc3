package testbed

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults of CinderOptions; the same as test/cinder/up.sh's.
const (
	DefaultCinderStateDir = "/var/tmp/brick-testbed/cinder"
	DefaultCinderPort     = 8776
	DefaultTargetIP       = "127.0.0.1"
	DefaultTargetPort     = 3260
	// DefaultProjectID is hex because a stock Cinder routes only hex
	// project ids (the test bed's Cinder accepts names too).
	DefaultProjectID = "00000000000000000000000000000000"
	DefaultUserID    = "brick"
)

// Guest-side addresses of the host, for Cinder started for a qemu guest:
// the guest's first slirp NIC reaches the host's loopback at GuestHostIP,
// the second at GuestHostIP2 (tgtd listens on 127.0.0.1; slirp delivers
// there).
const (
	GuestHostIP  = "10.0.2.2"
	GuestHostIP2 = "10.0.3.2"
)

// CinderOptions are the settings of the test bed's Cinder. The zero value
// is the default Cinder: portal 127.0.0.1:3260, CHAP on, API on
// 127.0.0.1:8776.
type CinderOptions struct {
	// TargetIP is the portal address put in connection info (default
	// 127.0.0.1). For brick inside a qemu guest use GuestHostIP.
	TargetIP string
	// SecondaryIPs become iscsi_secondary_ip_addresses: more portals in the
	// connection info of a connector with "multipath": true.
	SecondaryIPs []string
	// NoCHAP makes targets accept logins without CHAP (and connection info
	// carry no auth_method). The default is CHAP with per-volume
	// credentials, as Cinder's tgt helper does.
	NoCHAP bool
	// StateDir holds config, database, logs, tgt target files and the
	// volumes' backing files (default $BRICK_TB_CINDER_STATE, else
	// /var/tmp/brick-testbed/cinder). Only one test bed Cinder can run on
	// a host at a time: tgtd's port and control socket are host-wide.
	StateDir string
	// Port is the API port on 127.0.0.1 (default $BRICK_TB_CINDER_PORT,
	// else 8776).
	Port int
	// ProjectID goes into Cinder.ProjectID and the noauth token (default
	// DefaultProjectID). Any id works with noauth; this only chooses the
	// one the helpers use.
	ProjectID string
	// Keep keeps volumes and the database across a restart (default: every
	// cold start begins empty).
	Keep bool
	// Debug turns on Cinder's debug logging.
	Debug bool
	// AcceptRunning takes the Cinder that already runs in StateDir as it
	// is (whatever its portals and CHAP setting), and starts one with the
	// other options only when none runs. For tests that do not depend on
	// the target settings (API smoke and contract tests), so that they
	// neither wait for nor restart a Cinder another test process uses.
	AcceptRunning bool
}

func (o CinderOptions) normalized() CinderOptions {
	if o.TargetIP == "" {
		o.TargetIP = DefaultTargetIP
	}
	if o.StateDir == "" {
		o.StateDir = envOr("BRICK_TB_CINDER_STATE", DefaultCinderStateDir)
	}
	if o.Port == 0 {
		o.Port = envIntOr("BRICK_TB_CINDER_PORT", DefaultCinderPort)
	}
	if o.ProjectID == "" {
		o.ProjectID = DefaultProjectID
	}
	o.SecondaryIPs = slices.Clone(o.SecondaryIPs)
	return o
}

func (o CinderOptions) equal(p CinderOptions) bool {
	a, b := o.normalized(), p.normalized()
	return a.TargetIP == b.TargetIP && slices.Equal(a.SecondaryIPs, b.SecondaryIPs) &&
		a.NoCHAP == b.NoCHAP && a.StateDir == b.StateDir && a.Port == b.Port &&
		a.ProjectID == b.ProjectID && a.Keep == b.Keep && a.Debug == b.Debug &&
		a.AcceptRunning == b.AcceptRunning
}

// env is what up.sh/down.sh get: every setting, explicitly, so that a
// variable left in the caller's shell cannot change what a test asked for.
func (o CinderOptions) env() map[string]string {
	o = o.normalized()
	return map[string]string{
		"BRICK_TB_TARGET_IP":     o.TargetIP,
		"BRICK_TB_SECONDARY_IPS": strings.Join(o.SecondaryIPs, ","),
		"BRICK_TB_CHAP":          boolEnv(!o.NoCHAP),
		"BRICK_TB_CINDER_STATE":  o.StateDir,
		"BRICK_TB_CINDER_PORT":   strconv.Itoa(o.Port),
		"BRICK_TB_PROJECT_ID":    o.ProjectID,
		"BRICK_TB_CINDER_KEEP":   boolEnv(o.Keep),
		"BRICK_TB_DEBUG":         boolEnv(o.Debug),
	}
}

// Cinder is a running test bed Cinder.
type Cinder struct {
	// Endpoint is the volume v3 endpoint without the project:
	// http://127.0.0.1:8776/v3 (BRICK_CINDER_ENDPOINT).
	Endpoint string
	// KeystoneEndpoint is the same Cinder behind keystonemiddleware,
	// checking tokens of the test bed Keystone: http://127.0.0.1:8786/v3
	// (the Keystone catalog's RegionOne block-storage endpoint).
	KeystoneEndpoint string
	// ProjectID and UserID make the noauth token "<user>:<project>"
	// (Token); the project in the token must match the one in the URL.
	ProjectID string
	UserID    string
	Token     string
	// MaxMicroversion is the highest volume API microversion (3.70).
	MaxMicroversion string
	// StateDir, VolumesDir (backing files volume-<id>), TgtDir (tgt target
	// files) and LogFile are paths on the host.
	StateDir   string
	VolumesDir string
	TgtDir     string
	LogFile    string
	// The target settings it runs with.
	TargetIP     string
	SecondaryIPs []string
	TargetPort   int
	CHAP         bool
	// Started tells whether the StartCinder call that returned this value
	// started the service (false: it was already running, unchanged).
	Started bool
	// Env is the whole env file.
	Env map[string]string

	opts    CinderOptions
	volumes *volumeLog // what CreateVolume made, for Leftovers
}

// StartCinder runs test/cinder/up.sh with opts: it starts Cinder and tgtd,
// or restarts them when they run with other settings, or does nothing when
// they already run as asked. It returns when a volume can be created.
func StartCinder(ctx context.Context, opts CinderOptions) (*Cinder, error) {
	opts = opts.normalized()
	envFile := filepath.Join(opts.StateDir, "env")
	if opts.AcceptRunning {
		opts = runningCinderOptions(envFile, opts)
	}
	env, err := startService(ctx, "test/cinder/up.sh", opts.StateDir, opts.env())
	if err != nil {
		return nil, err
	}
	c := &Cinder{Env: env, opts: opts, volumes: &volumeLog{}}
	for _, f := range []struct {
		dst *string
		key string
	}{
		{&c.Endpoint, "BRICK_CINDER_ENDPOINT"},
		{&c.ProjectID, "OS_PROJECT_ID"},
		{&c.UserID, "OS_USER_ID"},
		{&c.Token, "BRICK_TB_CINDER_TOKEN"},
		{&c.MaxMicroversion, "BRICK_TB_CINDER_MAX_MICROVERSION"},
		{&c.StateDir, "BRICK_TB_CINDER_STATE"},
		{&c.VolumesDir, "BRICK_TB_CINDER_VOLUMES_DIR"},
		{&c.TgtDir, "BRICK_TB_CINDER_TGT_DIR"},
		{&c.LogFile, "BRICK_TB_CINDER_LOG"},
		{&c.TargetIP, "BRICK_TB_TARGET_IP"},
	} {
		if *f.dst, err = need(env, f.key, envFile); err != nil {
			return nil, err
		}
	}
	if s := env["BRICK_TB_SECONDARY_IPS"]; s != "" {
		c.SecondaryIPs = strings.Split(s, ",")
	}
	if c.TargetPort, err = strconv.Atoi(env["BRICK_TB_TARGET_PORT"]); err != nil {
		return nil, fmt.Errorf("testbed: %s: BRICK_TB_TARGET_PORT: %w", envFile, err)
	}
	c.CHAP = env["BRICK_TB_CHAP"] == "1"
	c.Started = env["BRICK_TB_CINDER_STARTED_BY"] == starterToken
	c.KeystoneEndpoint = env["BRICK_TB_CINDER_KEYSTONE_ENDPOINT"]
	return c, nil
}

// InProject returns a view of c whose helpers (CreateVolume, Request, ...)
// act in projectID through the noauth API, e.g. on volumes of a Keystone
// project that brick then reaches through KeystoneEndpoint.
func (c *Cinder) InProject(projectID string) *Cinder {
	v := *c
	v.ProjectID = projectID
	v.Token = c.UserID + ":" + projectID
	return &v
}

// Stop runs test/cinder/down.sh: it stops Cinder and the tgtd that up.sh
// started (a no-op when they do not run).
func (c *Cinder) Stop(ctx context.Context) error {
	return StopCinder(ctx, c.opts)
}

// StopCinder runs test/cinder/down.sh for the state dir of opts.
func StopCinder(ctx context.Context, opts CinderOptions) error {
	opts = opts.normalized()
	_, err := runScript(ctx, "test/cinder/down.sh", map[string]string{"BRICK_TB_CINDER_STATE": opts.StateDir})
	return err
}

// ProjectURL is the endpoint with the project: http://127.0.0.1:8776/v3/<project>.
func (c *Cinder) ProjectURL() string {
	return c.Endpoint + "/" + c.ProjectID
}

// BackingFile is the host path of the sparse file that holds the volume.
func (c *Cinder) BackingFile(volumeID string) string {
	return filepath.Join(c.VolumesDir, "volume-"+volumeID)
}

// TargetIQN is the IQN Cinder's tgt helper gives the volume's target.
func (c *Cinder) TargetIQN(volumeID string) string {
	return "iqn.2010-10.org.openstack:volume-" + volumeID
}

// Request sends one API call: path is relative to ProjectURL ("/volumes"),
// microversion (e.g. "3.44") is sent as "OpenStack-API-Version: volume X"
// when not empty, in is sent as JSON, a 2xx JSON answer is decoded into
// out. A non-2xx answer is an *HTTPError.
func (c *Cinder) Request(ctx context.Context, method, path, microversion string, in, out any) error {
	h := map[string]string{"X-Auth-Token": c.Token}
	if microversion != "" {
		h["OpenStack-API-Version"] = "volume " + microversion
	}
	return doJSON(ctx, method, c.ProjectURL()+path, h, in, out)
}

// Volume is the part of a Cinder volume the tests look at.
type Volume struct {
	ID              string             `json:"id"`
	Name            string             `json:"name"`
	Status          string             `json:"status"`
	Size            int                `json:"size"`
	Host            string             `json:"os-vol-host-attr:host"`
	MigrationStatus string             `json:"migration_status"`
	AttachStatus    string             `json:"attach_status"`
	Attachments     []VolumeAttachment `json:"attachments"`
	Multiattach     bool               `json:"multiattach"`
	VolumeType      string             `json:"volume_type"`
}

// VolumeAttachment is one entry of Volume.Attachments.
type VolumeAttachment struct {
	AttachmentID string `json:"attachment_id"`
	HostName     string `json:"host_name"`
	Device       string `json:"device"`
	ServerID     string `json:"server_id"`
}

// GetVolume returns the volume; a missing one is an *HTTPError with 404.
func (c *Cinder) GetVolume(ctx context.Context, id string) (*Volume, error) {
	var r struct {
		Volume Volume `json:"volume"`
	}
	if err := c.Request(ctx, http.MethodGet, "/volumes/"+url.PathEscape(id), "", nil, &r); err != nil {
		return nil, err
	}
	return &r.Volume, nil
}

// CreateVolume creates a volume of sizeGB and waits until it is available.
// A volume that ends in "error" is deleted and reported.
func (c *Cinder) CreateVolume(ctx context.Context, name string, sizeGB int) (*Volume, error) {
	body := map[string]any{"volume": map[string]any{"name": name, "size": sizeGB}}
	var r struct {
		Volume Volume `json:"volume"`
	}
	if err := c.Request(ctx, http.MethodPost, "/volumes", "", body, &r); err != nil {
		return nil, err
	}
	c.volumes.add(r.Volume.ID)
	v, err := c.WaitVolume(ctx, r.Volume.ID, "available")
	if err != nil {
		// Best effort: do not leave an errored volume behind.
		_ = c.Request(context.WithoutCancel(ctx), http.MethodDelete, "/volumes/"+r.Volume.ID, "", nil, nil)
		return nil, err
	}
	return v, nil
}

// WaitVolume polls until the volume's status is one of want. Reaching an
// "error*" status not in want fails at once.
func (c *Cinder) WaitVolume(ctx context.Context, id string, want ...string) (*Volume, error) {
	var v *Volume
	err := poll(ctx, 250*time.Millisecond, "volume "+id+" to be "+strings.Join(want, "|"), func() (bool, string, error) {
		var err error
		v, err = c.GetVolume(ctx, id)
		if err != nil {
			return false, "", err
		}
		if slices.Contains(want, v.Status) {
			return true, "", nil
		}
		if strings.HasPrefix(v.Status, "error") {
			return false, "", fmt.Errorf("testbed: volume %s is %q (waiting for %s); see %s", id, v.Status, strings.Join(want, "|"), c.LogFile)
		}
		return false, "status " + v.Status, nil
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// DeleteVolume deletes the volume and waits until Cinder no longer knows it
// (the backing file is gone by then). An already missing volume is success.
func (c *Cinder) DeleteVolume(ctx context.Context, id string) error {
	err := c.Request(ctx, http.MethodDelete, "/volumes/"+url.PathEscape(id), "", nil, nil)
	if StatusOf(err) == http.StatusNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	return poll(ctx, 250*time.Millisecond, "volume "+id+" to be deleted", func() (bool, string, error) {
		v, err := c.GetVolume(ctx, id)
		if StatusOf(err) == http.StatusNotFound {
			return true, "", nil
		}
		if err != nil {
			return false, "", err
		}
		if v.Status == "error_deleting" {
			return false, "", fmt.Errorf("testbed: volume %s is error_deleting; see %s", id, c.LogFile)
		}
		return false, "status " + v.Status, nil
	})
}

// runningCinderOptions returns opts with the target settings of the Cinder
// whose env file is envFile, when that Cinder still runs; else opts.
func runningCinderOptions(envFile string, opts CinderOptions) CinderOptions {
	env, err := ParseEnvFile(envFile)
	if err != nil || env["BRICK_TB_CINDER_PID"] == "" {
		return opts
	}
	if _, err := os.Stat(filepath.Join("/proc", env["BRICK_TB_CINDER_PID"])); err != nil {
		return opts
	}
	opts.TargetIP = env["BRICK_TB_TARGET_IP"]
	opts.SecondaryIPs = nil
	if s := env["BRICK_TB_SECONDARY_IPS"]; s != "" {
		opts.SecondaryIPs = strings.Split(s, ",")
	}
	opts.NoCHAP = env["BRICK_TB_CHAP"] != "1"
	opts.Debug = env["BRICK_TB_DEBUG"] == "true"
	if p := env["OS_PROJECT_ID"]; p != "" {
		opts.ProjectID = p
	}
	return opts
}
