package main

import (
	"github.com/brick-storage/brick/connector"
)

// connectorOptions are the flags every protocol shares.
type connectorOptions struct {
	Multipath        bool
	EnforceMultipath bool
}

// newRegistry builds the connectors this host can use, configured from
// flags and config. Each protocol registers itself here, one line each.
func (a *app) newRegistry(opts connectorOptions) *connector.Registry {
	reg := connector.NewRegistry()
	_ = opts
	return reg
}
