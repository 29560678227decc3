//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brick-storage/brick/internal/testbed"
	"github.com/brick-storage/brick/internal/testbed/guest"
)

// TestMain runs the e2e tests, powers off the shared guest, then stops the
// real services (Cinder + tgtd, Ironic) that this run started. Tests start them lazily through
// testbed.EnsureCinder / testbed.EnsureIronic, so a run that needs none pays
// nothing, and services that were already up before the run (a developer's
// test/cinder/up.sh, or BRICK_TB_KEEP_UP=1 on an earlier run) stay up.
func TestMain(m *testing.M) {
	code := m.Run()
	sharedGuest.close(func(format string, args ...any) { fmt.Fprintf(os.Stderr, "e2e: "+format+"\n", args...) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := testbed.StopStarted(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: stopping test bed services: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// serviceStartTimeout bounds a service's start (a cold Cinder takes ~10 s
// on an idle 2-core host, ~40 s on a busy one).
const serviceStartTimeout = 4 * time.Minute

// needCinder returns the shared test bed Cinder with opts, starting it if
// needed; the test fails at once when it cannot start.
func needCinder(t *testing.T, opts testbed.CinderOptions) *testbed.Cinder {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), serviceStartTimeout)
	defer cancel()
	start := time.Now()
	c, err := testbed.EnsureCinder(ctx, opts)
	if err != nil {
		t.Fatalf("starting the test bed Cinder: %v", err)
	}
	t.Logf("Cinder %s (project %s, portals %s%v, CHAP %v): ready in %s (started by this run: %v)",
		c.Endpoint, c.ProjectID, c.TargetIP, c.SecondaryIPs, c.CHAP, time.Since(start).Round(time.Millisecond), c.Started)
	isolated(t, c)
	return c
}

// isolated makes the test fail when, after all its own cleanups (this
// cleanup is registered first, so it runs last), a volume it created is
// still attached or half-detached, or tgtd still has a session to it: the
// next test shares Cinder and tgtd and must start from nothing.
func isolated(t *testing.T, c *testbed.Cinder) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		left, err := c.Leftovers(ctx)
		if err != nil {
			t.Errorf("isolation check: %v", err)
		}
		for _, l := range left {
			t.Errorf("isolation: %s leaves for the next test: %s", t.Name(), l)
		}
	})
}

// needIronic is needCinder for Ironic.
func needIronic(t *testing.T, opts testbed.IronicOptions) *testbed.Ironic {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), serviceStartTimeout)
	defer cancel()
	start := time.Now()
	i, err := testbed.EnsureIronic(ctx, opts)
	if err != nil {
		t.Fatalf("starting the test bed Ironic: %v", err)
	}
	t.Logf("Ironic %s (max_limit %d, max microversion %s): ready in %s (started by this run: %v)",
		i.Endpoint, i.MaxLimit, i.MaxMicroversion, time.Since(start).Round(time.Millisecond), i.Started)
	return i
}

// sharedGuest is the guest session the tests calling runSharedGuest run
// their scripts in, instead of a boot each; BRICK_E2E_SHARED_GUEST=0 gives each its own boot
// again. Between two of them the session asserts a clean guest: no kernel
// state (guest.ErrLeftovers) and none of the files below (sharedStateCheck).
var sharedGuest = &guestPool{}

// guestPool holds the suite's one shared session with 2 NICs, booted by its
// first user and powered off by TestMain; a session a test left dirty or
// broken is closed, and the next user boots a fresh one.
type guestPool struct {
	mu    sync.Mutex
	s     *guest.Session
	share string
}

// sharedGuestOn: the switch of docs/testing.md.
func sharedGuestOn() bool { return os.Getenv("BRICK_E2E_SHARED_GUEST") != "0" }

// sharedStateCheck ends every shared script: it lists what a test left in
// the guest's files that a fresh boot would not have (brick's records,
// iSCSI node and discovery records, active multipath WWIDs, the tests' own
// wrappers), one "SHAREDSTATE <what>" line each, with builtins only.
const sharedStateCheck = `
rc=$?
for f in /var/lib/brick/volumes/*.json /etc/iscsi/nodes/* /etc/iscsi/send_targets/* /usr/local/sbin/iscsiadm /etc/modprobe.d/brick-*; do
	[[ -e $f ]] && echo "SHAREDSTATE file $f"
done
if [[ -r /etc/multipath/wwids ]]; then
	while read -r l; do [[ $l == /* ]] && echo "SHAREDSTATE wwid $l"; done </etc/multipath/wwids
fi
exit $rc
`

// exec runs e in the shared session (booting it first if needed) with
// onShare watching the session's share, then moves what the script left
// in the share into dir, the test's own share. A test whose script failed
// to run or left state behind fails, and the session is closed.
func (p *guestPool) exec(t *testing.T, ctx context.Context, e guest.Exec, dir string, onShare func(ctx context.Context, share string)) (*guest.Result, error) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.s == nil {
		if err := p.start(t, ctx); err != nil {
			return nil, err
		}
	}
	// The script runs in a subshell, so its own exit still reaches the check.
	e.Script = "(\n" + e.Script + "\n)" + sharedStateCheck
	stop := watchShare(ctx, p.share, onShare)
	res, err := p.s.Exec(ctx, e)
	stop()
	if mvErr := moveShare(p.share, dir); mvErr != nil {
		t.Logf("shared guest: keeping the outputs: %v", mvErr)
	}
	var dirty []string
	if res != nil {
		dirty = append(dirty, res.Leftovers...)
		for _, l := range strings.Split(string(res.Output), "\n") {
			if s, ok := strings.CutPrefix(l, "SHAREDSTATE "); ok {
				dirty = append(dirty, s)
			}
		}
		t.Logf("shared guest: exec wall %s, script %s, exit %d", res.Duration.Round(time.Millisecond), res.ScriptTime.Round(time.Millisecond), res.ExitCode)
	}
	if err != nil || len(dirty) > 0 {
		for _, d := range dirty {
			t.Errorf("shared guest: %s leaves for the next test: %s", t.Name(), d)
		}
		p.close(t.Logf)
	}
	return res, err
}

// start boots the session; its share sits beside the tests' kept shares
// (BRICK_E2E_KEEP_SHARES) or in the temporary directory, so moveShare
// renames within one file system.
func (p *guestPool) start(t *testing.T, ctx context.Context) error {
	t.Helper()
	parent := os.Getenv("BRICK_E2E_KEEP_SHARES")
	if parent != "" {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return fmt.Errorf("shared guest: %w", err)
		}
	}
	share, err := os.MkdirTemp(parent, "shared-guest-")
	if err != nil {
		return fmt.Errorf("shared guest: %w", err)
	}
	start := time.Now()
	s, err := guest.Start(ctx, guest.Options{NICs: 2, ShareDir: share})
	if err != nil {
		os.RemoveAll(share)
		return fmt.Errorf("shared guest: %w", err)
	}
	p.s, p.share = s, share
	t.Logf("shared guest: booted for %s, ready in %s (guest %s)", t.Name(), time.Since(start).Round(time.Millisecond), s.Boot().Round(time.Millisecond))
	return nil
}

// close powers the session off (errors are the log's: the tests' results
// are in) and removes its share unless shares are kept.
func (p *guestPool) close(logf func(format string, args ...any)) {
	if p.s == nil {
		return
	}
	if err := p.s.Close(); err != nil {
		logf("shared guest: %v", err)
	}
	if os.Getenv("BRICK_E2E_KEEP_SHARES") == "" {
		os.RemoveAll(p.share)
	}
	p.s, p.share = nil, ""
}

// moveShare moves every entry of share but the runner's .brick into dir.
func moveShare(share, dir string) error {
	entries, err := os.ReadDir(share)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.Name() == ".brick" {
			continue
		}
		from := filepath.Join(share, e.Name())
		if err := os.Rename(from, filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, err, os.RemoveAll(from))
		}
	}
	return errors.Join(errs...)
}
