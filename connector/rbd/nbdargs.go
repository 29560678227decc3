package rbd

import (
	"bytes"
	"path"
	"strings"
)

// rbd-nbd's command line, as `rbd device map -t nbd` starts it:
//
//	/usr/bin/rbd-nbd [ceph options] map pool[/namespace]/image[@snap] [rbd-nbd options]
//
// (or "attach" after a daemon restart). Its positional arguments are the
// command, then the spec; every option is known here, with whether it
// takes a value. An option brick does not know might take a value that
// looks like a spec, so a command line with one is not guessed at: the
// caller asks `rbd device list` instead.

// nbdValueOptions take the next argument as their value (rbd-nbd's own and
// Ceph's common ones; a "--x=y" form is one argument whatever x is).
var nbdValueOptions = map[string]bool{
	"-c": true, "--conf": true, "-i": true, "--id": true, "--user": true, "-n": true, "--name": true,
	"-m": true, "--mon-host": true, "--mon_host": true, "--cluster": true, "-k": true, "--keyring": true,
	"-K": true, "--keyfile": true, "--key": true, "--admin-socket": true, "--admin_socket": true,
	"--log-file": true, "--log_file": true, "--setuser": true, "--setgroup": true,
	"--device": true, "--nbds_max": true, "--max_part": true, "--timeout": true, "--io-timeout": true,
	"--reattach-timeout": true, "--cookie": true, "--encryption-format": true,
	"--encryption-passphrase-file": true, "--quiesce-hook": true, "--snap-id": true, "--format": true,
}

// nbdFlagOptions take no value.
var nbdFlagOptions = map[string]bool{
	"--read-only": true, "--exclusive": true, "--notrim": true, "--try-netlink": true, "--quiesce": true,
	"--show-cookie": true, "--pretty-format": true, "-d": true, "-f": true, "--foreground": true,
	"--no-mon-config": true,
}

// parseNBDCmdline reads a NUL-separated rbd-nbd command line. ok is false
// unless it is rbd-nbd mapping (or attaching) a spec with a pool that every
// argument could be accounted for. The Mapping has Pool, Namespace, Image
// and Snap ("-" for the image itself; a --snap-id mapping counts as a
// snapshot).
func parseNBDCmdline(cmdline []byte) (m Mapping, ok bool) {
	if len(cmdline) > maxAttr {
		return m, false
	}
	args := strings.Split(string(bytes.TrimSuffix(cmdline, []byte{0})), "\x00")
	if len(args) < 3 || path.Base(args[0]) != "rbd-nbd" {
		return m, false
	}
	var positional []string
	snapID := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(a, "=")
		switch {
		case !strings.HasPrefix(a, "-") || a == "-":
			positional = append(positional, a)
			continue
		case hasValue && strings.HasPrefix(a, "--"):
			// One argument whatever the option: it cannot hide the spec.
		case nbdFlagOptions[a]:
		case nbdValueOptions[a] && i+1 < len(args):
			i++
		default:
			return m, false
		}
		if name == "--snap-id" {
			snapID = true
		}
	}
	if len(positional) != 2 || (positional[0] != "map" && positional[0] != "attach") {
		return m, false
	}
	m, ok = parseNBDSpec(positional[1])
	if snapID {
		m.Snap = "@id"
	}
	return m, ok
}

// parseNBDSpec splits pool[/namespace]/image[@snap]. A spec without a pool
// uses the cluster's rbd_default_pool, which brick cannot see: not ok.
func parseNBDSpec(spec string) (m Mapping, ok bool) {
	base, snap, hasSnap := strings.Cut(spec, "@")
	if hasSnap && (snap == "" || strings.ContainsAny(snap, "/@")) {
		return m, false
	}
	m.Snap = "-"
	if hasSnap {
		m.Snap = snap
	}
	parts := strings.Split(base, "/")
	switch len(parts) {
	case 2:
		m.Pool, m.Image = parts[0], parts[1]
	case 3:
		m.Pool, m.Namespace, m.Image = parts[0], parts[1], parts[2]
		if m.Namespace == "" {
			return m, false
		}
	default:
		return m, false
	}
	return m, m.Pool != "" && m.Image != ""
}
