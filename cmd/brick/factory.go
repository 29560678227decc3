package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/ironicattach"
	"github.com/brick-storage/brick/osauth"
	"github.com/brick-storage/brick/progress"
)

// factory is what the command packages (internal/cmd/...) get from this
// invocation: each function reads the app when the command runs.
func (a *app) factory() *factory.Factory {
	return &factory.Factory{
		Stdout:               a.stdout,
		ErrWriter:            a.errWriter,
		Redactor:             a.redactor,
		Logger:               func() *slog.Logger { return a.logger },
		Output:               func() output.Options { return a.out },
		Cinder:               a.cinderClient,
		Ironic:               a.ironicClient,
		AddOutputFlags:       a.addOutputFlags,
		AddRecordOutputFlags: a.addRecordOutputFlags,
		AddHiddenOutputFlags: a.addHiddenOutputFlags,
		AddAuthFlags:         a.addAuthFlags,
		FormatGiven:          a.formatGiven,
		Host:                 func() *host.Host { return a.host },
		NeedRoot:             a.needRoot,
		Track:                a.track,
		TestHooks:            a.testHooks,
		Status:               func() *progress.Status { return a.status },
		Crypt:                a.cryptAccess,
		IronicTargets:        a.ironicClientIfConfigured,
		Version:              func() string { return readBuildInfo().Version },
	}
}

// ironicClient builds the Ironic client from the auth flags.
func (a *app) ironicClient(ctx context.Context) (*gophercloud.ServiceClient, error) {
	defer a.authenticating("ironic")()
	sc, err := a.cloud().Baremetal(ctx)
	if err != nil {
		if errors.Is(err, osauth.ErrConfig) {
			return nil, usageError{Err: err}
		}
		return nil, err
	}
	return sc, nil
}

// needRoot refuses, when not root, every command that changes the kernel's
// state, reads brick's records or takes its locks: all of them are root's.
// With --host-root pointing elsewhere (a fixture tree) the check is skipped.
func (a *app) needRoot(what string) error {
	if a.euid != 0 && a.hostRoot == "/" {
		return fmt.Errorf("%s needs root: brick's records, locks and the devices it attaches are root's (run it with sudo)", what)
	}
	return nil
}

// cinderClient builds the Cinder client: auth, then microversion negotiation.
func (a *app) cinderClient(ctx context.Context) (*cinderapi.Client, error) {
	defer a.authenticating("cinder")()
	c, err := cinderapi.Connect(ctx, a.cloud())
	if errors.Is(err, osauth.ErrConfig) {
		return nil, usageError{Err: err}
	}
	return c, err
}

// ironicClientIfConfigured returns a target registry when an Ironic
// endpoint or cloud is configured, so detach can remove targets that
// local-attach --ironic-node created; nil otherwise.
func (a *app) ironicClientIfConfigured(ctx context.Context) (attach.TargetRegistry, error) {
	if a.auth.ironicEndpoint == "" && a.auth.cloud == "" {
		return nil, nil
	}
	sc, err := a.ironicClient(ctx)
	if err != nil {
		return nil, err
	}
	return ironicattach.TargetRegistry{Client: sc}, nil
}
