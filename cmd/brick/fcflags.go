package main

import "github.com/brick-storage/brick/connector/fc"

// fcOptions configures the Fibre Channel connector from the flags every
// SCSI protocol shares: --multipath, --enforce-multipath, --device-timeout
// (which bounds the whole wait for the volume's FC devices, target ports
// still logging in included), --multipath-map-timeout,
// --multipath-flush-timeout and the command timeout.
func (o connectorOptions) fcOptions() fc.Options {
	return fc.Options{
		Multipath:        o.Multipath,
		EnforceMultipath: o.EnforceMultipath,
		CommandTimeout:   o.ISCSI.CommandTimeout,
		SCSI:             o.ISCSI.SCSI,
		MultipathOptions: o.ISCSI.MultipathOptions,
	}
}
