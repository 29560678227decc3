package main

import (
	"context"
	"log/slog"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/internal/completion"
	"github.com/brick-storage/brick/internal/settings"
	"github.com/brick-storage/brick/internal/view"
)

// completionSources are where completion finds the host and the clouds.
func (a *app) completionSources() completion.Sources {
	return completion.Sources{
		Setup: a.completionSetup,
		Cinder: func(ctx context.Context) (*gophercloud.ServiceClient, error) {
			c, err := a.cinderClient(ctx)
			if err != nil {
				return nil, err
			}
			return c.SC, nil
		},
		Ironic:  a.ironicClient,
		Columns: commandColumns,
	}
}

// commandColumns are the -c and --sort-column names of the commands whose
// columns are fixed (nil for the others).
func commandColumns(name string) []string {
	switch name {
	case "list":
		return view.ListColumns
	case "get-connector":
		return view.PropertyKeys()
	}
	return nil
}

// completionSetup applies config and environment and builds the host, as
// setup does, but quietly and without judging the command line (a
// completion is asked for half-typed commands). setup itself ran for
// cobra's __complete command, without the completed command's flags.
func (a *app) completionSetup(cmd *cobra.Command) *host.Host {
	a.logger = slog.New(slog.DiscardHandler)
	cfg, err := a.loadSettings(cmd)
	if err != nil { // the environment still applies
		cfg, _ = settings.Parse(a.configFile, nil)
	}
	_ = a.applySettings(cmd, cfg)
	a.host = host.New(a.hostRoot, a.logger, a.redactor)
	return a.host
}
