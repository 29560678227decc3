package connflags

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/internal/cmd/factory"
)

// Volume are the flags of the Cinder-backed volume commands: the
// connector options and what brick reports to Cinder.
type Volume struct {
	Opts              Options
	NIC, IP, Hostname string
}

// Use says which of the volume flags a command shows.
type Use int

const (
	ForAttach Use = iota // local-attach: all of them
	ForDetach            // local-detach, cleanup: the connector for Cinder and the teardown's limits
	ForPaths             // get-volume-paths: the connector for Cinder only
	ForNone              // get-all-volume-paths: none
)

// AttachOnlyFlags tune only an attach. Commands that do not attach still
// accept them, hidden from their help, so a script can pass one set of
// flags to local-attach and local-detach alike.
var AttachOnlyFlags = []string{
	"multipath", "enforce-multipath", "iscsi-login-timeout", "device-timeout", "multipath-map-timeout",
	"fc-device-timeout", "nfs-mount-options", "nfs-mount-timeout", "as-block",
	"nvme-portal-timeout", "nvme-device-timeout", "rbd-driver", "rbd-map-timeout",
}

// teardownFlags tune a detach.
var teardownFlags = []string{"iscsi-command-timeout", "fc-command-timeout", "multipath-flush-timeout", "nfs-mount-base", "rbd-unmap-timeout"}

// Add adds the volume flags, hiding those use does not need.
func (v *Volume) Add(f *pflag.FlagSet, use Use) {
	AddMultipathFlags(f, &v.Opts, "attach through dm-multipath over every portal (tell Cinder multipath=true)")
	f.StringVar(&v.NIC, "nic", "", "report this network interface's address to Cinder")
	f.StringVar(&v.IP, "ip", "", "report this IP address to Cinder")
	f.StringVar(&v.Hostname, "hostname", "", "host name Cinder records for the attachment (default: the kernel's)")
	AddProtocolFlags(f, &v.Opts)
	hide := map[Use][][]string{
		ForDetach: {AttachOnlyFlags},
		ForPaths:  {AttachOnlyFlags, teardownFlags},
		ForNone:   {AttachOnlyFlags, teardownFlags, {"nic", "ip", "hostname"}},
	}[use]
	for _, names := range hide {
		factory.HideFlags(f, names...)
	}
}

// Validate checks --nic and --ip on this host before any client is built.
func (v Volume) Validate(h *host.Host) error {
	if v.NIC == "" && v.IP == "" {
		return nil
	}
	g := v.Gather()
	g.EnforceMultipath = false // judged when attaching, not a usage error
	if _, _, err := connector.Gather(h.FS, g); err != nil {
		name, val := "--nic", v.NIC
		if v.NIC == "" {
			name, val = "--ip", v.IP
		}
		return fmt.Errorf("%s %s: %w", name, connector.Quote(val), err)
	}
	return nil
}

// Gather is what get-connector gathers for this command's connector.
func (v Volume) Gather() connector.GatherOptions {
	return connector.GatherOptions{
		Multipath: v.Opts.Multipath, EnforceMultipath: v.Opts.EnforceMultipath,
		IP: v.IP, NIC: v.NIC, Hostname: v.Hostname,
	}
}

// AddFixedKeyFlag adds --fixed-key-file to a command that opens
// encrypted volumes.
func AddFixedKeyFlag(f *pflag.FlagSet, p *string) {
	f.StringVar(p, "fixed-key-file", "", "file (mode 0600) with a standalone Cinder's [key_manager] fixed_key, as hex, for its encrypted volumes")
}

// Manager builds the attach use case; without Cinder (cinder=false) only
// local records can be read. Errors name the operation and the volume.
func Manager(ctx context.Context, f *factory.Factory, opts Options, cinder bool, op, ref string) (*attach.Manager, error) {
	m := &attach.Manager{Host: f.Host(), Connectors: opts.Registry(f.Host())}
	if !cinder {
		return m, nil
	}
	c, err := f.Cinder(ctx)
	if err != nil {
		label := op
		if ref != "" {
			label += " " + ref
		}
		var ue factory.UsageError
		if errors.As(err, &ue) {
			return nil, factory.UsageError{Err: fmt.Errorf("%s: %w", label, ue.Err)}
		}
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	m.Cinder = c
	return m, nil
}

// Attacher are the flags of the long-running commands that attach any
// volume (csi, docker-plugin, reconcile, restore): the volume flags and
// the key of a standalone Cinder's encrypted volumes.
type Attacher struct {
	Volume       Volume
	FixedKeyFile string
}

// Add adds the auth flags, the volume flags and --fixed-key-file.
func (a *Attacher) Add(f *factory.Factory, fl *pflag.FlagSet) {
	f.AddAuthFlags(fl)
	a.Volume.Add(fl, ForAttach)
	AddFixedKeyFlag(fl, &a.FixedKeyFile)
}

// Manager builds the attach use case with Cinder and the keys of
// encrypted volumes; errors name op and the volume ref.
func (a *Attacher) Manager(ctx context.Context, f *factory.Factory, op, ref string) (*attach.Manager, error) {
	m, err := Manager(ctx, f, a.Volume.Opts, true, op, ref)
	if err != nil {
		return nil, err
	}
	if m.Crypt, err = f.Crypt(ctx, m.Cinder, a.FixedKeyFile); err != nil {
		return nil, err
	}
	return m, nil
}
