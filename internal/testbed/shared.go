package testbed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
)

// One Cinder and one Ironic per process, shared by every test that needs
// one. A test asking for other settings restarts the service with them;
// tests that need a particular configuration must therefore not run in
// parallel with tests that need another (t.Parallel is not used in e2e).
var shared struct {
	mu sync.Mutex

	cinder        *Cinder
	cinderOpts    CinderOptions
	cinderStarted bool // this process cold-started (or restarted) Cinder
	cinderUser    *userLock

	ironic        *Ironic
	ironicOpts    IronicOptions
	ironicStarted bool
	ironicUser    *userLock

	// The keystone-mode Ironic runs beside the noauth one.
	ksIronic        *Ironic
	ksIronicOpts    IronicOptions
	ksIronicStarted bool
	ksIronicUser    *userLock

	keystone        *Keystone
	keystoneOpts    KeystoneOptions
	keystoneStarted bool
}

// EnsureCinder returns the process's shared Cinder, running with opts. The
// first call runs test/cinder/up.sh (a fast no-op when a Cinder with the
// same settings already runs, e.g. from an earlier test run); later calls
// with the same options return the same value; a call with other options
// restarts Cinder with them.
func EnsureCinder(ctx context.Context, opts CinderOptions) (*Cinder, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.cinder != nil && (opts.AcceptRunning || shared.cinderOpts.equal(opts)) {
		return shared.cinder, nil
	}
	// A restart with other settings waits in up.sh until no process holds
	// a users.lock; this one must not wait for itself.
	if shared.cinderUser != nil {
		shared.cinderUser.f.Close()
		shared.cinderUser = nil
	}
	c, err := StartCinder(ctx, opts)
	if err != nil {
		// up.sh stops what it started when it fails; a failed restart may
		// still have stopped the old one.
		shared.cinder = nil
		return nil, err
	}
	shared.cinder, shared.cinderOpts = c, opts
	shared.cinderStarted = shared.cinderStarted || c.Started
	if shared.cinderUser == nil {
		if shared.cinderUser, err = lockShared(c.StateDir); err != nil {
			return nil, fmt.Errorf("testbed: cinder users lock: %w", err)
		}
	}
	return c, nil
}

// EnsureIronic is EnsureCinder for Ironic. The noauth and the keystone
// Ironic (opts.Keystone) are shared apart: asking for one leaves the
// other running.
func EnsureIronic(ctx context.Context, opts IronicOptions) (*Ironic, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	ir, o, started, user := &shared.ironic, &shared.ironicOpts, &shared.ironicStarted, &shared.ironicUser
	if opts.Keystone {
		ir, o, started, user = &shared.ksIronic, &shared.ksIronicOpts, &shared.ksIronicStarted, &shared.ksIronicUser
	}
	if *ir != nil && o.normalized() == opts.normalized() {
		return *ir, nil
	}
	if *user != nil {
		(*user).f.Close()
		*user = nil
	}
	i, err := StartIronic(ctx, opts)
	if err != nil {
		*ir = nil
		return nil, err
	}
	*ir, *o = i, opts
	*started = *started || i.Started
	if *user, err = lockShared(i.StateDir); err != nil {
		return nil, fmt.Errorf("testbed: ironic users lock: %w", err)
	}
	return i, nil
}

// EnsureKeystone is EnsureCinder for Keystone: one start per test process
// however many tests use it (a restart only for other options, e.g. a
// token lifetime). StopStarted stops it; callers do not call Done.
func EnsureKeystone(ctx context.Context, opts KeystoneOptions) (*Keystone, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.keystone != nil && shared.keystoneOpts.normalized() == opts.normalized() {
		return shared.keystone, nil
	}
	if k := shared.keystone; k != nil && k.user != nil {
		k.user.f.Close()
		k.user = nil
	}
	k, err := StartKeystone(ctx, opts)
	if err != nil {
		shared.keystone = nil
		return nil, err
	}
	shared.keystone, shared.keystoneOpts = k, opts
	shared.keystoneStarted = shared.keystoneStarted || k.Started
	return k, nil
}

// StopStarted stops the shared services this process started and leaves
// running those that were already up when it first asked for them, and
// those another test process on the host still uses. With
// BRICK_TB_KEEP_UP=1 it stops nothing. TestMain calls it after the tests.
func StopStarted(ctx context.Context) error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	keep := os.Getenv(EnvKeepUp) == "1"
	var errs []error
	stop := func(name string, started bool, user *userLock, stopFn func(context.Context) error) {
		if user == nil {
			return
		}
		sole, done := user.releaseAndCheckSole()
		defer done()
		switch {
		case !started || keep:
		case !sole:
			fmt.Fprintf(os.Stderr, "testbed: leaving %s running: another test process still uses it\n", name)
		default:
			errs = append(errs, stopFn(ctx))
		}
	}
	if shared.cinder != nil || shared.cinderUser != nil {
		stop("Cinder", shared.cinderStarted, shared.cinderUser, func(ctx context.Context) error {
			return StopCinder(ctx, shared.cinderOpts)
		})
	}
	if shared.ironic != nil || shared.ironicUser != nil {
		stop("Ironic", shared.ironicStarted, shared.ironicUser, func(ctx context.Context) error {
			return StopIronic(ctx, shared.ironicOpts)
		})
	}
	if shared.ksIronic != nil || shared.ksIronicUser != nil {
		stop("the keystone Ironic", shared.ksIronicStarted, shared.ksIronicUser, func(ctx context.Context) error {
			return StopIronic(ctx, shared.ksIronicOpts)
		})
	}
	if k := shared.keystone; k != nil && k.user != nil {
		stop("Keystone", shared.keystoneStarted, k.user, func(ctx context.Context) error {
			return StopKeystone(ctx, shared.keystoneOpts)
		})
		k.user = nil
	}
	shared.cinder, shared.ironic, shared.ksIronic, shared.keystone = nil, nil, nil, nil
	shared.cinderUser, shared.ironicUser, shared.ksIronicUser = nil, nil, nil
	shared.cinderStarted, shared.ironicStarted, shared.ksIronicStarted, shared.keystoneStarted = false, false, false, false
	return errors.Join(errs...)
}
