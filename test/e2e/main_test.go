//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/brick-storage/brick/internal/testbed"
)

// TestMain runs the e2e tests, then stops the real services (Cinder + tgtd,
// Ironic) that this run started. Tests start them lazily through
// testbed.EnsureCinder / testbed.EnsureIronic, so a run that needs none pays
// nothing, and services that were already up before the run (a developer's
// test/cinder/up.sh, or BRICK_TB_KEEP_UP=1 on an earlier run) stay up.
func TestMain(m *testing.M) {
	code := m.Run()
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
