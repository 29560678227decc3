// Package completion gives brick's command tree its shell completions:
// fixed value sets, the host's NICs, Ironic nodes and Cinder volumes.
// Completions that ask a cloud are bounded by Timeout, so a shell waiting
// on Tab never hangs on an unreachable service.
package completion

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/pagination"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/ironicapi"
)

// Timeout bounds a completion that asks a cloud.
const Timeout = 3 * time.Second

// fixedValues are the flags whose values come from a fixed set, besides
// the Chooser flags, which complete their own.
var fixedValues = map[string][]string{
	"format":       output.Formats,
	"mkfs":         {"ext4", "xfs", "ext3", "ext2", "btrfs"},
	"rbd-driver":   {"krbd", "nbd"},
	"os-interface": {"public", "internal", "admin"},
	"os-auth-type": {"password", "token", "v3applicationcredential", "noauth", "none", "http_basic"},
	"protocol":     {"iscsi", "iser", "fibre_channel", "rbd", "nfs", "nvmeof"},
}

// --type of an Ironic volume connector, and of a target.
var (
	connectorTypes = []string{"iqn", "ip", "mac", "wwnn", "wwpn", "port", "portgroup"}
	targetTypes    = []string{"iscsi", "fibre_channel", "rbd", "nfs", "nvmeof"}
)

// Chooser is a flag value that knows its accepted values.
type Chooser interface{ Choices() []string }

// Sources are what the completions ask. Setup runs first in every
// completion that reads the host or a cloud: it applies the config and
// environment quietly and returns the host.
type Sources struct {
	Setup   func(cmd *cobra.Command) *host.Host
	Cinder  func(ctx context.Context) (*gophercloud.ServiceClient, error)
	Ironic  func(ctx context.Context) (*gophercloud.ServiceClient, error)
	Columns func(command string) []string // -c and --sort-column names, nil when not fixed
}

// Register gives every command of the tree under c its flag and argument
// completions.
func Register(c *cobra.Command, s Sources) {
	registerFixed(c, s)
	if c.LocalFlags().Lookup("nic") != nil {
		_ = c.RegisterFlagCompletionFunc("nic", s.nics)
	}
	for _, n := range []string{"node", "ironic-node"} {
		if c.LocalFlags().Lookup(n) != nil {
			_ = c.RegisterFlagCompletionFunc(n, s.nodes)
		}
	}
	switch c.Name() {
	case "local-attach", "attach-volume", "detach-volume":
		c.ValidArgsFunction = firstArg(s.volumes(false))
	case "local-detach", "get-volume-paths", "cleanup", "extend":
		c.ValidArgsFunction = firstArg(s.volumes(true))
	case "boot-from-volume":
		c.ValidArgsFunction = firstArg(s.nodes)
		_ = c.RegisterFlagCompletionFunc("volume", s.volumes(false))
	}
	for _, sub := range c.Commands() {
		Register(sub, s)
	}
}

func fixed(vals []string) cobra.CompletionFunc {
	return cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp)
}

// registerFixed completes c's flags whose values come from a fixed set.
func registerFixed(c *cobra.Command, s Sources) {
	for name, vals := range fixedValues {
		if c.LocalFlags().Lookup(name) != nil {
			_ = c.RegisterFlagCompletionFunc(name, fixed(vals))
		}
	}
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if ch, ok := f.Value.(Chooser); ok {
			_ = c.RegisterFlagCompletionFunc(f.Name, fixed(ch.Choices()))
		}
	})
	if c.LocalFlags().Lookup("type") != nil {
		types := targetTypes
		if strings.Contains(c.CommandPath(), "connector") {
			types = connectorTypes
		}
		_ = c.RegisterFlagCompletionFunc("type", fixed(types))
	}
	if cols := s.Columns(c.Name()); cols != nil {
		for _, n := range []string{"column", "sort-column"} {
			if c.LocalFlags().Lookup(n) != nil {
				_ = c.RegisterFlagCompletionFunc(n, fixed(output.ColumnNames(cols)))
			}
		}
	}
}

func (s Sources) nics(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	h := s.Setup(cmd)
	addrs, _ := h.Sys.InterfaceAddrs()
	var out []string
	for _, ad := range addrs {
		if !slices.Contains(out, ad.Interface) {
			out = append(out, ad.Interface)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func (s Sources) nodes(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	s.Setup(cmd)
	ctx, cancel := context.WithTimeout(cmd.Context(), Timeout)
	defer cancel()
	sc, err := s.Ironic(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	_ = ironicapi.ListNodes(sc, nodes.ListOpts{Fields: []string{"uuid", "name"}, Limit: 500}).EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
		list, err := nodes.ExtractNodes(p)
		for _, n := range list {
			out = append(out, item(n.UUID, n.Name))
			if n.Name != "" {
				out = append(out, item(n.Name, n.UUID))
			}
		}
		return false, err // the first page is enough for a shell
	})
	return out, cobra.ShellCompDirectiveNoFileComp
}

// firstArg completes a command's first argument with f and offers nothing
// (not even files) after it.
func firstArg(f cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return f(cmd, args, toComplete)
	}
}

// volumes offers Cinder's volumes (IDs and names, with the other as
// description) and, for commands on attached volumes, brick's records
// first.
func (s Sources) volumes(attached bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		h := s.Setup(cmd)
		ctx, cancel := context.WithTimeout(cmd.Context(), Timeout)
		defer cancel()
		if attached {
			if out := recorded(ctx, h); len(out) > 0 {
				return out, cobra.ShellCompDirectiveNoFileComp
			}
		}
		sc, err := s.Cinder(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		_ = volumes.List(sc, volumes.ListOpts{Limit: 500}).EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
			list, err := volumes.ExtractVolumes(p)
			for _, v := range list {
				out = append(out, item(v.ID, v.Name+" "+v.Status))
				if v.Name != "" {
					out = append(out, item(v.Name, v.ID+" "+v.Status))
				}
			}
			return false, err
		})
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// recorded lists the volumes brick's records hold on this host.
func recorded(ctx context.Context, h *host.Host) []string {
	m := &attach.Manager{Host: h}
	entries, _ := m.List(ctx)
	var out []string
	for _, e := range entries {
		out = append(out, item(e.Record.VolumeID, e.Record.VolumeName))
	}
	return out
}

// item is a value with its description, both kept to one line.
func item(value, desc string) string {
	value, desc = output.OneLine(value), strings.TrimSpace(output.OneLine(desc))
	if desc == "" {
		return value
	}
	return value + "\t" + desc
}
