package connector

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path"
	"runtime"
	"strings"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
)

// Properties is the connector Cinder drivers expect from a host, with the
// keys os-brick's get_connector_properties uses. Booleans are booleans.
type Properties struct {
	Platform            string   `json:"platform"`
	OSType              string   `json:"os_type"`
	IP                  string   `json:"ip"`
	Host                string   `json:"host"`
	Multipath           bool     `json:"multipath"`
	EnforceMultipath    bool     `json:"enforce_multipath"`
	Initiator           string   `json:"initiator,omitempty"`
	WWPNs               []string `json:"wwpns,omitempty"`
	WWNNs               []string `json:"wwnns,omitempty"`
	SystemUUID          string   `json:"system uuid,omitempty"`
	NQN                 string   `json:"nqn,omitempty"`
	NVMeHostID          string   `json:"nvme_hostid,omitempty"`
	UUID                string   `json:"uuid,omitempty"`
	NVMeNativeMultipath *bool    `json:"nvme_native_multipath,omitempty"`
	DoLocalAttach       bool     `json:"do_local_attach"`
}

// GatherOptions choose what Gather reports.
type GatherOptions struct {
	Multipath        bool
	EnforceMultipath bool
	IP               string // overrides the detected address
	NIC              string // take the address of this interface
	Hostname         string // overrides the kernel's host name
}

// ErrMultipathdNotRunning is returned when multipath is enforced but
// multipathd does not run.
var ErrMultipathdNotRunning = errors.New("multipathd is not running")

// Warning is a problem Gather worked around: a file it could not read or
// parse. The key it affects is left out.
type Warning struct {
	File string
	Err  error
}

func (w Warning) String() string { return fmt.Sprintf("%s: %v", w.File, w.Err) }

// Host files Gather reads (under the host's root).
const (
	initiatorNameFile = "/etc/iscsi/initiatorname.iscsi"
	productUUIDFile   = "/sys/class/dmi/id/product_uuid"
	hostnameFile      = "/proc/sys/kernel/hostname"
	byUUIDDir         = "/dev/disk/by-uuid"
)

// Gather reads this host's connector properties but those protocols add
// themselves (HostFacter; Registry.Gather runs both). It runs no command, opens
// no socket and creates no file; every source is a file under fsys's root,
// so it needs no root privileges except where the host restricts a file
// (then the key is left out with a warning).
func Gather(fsys host.FS, opts GatherOptions) (Properties, []Warning, error) {
	var warns []Warning
	warn := func(file string, err error) { warns = append(warns, Warning{File: file, Err: err}) }

	p := Properties{
		Platform:         machineName(runtime.GOARCH),
		OSType:           runtime.GOOS,
		EnforceMultipath: opts.EnforceMultipath,
		DoLocalAttach:    true,
	}
	var err error
	if p.Multipath, err = gatherMultipath(fsys, opts, warn); err != nil {
		return Properties{}, warns, err
	}
	if p.IP, err = pickIP(fsys, opts); err != nil {
		return Properties{}, warns, fmt.Errorf("get connector: %w", err)
	}
	p.Host = hostName(fsys, opts.Hostname)
	p.Initiator = gatherInitiator(fsys, warn)
	p.SystemUUID = gatherSystemUUID(fsys, warn)
	p.UUID = rootFSUUID(fsys)
	return p, warns, nil
}

// gatherMultipath is the connector's multipath flag: true only when asked
// for and multipathd runs; enforced without multipathd is an error.
func gatherMultipath(fsys host.FS, opts GatherOptions, warn func(string, error)) (bool, error) {
	if !opts.Multipath && !opts.EnforceMultipath {
		return false, nil
	}
	switch {
	case host.NewSystem(fsys).ProcessRunning("multipathd"):
		return true, nil
	case opts.EnforceMultipath:
		return false, fmt.Errorf("get connector: multipath enforced but %w (start it: systemctl enable --now multipathd)", ErrMultipathdNotRunning)
	default:
		warn("multipathd", errors.New("not running; reporting multipath=false"))
		return false, nil
	}
}

// hostName is the given name, else /etc/hostname, else the kernel's.
func hostName(fsys host.FS, given string) string {
	if given != "" {
		return given
	}
	if name, err := fsys.ReadString(hostnameFile); err == nil && name != "" {
		return name
	}
	name, _ := os.Hostname()
	return name
}

// gatherInitiator is the iSCSI initiator name; no file means none.
func gatherInitiator(fsys host.FS, warn func(string, error)) string {
	parse := func(v string) (string, bool) { return ParseInitiatorName([]byte(v)) }
	return readOptional(fsys, initiatorNameFile, parse, "no InitiatorName= line", warn)
}

// gatherSystemUUID is the DMI product UUID, readable by root only on most
// hosts: an unreadable one is worth a note, not more.
func gatherSystemUUID(fsys host.FS, warn func(string, error)) string {
	return readOptional(fsys, productUUIDFile, ident.ParseUUID, "not a UUID", warn)
}

// readOptional parses a file that may be missing (then ""); one that cannot
// be read or parsed gives "" and a warning.
func readOptional(fsys host.FS, file string, parse func(string) (string, bool), invalid string, warn func(string, error)) string {
	v, err := fsys.ReadString(file)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			warn(file, err)
		}
		return ""
	}
	parsed, ok := parse(v)
	if !ok {
		warn(file, errors.New(invalid))
	}
	return parsed
}

var machineNames = map[string]string{
	"amd64": "x86_64", "386": "i686", "arm64": "aarch64", "arm": "armv7l",
	"ppc64le": "ppc64le", "ppc64": "ppc64", "s390x": "s390x", "riscv64": "riscv64",
}

// machineName gives uname -m's name for a Go architecture, as os-brick reports it.
func machineName(goarch string) string {
	if m, ok := machineNames[goarch]; ok {
		return m
	}
	return goarch
}

// ParseInitiatorName returns the first InitiatorName= value of an
// /etc/iscsi/initiatorname.iscsi file. Comments, blank lines and CRLF line
// ends are ignored.
func ParseInitiatorName(data []byte) (string, bool) {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(key) != "InitiatorName" {
			continue
		}
		val = strings.TrimSpace(val)
		if ident.IQN(val) {
			return val, true
		}
	}
	return "", false
}

// pickIP chooses the connector's ip: the given one, the given NIC's, or the
// address of the interface holding the default route (IPv4 first), falling
// back to any address and finally to 127.0.0.1 as os-brick does.
func pickIP(fsys host.FS, opts GatherOptions) (string, error) {
	if opts.IP != "" {
		a, err := netip.ParseAddr(opts.IP)
		if err != nil {
			return "", fmt.Errorf("--ip %q is not an IP address", opts.IP)
		}
		return a.String(), nil
	}
	if opts.NIC == "" {
		// What the walk below finds first whenever the default route's
		// interface has an IPv4 address, from two files instead of five.
		if a, ok := host.NewSystem(fsys).DefaultRouteIPv4(); ok {
			return a.String(), nil
		}
	}
	return walkIP(fsys, opts)
}

// walkIP is pickIP over every interface address and both default routes.
func walkIP(fsys host.FS, opts GatherOptions) (string, error) {
	addrs, err := host.NewSystem(fsys).InterfaceAddrs()
	if opts.NIC != "" {
		if err != nil {
			return "", fmt.Errorf("address of interface %s: %w", opts.NIC, err)
		}
		if a, ok := addrOn(addrs, opts.NIC); ok {
			return a, nil
		}
		return "", fmt.Errorf("interface %s has no usable IP address", opts.NIC)
	}
	v4, v6 := host.NewSystem(fsys).DefaultRouteInterfaces()
	for _, nic := range []string{v4, v6} {
		if nic == "" {
			continue
		}
		if a, ok := addrOn(addrs, nic); ok {
			return a, nil
		}
	}
	for _, a := range addrs {
		if a.Addr.Is4() {
			return a.Addr.String(), nil
		}
	}
	for _, a := range addrs {
		if a.Global {
			return a.Addr.String(), nil
		}
	}
	return "127.0.0.1", nil
}

// addrOn returns nic's IPv4 address, else its global IPv6 one.
func addrOn(addrs []host.IfAddr, nic string) (string, bool) {
	for _, a := range addrs {
		if a.Interface == nic && a.Addr.Is4() {
			return a.Addr.String(), true
		}
	}
	for _, a := range addrs {
		if a.Interface == nic && a.Addr.Is6() && a.Global {
			return a.Addr.String(), true
		}
	}
	return "", false
}

// rootFSUUID finds the UUID of the filesystem mounted at / through the
// by-uuid links udev keeps (os-brick runs findmnt and blkid for this).
func rootFSUUID(fsys host.FS) string {
	mounts, err := host.NewSystem(fsys).Mounts()
	if err != nil {
		return ""
	}
	var source string
	for _, m := range mounts {
		if m.MountPoint == "/" {
			source = m.Source // the last mount on / is the one in effect
		}
	}
	if !strings.HasPrefix(source, "/dev/") {
		return ""
	}
	want, err := fsys.EvalSymlinks(source)
	if err != nil {
		return ""
	}
	entries, err := fsys.ReadDir(byUUIDDir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if got, err := fsys.EvalSymlinks(path.Join(byUUIDDir, e.Name())); err == nil && got == want {
			return e.Name()
		}
	}
	return ""
}

// HostFacter is a Connector that adds its protocol's host facts to the
// connector properties, as os-brick asks each connector for its own.
type HostFacter interface {
	// HostFacts fills the protocol's keys of p from the connector's host;
	// warn reports a file it could not read or parse (its key left out).
	HostFacts(p *Properties, warn func(file string, err error))
}

// Gather reads the host's connector properties (the package's Gather) and
// then every registered connector's own host facts, in type order.
func (r *Registry) Gather(fsys host.FS, opts GatherOptions) (Properties, []Warning, error) {
	p, warns, err := Gather(fsys, opts)
	if err != nil {
		return p, warns, err
	}
	warn := func(file string, err error) { warns = append(warns, Warning{File: file, Err: err}) }
	seen := map[Connector]bool{}
	for _, t := range r.Types() {
		c := r.byType[t]
		if f, ok := c.(HostFacter); ok && !seen[c] {
			seen[c] = true
			f.HostFacts(&p, warn)
		}
	}
	return p, warns, nil
}
