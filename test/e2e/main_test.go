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
	sharedGuest.mu.Lock()
	sharedGuest.close(func(format string, args ...any) { fmt.Fprintf(os.Stderr, "e2e: "+format+"\n", args...) })
	sharedGuest.mu.Unlock()
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
	mu      sync.Mutex
	s       *guest.Session
	share   string
	pending *pendingBoot // a boot prestart began, not yet adopted
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
		if p.pending == nil {
			p.pending = bootShared()
		}
		if err := p.adopt(t.Logf); err != nil {
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

// bootTimeout bounds a shared guest's boot (a loaded 2-core host has taken
// 40 s).
const bootTimeout = 5 * time.Minute

// pendingBoot is a shared guest booting in the background.
type pendingBoot struct {
	done  chan struct{} // closed when the fields below are set
	s     *guest.Session
	share string
	took  time.Duration
	err   error
}

// prestart boots the shared guest in the background, so the boot overlaps
// the calling test's host-side set-up (Cinder volumes, builds); exec waits
// for it. A no-op when the guest is up or booting, or sharing is off.
func (p *guestPool) prestart() {
	if !sharedGuestOn() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.s == nil && p.pending == nil {
		p.pending = bootShared()
	}
}

// adopt waits for the pending boot (if any) and makes it the session.
func (p *guestPool) adopt(logf func(format string, args ...any)) error {
	if p.pending == nil {
		return nil
	}
	wait := time.Now()
	<-p.pending.done
	b := p.pending
	p.pending = nil
	if b.err != nil {
		return b.err
	}
	p.s, p.share = b.s, b.share
	logf("shared guest: ready in %s (guest %s), waited %s for it", b.took.Round(time.Millisecond),
		b.s.Boot().Round(time.Millisecond), time.Since(wait).Round(time.Millisecond))
	return nil
}

// bootShared starts a session's boot; its share sits beside the tests'
// kept shares (BRICK_E2E_KEEP_SHARES) or in the temporary directory, so
// moveShare renames within one file system.
func bootShared() *pendingBoot {
	b := &pendingBoot{done: make(chan struct{})}
	go func() {
		defer close(b.done)
		parent := os.Getenv("BRICK_E2E_KEEP_SHARES")
		if parent != "" {
			if err := os.MkdirAll(parent, 0o755); err != nil {
				b.err = fmt.Errorf("shared guest: %w", err)
				return
			}
		}
		share, err := os.MkdirTemp(parent, "shared-guest-")
		if err != nil {
			b.err = fmt.Errorf("shared guest: %w", err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), bootTimeout)
		defer cancel()
		start := time.Now()
		s, err := guest.Start(ctx, guest.Options{NICs: 2, ShareDir: share})
		if err != nil {
			os.RemoveAll(share)
			b.err = fmt.Errorf("shared guest: %w", err)
			return
		}
		b.s, b.share, b.took = s, share, time.Since(start)
	}()
	return b
}

// close powers the session off (errors are the log's: the tests' results
// are in) and removes its share unless shares are kept.
func (p *guestPool) close(logf func(format string, args ...any)) {
	if err := p.adopt(logf); err != nil {
		logf("%v", err)
	}
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

// span is b[from:to], or the test fails naming what was read and how
// short it was (files and offsets from a guest are not trusted to fit).
func span(t *testing.T, b []byte, from, to int, what string) []byte {
	t.Helper()
	if from < 0 || to < from || to > len(b) {
		t.Fatalf("%s: bytes %d to %d wanted, %d there", what, from, to, len(b))
	}
	return b[from:to]
}
