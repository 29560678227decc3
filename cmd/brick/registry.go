package main

import (
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/nfs"
)

// connectorOptions are the flags every protocol shares.
type connectorOptions struct {
	Multipath        bool
	EnforceMultipath bool
	NFS              nfs.Options // --as-block, --nfs-mount-base, ... (addNFSFlags)
}

// newRegistry builds the connectors this host can use, configured from
// flags and config. Each protocol registers itself here, one line each.
func (a *app) newRegistry(opts connectorOptions) *connector.Registry {
	reg := connector.NewRegistry()
	_ = opts
	reg.Register(nfs.New(a.host, opts.NFS), nfs.Protocol)
	return reg
}
