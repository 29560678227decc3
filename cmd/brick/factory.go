package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/output"
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
