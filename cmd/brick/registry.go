package main

import (
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/connector/nfs"
	"github.com/brick-storage/brick/connector/nvmeof"
	"github.com/brick-storage/brick/connector/rbd"
	"github.com/brick-storage/brick/protocols"
)

// connectorOptions are the flags every protocol shares.
type connectorOptions struct {
	Multipath        bool
	EnforceMultipath bool
	NFS              nfs.Options    // --as-block, --nfs-mount-base, ... (addNFSFlags)
	ISCSI            iscsi.Options  // --iscsi-login-timeout, ... (addISCSIFlags); Multipath fields are set from the two above
	RBD              rbd.Options    // --rbd-driver, --rbd-map-timeout, ... (addRBDFlags)
	NVMe             nvmeof.Options // --nvme-portal-timeout, --nvme-device-timeout (addNVMeFlags)
	FC               fcFlags        // --fc-device-timeout, --fc-command-timeout (addFCFlags)
}

// newRegistry builds the connectors this host can use, configured from
// flags and config (the protocols package, which library users call too).
func (a *app) newRegistry(opts connectorOptions) *connector.Registry {
	return protocols.New(a.host, protocols.Options{
		Multipath:        opts.Multipath,
		EnforceMultipath: opts.EnforceMultipath,
		ISCSI:            opts.iscsiOptions(),
		FC:               opts.fcOptions(),
		RBD:              opts.RBD,
		NFS:              opts.NFS,
		NVMe:             opts.NVMe,
	})
}
