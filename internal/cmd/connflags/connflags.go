// Package connflags holds the flags the commands that connect or
// disconnect volumes share (multipath, each protocol's limits, the
// connector reported to Cinder) and builds the attach use case from them.
package connflags

import (
	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/connector/nfs"
	"github.com/brick-storage/brick/connector/nvmeof"
	"github.com/brick-storage/brick/connector/rbd"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/protocols"
)

// Options are the flags every protocol shares.
type Options struct {
	Multipath        bool
	EnforceMultipath bool
	NFS              nfs.Options    // --as-block, --nfs-mount-base, ... (addNFSFlags)
	ISCSI            iscsi.Options  // --iscsi-login-timeout, ... (addISCSIFlags); Multipath fields are set from the two above
	RBD              rbd.Options    // --rbd-driver, --rbd-map-timeout, ... (addRBDFlags)
	NVMe             nvmeof.Options // --nvme-portal-timeout, --nvme-device-timeout (addNVMeFlags)
	FC               FCFlags        // --fc-device-timeout, --fc-command-timeout (addFCFlags)
}

// Registry builds the connectors this host can use, configured from
// flags and config (the protocols package, which library users call too).
func (o Options) Registry(h *host.Host) *connector.Registry {
	return protocols.New(h, protocols.Options{
		Multipath:        o.Multipath,
		EnforceMultipath: o.EnforceMultipath,
		ISCSI:            o.iscsiOptions(),
		FC:               o.fcOptions(),
		RBD:              o.RBD,
		NFS:              o.NFS,
		NVMe:             o.NVMe,
	})
}

// AddMultipathFlags adds --multipath and --enforce-multipath. They take
// python-brick-cinderclient-ext's "True"/"False" too (as every bool flag
// does), written --multipath True as well as --multipath=True.
func AddMultipathFlags(f *pflag.FlagSet, o *Options, usage string) {
	f.BoolVar(&o.Multipath, "multipath", false, usage)
	f.BoolVar(&o.EnforceMultipath, "enforce-multipath", false, "fail unless the volume can be attached through dm-multipath")
}

// AddProtocolFlags adds every protocol's options.
func AddProtocolFlags(f *pflag.FlagSet, o *Options) {
	addISCSIFlags(f, &o.ISCSI)
	addFCFlags(f, &o.FC)
	addNFSFlags(f, &o.NFS)
	addRBDFlags(f, &o.RBD)
	addNVMeFlags(f, &o.NVMe)
}

// TuningFlags are the protocols' limits and switches: a user rarely needs
// them, so --help leaves them to --help-all and 'brick help tuning'.
var TuningFlags = []string{
	"iscsi-login-timeout", "iscsi-command-timeout", "device-timeout", "multipath-map-timeout", "multipath-flush-timeout",
	"fc-device-timeout", "fc-command-timeout", "as-block", "nfs-mount-base", "nfs-mount-options", "nfs-mount-timeout",
	"rbd-driver", "rbd-map-timeout", "rbd-unmap-timeout", "nvme-portal-timeout", "nvme-device-timeout",
}

// OtherProtocolFlags are the tuning flags of every protocol but iSCSI.
var OtherProtocolFlags = []string{
	"fc-device-timeout", "fc-command-timeout", "as-block", "nfs-mount-base", "nfs-mount-options", "nfs-mount-timeout",
	"rbd-driver", "rbd-map-timeout", "rbd-unmap-timeout", "nvme-portal-timeout", "nvme-device-timeout",
}
