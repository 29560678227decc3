package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/connector/fc"
)

// fcFlags are Fibre Channel's own limits; the multipath map's limits are
// shared with iSCSI.
type fcFlags struct {
	DeviceTimeout  time.Duration
	CommandTimeout time.Duration
}

func addFCFlags(f *pflag.FlagSet, o *fcFlags) {
	f.DurationVar(&o.DeviceTimeout, "fc-device-timeout", 30*time.Second, "FC: time limit for the volume's devices to appear, target ports still logging in included")
	f.DurationVar(&o.CommandTimeout, "fc-command-timeout", 30*time.Second, "FC: time limit for each blockdev or multipath run")
}

// fcOptions configures the Fibre Channel connector from its own flags and
// the multipath ones every SCSI protocol shares (--multipath,
// --enforce-multipath, --multipath-map-timeout, --multipath-flush-timeout).
func (o connectorOptions) fcOptions() fc.Options {
	scsi := o.ISCSI.SCSI
	scsi.DeviceTimeout = o.FC.DeviceTimeout
	return fc.Options{
		Multipath:        o.Multipath,
		EnforceMultipath: o.EnforceMultipath,
		CommandTimeout:   o.FC.CommandTimeout,
		SCSI:             scsi,
		MultipathOptions: o.ISCSI.MultipathOptions,
	}
}

// addMultipathFlags adds --multipath and --enforce-multipath. They take
// python-brick-cinderclient-ext's "True"/"False" too (as every bool flag
// does), written --multipath True as well as --multipath=True.
func addMultipathFlags(f *pflag.FlagSet, o *connectorOptions, usage string) {
	f.BoolVar(&o.Multipath, "multipath", false, usage)
	f.BoolVar(&o.EnforceMultipath, "enforce-multipath", false, "fail unless the volume can be attached through dm-multipath")
}
