package main

import (
	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/connector/nfs"
)

// addNFSFlags adds the NFS connector's options to a command that connects
// or disconnects volumes (config keys and BRICK_* variables follow from the
// flag names, like every flag's).
func addNFSFlags(f *pflag.FlagSet, o *nfs.Options) {
	f.BoolVar(&o.AsBlock, "as-block", false, "NFS: attach the volume file as a loop device (raw volumes only) instead of returning the file")
	f.StringVar(&o.MountBase, "nfs-mount-base", nfs.DefaultMountBase, "NFS: directory holding one mount point per share")
	f.StringVar(&o.MountOptions, "nfs-mount-options", "", `NFS: extra mount options, after the connection's so they win (e.g. "nconnect=4,timeo=600"); with no vers= given brick tries 4.2, 4.1, then 3`)
	f.DurationVar(&o.MountTimeout, "nfs-mount-timeout", nfs.DefaultMountTimeout, "NFS: time limit for each mount attempt")
}
