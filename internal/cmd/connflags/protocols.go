package connflags

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/connector/fc"
	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/connector/nfs"
	"github.com/brick-storage/brick/connector/nvmeof"
	"github.com/brick-storage/brick/connector/rbd"
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
func (o Options) iscsiOptions() iscsi.Options {
	io := o.ISCSI
	io.Multipath = o.Multipath
	io.EnforceMultipath = o.EnforceMultipath
	return io
}

// FCFlags are Fibre Channel's own limits; the multipath map's limits are
// shared with iSCSI.
type FCFlags struct {
	DeviceTimeout  time.Duration
	CommandTimeout time.Duration
}

func addFCFlags(f *pflag.FlagSet, o *FCFlags) {
	f.DurationVar(&o.DeviceTimeout, "fc-device-timeout", 30*time.Second, "FC: time limit for the volume's devices to appear, target ports still logging in included")
	f.DurationVar(&o.CommandTimeout, "fc-command-timeout", 30*time.Second, "FC: time limit for each blockdev or multipath run")
}

// fcOptions configures the Fibre Channel connector from its own flags and
// the multipath ones every SCSI protocol shares (--multipath,
// --enforce-multipath, --multipath-map-timeout, --multipath-flush-timeout).
func (o Options) fcOptions() fc.Options {
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

// addNFSFlags adds the NFS connector's options to a command that connects
// or disconnects volumes (config keys and BRICK_* variables follow from the
// flag names, like every flag's).
func addNFSFlags(f *pflag.FlagSet, o *nfs.Options) {
	f.BoolVar(&o.AsBlock, "as-block", false, "NFS: attach the volume file as a loop device (raw volumes only) instead of returning the file")
	f.StringVar(&o.MountBase, "nfs-mount-base", nfs.DefaultMountBase, "NFS: directory holding one mount point per share")
	f.StringVar(&o.MountOptions, "nfs-mount-options", "", `NFS: extra mount options, after the connection's so they win (e.g. "nconnect=4,timeo=600"); with no vers= given brick tries 4.2, 4.1, then 3`)
	f.DurationVar(&o.MountTimeout, "nfs-mount-timeout", nfs.DefaultMountTimeout, "NFS: time limit for each mount attempt")
}

// addRBDFlags adds the RBD connector's options to a command that connects
// or disconnects volumes (config key rbd-driver, BRICK_RBD_DRIVER, ... as
// for every flag).
func addRBDFlags(f *pflag.FlagSet, o *rbd.Options) {
	o.Driver = rbd.DriverKRBD
	f.Var((*rbdDriverValue)(&o.Driver), "rbd-driver", `RBD: map with the kernel's rbd module ("krbd", /dev/rbdN) or the rbd-nbd daemon ("nbd", /dev/nbdN)`)
	f.DurationVar(&o.MapTimeout, "rbd-map-timeout", 2*time.Minute, "RBD: time limit for 'rbd device map' (monitors must answer, cephx must accept the key)")
	f.DurationVar(&o.UnmapTimeout, "rbd-unmap-timeout", time.Minute, "RBD: time limit for 'rbd device unmap'")
}

// rbdDriverValue rejects an unknown driver when the flag (or its config
// or environment value) is set, so the mistake is a usage error.
type rbdDriverValue string

func (v *rbdDriverValue) String() string { return string(*v) }
func (v *rbdDriverValue) Type() string   { return "krbd|nbd" }
func (v *rbdDriverValue) Set(s string) error {
	if !rbd.ValidDriver(s) {
		return fmt.Errorf("unknown RBD driver %q (want %s or %s)", s, rbd.DriverKRBD, rbd.DriverNBD)
	}
	*v = rbdDriverValue(s)
	return nil
}

// addNVMeFlags adds the NVMe-oF connector's timeouts to a command that
// connects or disconnects volumes (config keys and BRICK_* as for every flag).
func addNVMeFlags(f *pflag.FlagSet, o *nvmeof.Options) {
	f.DurationVar(&o.PortalTimeout, "nvme-portal-timeout", 10*time.Second, "NVMe-oF: time limit for each portal (TCP probe and controller connect; portals run in parallel)")
	f.DurationVar(&o.DeviceTimeout, "nvme-device-timeout", 30*time.Second, "NVMe-oF: time limit for the namespace's block device to appear")
}
