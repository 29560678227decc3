package rbd

import "strings"

// Drivers: how an image becomes a block device.
const (
	// DriverKRBD maps with the kernel's rbd module: /dev/rbdN.
	DriverKRBD = "krbd"
	// DriverNBD maps with the rbd-nbd daemon (librbd in user space): /dev/nbdN.
	DriverNBD = "nbd"
)

// ValidDriver reports whether d names a driver this package supports.
func ValidDriver(d string) bool { return d == DriverKRBD || d == DriverNBD }

// mapArgs builds `rbd device map` for v. confPath is the private config
// holding the key (then the key reaches rbd through that file only);
// without it the host's /etc/ceph/<cluster>.conf and keyring are used and
// the monitors go on the command line. No argument ever holds a secret.
// noudev (krbd only) stops rbd from waiting for udev's event, which never
// comes on a host or container without a udev daemon: rbd would hang.
func mapArgs(v Volume, driver, confPath string, noudev bool) []string {
	args := []string{"device", "map", "--device-type", driver}
	if v.ReadOnly {
		args = append(args, "--read-only")
	}
	if noudev && driver == DriverKRBD {
		args = append(args, "--options", "noudev")
	}
	args = append(args, authArgs(v, confPath)...)
	return append(args, v.Spec())
}

// authArgs selects the cluster, monitors and identity.
func authArgs(v Volume, confPath string) []string {
	var args []string
	if confPath != "" {
		args = append(args, "--conf", confPath)
	} else {
		args = append(args, "--cluster", v.Cluster)
		if len(v.Monitors) > 0 {
			args = append(args, "-m", strings.Join(v.Monitors, ","))
		}
	}
	if v.User != "" {
		args = append(args, "--id", v.User)
	}
	return args
}

// listArgs builds `rbd device list` in JSON (the fallback for nbd devices
// whose client brick cannot read); it reads sysfs (krbd) or the
// rbd-nbd processes (nbd) and needs no cluster access.
func listArgs(driver string) []string {
	return []string{"device", "list", "--device-type", driver, "--format", "json"}
}

// unmapArgs builds `rbd device unmap` for a device path. force asks krbd to
// unmap even while the device is open (-o force); rbd-nbd has no such
// option and disconnects open devices anyway. noudev as for mapArgs.
func unmapArgs(driver, device string, force, noudev bool) []string {
	args := []string{"device", "unmap", "--device-type", driver}
	if driver == DriverKRBD {
		var opts []string
		if force {
			opts = append(opts, "force")
		}
		if noudev {
			opts = append(opts, "noudev")
		}
		if len(opts) > 0 {
			args = append(args, "--options", strings.Join(opts, ","))
		}
	}
	return append(args, device)
}
