package testbed

import (
	"context"
	"fmt"
	"path/filepath"
)

// NVMe export formats of the test bed Cinder (brick_tb_driver.GuestNVMeT).
const (
	NVMeOld = "old" // nqn, target_portal, target_port, ns_id: what Cinder Zed sends
	NVMeNew = "new" // target_nqn, vol_uuid, portals, ns_id
)

// NVMeShareDir is the guest share NVMe tests use: Cinder writes export
// records to its exports/ directory and the guest's nvmet fixture
// (test/guest/fixtures/nvmet.sh serve /brick/exports) applies them.
const NVMeShareDir = "/var/tmp/brick-testbed/nvmet-share"

// EnsureCinderNVMe (re)starts the test bed Cinder exporting over NVMe/TCP
// with connection info in format, portals opts.TargetIP and
// opts.SecondaryIPs on port. The next EnsureCinder call (any other test)
// restarts it with its own settings.
func EnsureCinderNVMe(ctx context.Context, opts CinderOptions, format string, port int) (*Cinder, error) {
	return EnsureCinderNVMeExports(ctx, opts, format, port, filepath.Join(NVMeShareDir, "exports"))
}

// EnsureCinderNVMeExports is EnsureCinderNVMe with Cinder's export records
// going to exports (a directory of the caller's guest share) instead of
// NVMeShareDir's.
func EnsureCinderNVMeExports(ctx context.Context, opts CinderOptions, format string, port int, exports string) (*Cinder, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.cinderUser != nil {
		shared.cinderUser.f.Close()
		shared.cinderUser = nil
	}
	shared.cinder = nil
	opts = opts.normalized()
	env := opts.env()
	env["BRICK_TB_NVMEOF"] = format
	env["BRICK_TB_NVMET_DIR"] = exports
	env["BRICK_TB_TARGET_PORT"] = fmt.Sprint(port)
	out, err := startService(ctx, "test/cinder/up.sh", opts.StateDir, env)
	if err != nil {
		return nil, err
	}
	if out["BRICK_TB_NVMEOF"] != format {
		return nil, fmt.Errorf("testbed: cinder runs with BRICK_TB_NVMEOF=%q, not %q", out["BRICK_TB_NVMEOF"], format)
	}
	c := &Cinder{
		Endpoint: out["BRICK_CINDER_ENDPOINT"], ProjectID: out["OS_PROJECT_ID"], UserID: out["OS_USER_ID"],
		Token: out["BRICK_TB_CINDER_TOKEN"], MaxMicroversion: out["BRICK_TB_CINDER_MAX_MICROVERSION"],
		StateDir: opts.StateDir, VolumesDir: out["BRICK_TB_CINDER_VOLUMES_DIR"], LogFile: out["BRICK_TB_CINDER_LOG"],
		TargetIP: opts.TargetIP, SecondaryIPs: opts.SecondaryIPs, TargetPort: port,
		Started: out["BRICK_TB_CINDER_STARTED_BY"] == starterToken, Env: out, opts: opts,
	}
	// Held and stopped like EnsureCinder's: another process's restart waits
	// for it, and StopStarted stops it when this process started it (a
	// Cinder left running keeps the caller's inherited guest flock held).
	shared.cinderOpts = opts
	shared.cinderStarted = shared.cinderStarted || c.Started
	if shared.cinderUser, err = lockShared(c.StateDir); err != nil {
		return nil, fmt.Errorf("testbed: cinder users lock: %w", err)
	}
	return c, nil
}
