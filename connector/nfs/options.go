package nfs

import (
	"strconv"
	"strings"
	"sync"

	"github.com/brick-storage/brick/connector"
)

// optKind says whether a mount option takes a value.
type optKind int

const (
	flagOpt   optKind = iota // "hard"
	valueOpt                 // "vers=3"
	eitherOpt                // "fsc" or "fsc=tag"
)

// allowedOptions are the mount options brick passes to mount.nfs: nfs(5)'s
// options and the generic ones from mount(8) that make sense for a share.
// An allow-list rather than a deny-list, because mount(8) has options that
// run programs or change ownership (uhelper=, helper=, X-mount.*), and "bg"
// would make mount return before the share is there. Built on first use:
// a map literal is filled at every start of every command.
var allowedOptions = sync.OnceValue(func() map[string]optKind {
	return map[string]optKind{
		// generic
		"ro": flagOpt, "rw": flagOpt, "sync": flagOpt, "async": flagOpt,
		"atime": flagOpt, "noatime": flagOpt, "diratime": flagOpt, "nodiratime": flagOpt,
		"relatime": flagOpt, "norelatime": flagOpt, "strictatime": flagOpt, "nostrictatime": flagOpt,
		"lazytime": flagOpt, "nolazytime": flagOpt,
		"suid": flagOpt, "nosuid": flagOpt, "dev": flagOpt, "nodev": flagOpt, "exec": flagOpt, "noexec": flagOpt,
		"_netdev": flagOpt, "nofail": flagOpt,
		// nfs(5)
		"vers": valueOpt, "nfsvers": valueOpt, "minorversion": valueOpt,
		"soft": flagOpt, "hard": flagOpt, "softerr": flagOpt, "softreval": flagOpt, "nosoftreval": flagOpt,
		"intr": flagOpt, "nointr": flagOpt, "timeo": valueOpt, "retrans": valueOpt, "retry": valueOpt,
		"rsize": valueOpt, "wsize": valueOpt, "bsize": valueOpt,
		"ac": flagOpt, "noac": flagOpt, "acregmin": valueOpt, "acregmax": valueOpt,
		"acdirmin": valueOpt, "acdirmax": valueOpt, "actimeo": valueOpt,
		"cto": flagOpt, "nocto": flagOpt, "lookupcache": valueOpt,
		"fsc": eitherOpt, "nofsc": flagOpt, "sharecache": flagOpt, "nosharecache": flagOpt,
		"resvport": flagOpt, "noresvport": flagOpt,
		"proto": valueOpt, "udp": flagOpt, "tcp": flagOpt, "rdma": flagOpt,
		"port": valueOpt, "mountport": valueOpt, "mountproto": valueOpt, "mounthost": valueOpt,
		"mountvers": valueOpt, "mountaddr": valueOpt, "addr": valueOpt, "clientaddr": valueOpt,
		"namlen": valueOpt, "nconnect": valueOpt, "max_connect": valueOpt,
		"sec": valueOpt, "xprtsec": valueOpt,
		"lock": flagOpt, "nolock": flagOpt, "local_lock": valueOpt,
		"posix": flagOpt, "noposix": flagOpt, "acl": flagOpt, "noacl": flagOpt,
		"rdirplus": eitherOpt, "nordirplus": flagOpt, "fg": flagOpt,
		"migration": flagOpt, "nomigration": flagOpt, "trunkdiscovery": flagOpt, "notrunkdiscovery": flagOpt,
	}
})

// Limits on option strings.
const (
	maxOptionsLen  = 4096
	maxOptions     = 64
	maxOptValueLen = 256
)

// ParseMountOptions parses mount options as Cinder's NFS drivers hand them
// out ("-o vers=3,nolock", "-o a -o b", "-oa,b") or as written in brick's
// config ("vers=3,nolock"). Every option must be on brick's allow-list,
// with a value made of letters, digits and . _ : @ + / - only, so nothing
// can smuggle in another option, a second source or a helper program.
// key names the option string in errors ("options", "nfs-mount-options").
func ParseMountOptions(key, s string) ([]string, error) {
	if len(s) > maxOptionsLen {
		return nil, connector.Invalid(key, "longer than %d bytes", maxOptionsLen)
	}
	var out []string
	fields := strings.Fields(s)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		var list string
		switch {
		case f == "-o":
			if i+1 == len(fields) {
				return nil, connector.Invalid(key, "-o without options")
			}
			i++
			list = fields[i]
		case strings.HasPrefix(f, "-o"):
			list = f[2:]
		case strings.HasPrefix(f, "-"):
			return nil, connector.Invalid(key, "%s: only -o OPTIONS is accepted", connector.Quote(f))
		default:
			list = f
		}
		for _, opt := range strings.Split(list, ",") {
			if opt == "" {
				continue // "vers=3," is a common slip and harmless
			}
			if err := checkOption(key, opt); err != nil {
				return nil, err
			}
			out = append(out, opt)
			if len(out) > maxOptions {
				return nil, connector.Invalid(key, "more than %d options", maxOptions)
			}
		}
	}
	return out, nil
}

func checkOption(key, opt string) error {
	name, value, hasValue := strings.Cut(opt, "=")
	kind, ok := allowedOptions()[name]
	if !ok {
		return connector.Invalid(key, "mount option %s is not allowed", connector.Quote(name))
	}
	switch {
	case kind == flagOpt && hasValue:
		return connector.Invalid(key, "mount option %s takes no value", connector.Quote(name))
	case kind == valueOpt && (!hasValue || value == ""):
		return connector.Invalid(key, "mount option %s needs a value", connector.Quote(name))
	case len(value) > maxOptValueLen:
		return connector.Invalid(key, "mount option %s: value longer than %d bytes", connector.Quote(name), maxOptValueLen)
	}
	for i := 0; i < len(value); i++ {
		c := value[i]
		if !(isAlnum(c) || strings.IndexByte("._:@+/-", c) >= 0) {
			return connector.Invalid(key, "mount option %s: character %q not allowed in the value", connector.Quote(name), c)
		}
	}
	if hasValue && strings.HasPrefix(value, "-") {
		return connector.Invalid(key, "mount option %s: value starts with '-'", connector.Quote(name))
	}
	switch name {
	case "vers", "nfsvers":
		if !validVersion(value) {
			return connector.Invalid(key, "mount option %s=%s: want 3, 4, 4.0, 4.1 or 4.2", name, connector.Quote(value))
		}
	case "minorversion":
		if n, err := strconv.Atoi(value); err != nil || n < 0 || n > 2 {
			return connector.Invalid(key, "mount option minorversion=%s: want 0, 1 or 2", connector.Quote(value))
		}
	}
	return nil
}

func validVersion(v string) bool {
	switch v {
	case "3", "4", "4.0", "4.1", "4.2":
		return true
	}
	return false
}

// fallbackVersions are tried in order when no option fixes the version:
// newest first, so a server that speaks 4.2 gets it, and v3 last for
// servers (or exports) v4 cannot reach.
func fallbackVersions() []string { return []string{"4.2", "4.1", "3"} }

// hasVersion reports whether the options choose an NFS version.
func hasVersion(opts []string) bool {
	for _, o := range opts {
		name, _, _ := strings.Cut(o, "=")
		switch name {
		case "vers", "nfsvers", "minorversion":
			return true
		}
	}
	return false
}

// versionOf returns the vers= value of a mount's super options (what the
// kernel negotiated), or "".
func versionOf(superOptions string) string {
	for _, o := range strings.Split(superOptions, ",") {
		if v, ok := strings.CutPrefix(o, "vers="); ok {
			return v
		}
	}
	return ""
}

// hardeningOptions come first, so brick's config can override them (the
// connection may not, see ParseVolume): volume files need no set-uid programs, device nodes or
// executables from a server brick does not control.
func hardeningOptions() []string { return []string{"nosuid", "nodev", "noexec"} }

// relaxesHardening reports whether opt undoes one of hardeningOptions.
func relaxesHardening(opt string) bool { return opt == "suid" || opt == "dev" || opt == "exec" }

// mountOptions merges brick's defaults, the connection's options and
// brick's config, in that order: the NFS client and mount(8) let a later
// option override an earlier one, so the host's configuration wins.
func mountOptions(conn, config []string) []string {
	out := hardeningOptions()
	out = append(out, conn...)
	return append(out, config...)
}

func joinOptions(opts []string, version string) string {
	if version != "" {
		opts = append(append([]string(nil), opts...), "vers="+version)
	}
	return strings.Join(opts, ",")
}
