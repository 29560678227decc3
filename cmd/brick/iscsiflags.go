package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/multipath"
)

// addISCSIFlags adds the iSCSI connector's (and the SCSI and multipath
// layers') timeouts to a command that connects or disconnects volumes.
func addISCSIFlags(f *pflag.FlagSet, o *iscsi.Options) {
	f.DurationVar(&o.LoginTimeout, "iscsi-login-timeout", 15*time.Second, "iSCSI: time limit for one portal's login (a dead portal costs this much)")
	f.DurationVar(&o.CommandTimeout, "iscsi-command-timeout", 30*time.Second, "iSCSI: time limit for each iscsiadm, multipath or blockdev run")
	f.DurationVar(&o.SCSI.DeviceTimeout, "device-timeout", 30*time.Second, "iSCSI: time limit for a scanned LUN's block device to appear")
	f.DurationVar(&o.MultipathOptions.MapTimeout, "multipath-map-timeout", multipath.DefaultMapTimeout, "time limit for multipathd to build the map")
	f.DurationVar(&o.MultipathOptions.FlushTimeout, "multipath-flush-timeout", 60*time.Second, "overall time limit for flushing a multipath map, retries included")
}

// iscsiOptions fills the iSCSI options' multipath switches from the flags
// every protocol shares.
func (o connectorOptions) iscsiOptions() iscsi.Options {
	io := o.ISCSI
	io.Multipath = o.Multipath
	io.EnforceMultipath = o.EnforceMultipath
	return io
}
