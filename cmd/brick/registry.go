package main

import (
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/fc"
	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/connector/nfs"
	"github.com/brick-storage/brick/connector/nvmeof"
	"github.com/brick-storage/brick/connector/rbd"
)

// connectorOptions are the flags every protocol shares.
type connectorOptions struct {
	Multipath        bool
	EnforceMultipath bool
	NFS              nfs.Options    // --as-block, --nfs-mount-base, ... (addNFSFlags)
	ISCSI            iscsi.Options  // --iscsi-login-timeout, ... (addISCSIFlags); Multipath fields are set from the two above
	RBD              rbd.Options    // --rbd-driver, --rbd-map-timeout, ... (addRBDFlags)
	NVMe             nvmeof.Options // --nvme-portal-timeout, --nvme-device-timeout (addNVMeFlags)
}

// newRegistry builds the connectors this host can use, configured from
// flags and config. Each protocol registers itself here, one line each.
func (a *app) newRegistry(opts connectorOptions) *connector.Registry {
	reg := connector.NewRegistry()
	_ = opts
	reg.Register(nfs.New(a.host, opts.NFS), nfs.Protocol)
	reg.Register(iscsi.New(a.host, opts.iscsiOptions()), "iscsi")
	reg.Register(rbd.New(a.host, opts.RBD), rbd.Protocol)
	reg.Register(fc.New(a.host, opts.fcOptions()), fc.Protocol)
	reg.Register(nvmeof.New(a.host, opts.NVMe), nvmeof.Protocol)
	return reg
}
