package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/connector/nvmeof"
)

// addNVMeFlags adds the NVMe-oF connector's timeouts to a command that
// connects or disconnects volumes (config keys and BRICK_* as for every flag).
func addNVMeFlags(f *pflag.FlagSet, o *nvmeof.Options) {
	f.DurationVar(&o.PortalTimeout, "nvme-portal-timeout", 10*time.Second, "NVMe-oF: time limit for each portal (TCP probe and controller connect; portals run in parallel)")
	f.DurationVar(&o.DeviceTimeout, "nvme-device-timeout", 30*time.Second, "NVMe-oF: time limit for the namespace's block device to appear")
}
