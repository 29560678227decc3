package main

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/pagination"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/internal/settings"
	"github.com/brick-storage/brick/ironicapi"
)

// completionTimeout bounds a completion that asks a cloud: a shell waiting
// on Tab must not hang on an unreachable Cinder.
const completionTimeout = 3 * time.Second

// fixedValues are the flags whose values come from a fixed set, besides
// the choiceValue flags, which complete their own.
var fixedValues = map[string][]string{
	"format":       output.Formats,
	"mkfs":         {"ext4", "xfs", "ext3", "ext2", "btrfs"},
	"rbd-driver":   {"krbd", "nbd"},
	"os-interface": {"public", "internal", "admin"},
	"os-auth-type": {"password", "token", "v3applicationcredential", "noauth", "none", "http_basic"},
	"protocol":     {"iscsi", "fibre_channel", "rbd", "nfs", "nvmeof"},
}

// commandColumns are the -c and --sort-column names of the commands whose
// columns are fixed (nil for the others).
func commandColumns(name string) []string {
	switch name {
	case "list":
		return listColumns
	case "get-connector":
		return connectorKeys()
	}
	return nil
}

// typeValues: --type of an Ironic volume connector, and of a target.
var (
	connectorTypes = []string{"iqn", "ip", "mac", "wwnn", "wwpn", "port", "portgroup"}
	targetTypes    = []string{"iscsi", "fibre_channel", "rbd", "nfs", "nvmeof"}
)

// completer completes flag values and arguments: fixed sets, NICs,
// Ironic nodes, volumes.
type completer struct{ a *app }

// register gives every command of the tree its flag and argument
// completions: fixed sets, NICs, Ironic nodes, volumes.
func (cp completer) register(c *cobra.Command) {
	fixed := func(vals []string) cobra.CompletionFunc {
		return cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp)
	}
	for name, vals := range fixedValues {
		if c.LocalFlags().Lookup(name) != nil {
			_ = c.RegisterFlagCompletionFunc(name, fixed(vals))
		}
	}
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if ch, ok := f.Value.(*choiceValue); ok {
			_ = c.RegisterFlagCompletionFunc(f.Name, fixed(ch.choices))
		}
	})
	if c.LocalFlags().Lookup("type") != nil {
		types := targetTypes
		if strings.Contains(c.CommandPath(), "connector") {
			types = connectorTypes
		}
		_ = c.RegisterFlagCompletionFunc("type", fixed(types))
	}
	if cols := commandColumns(c.Name()); cols != nil {
		for _, n := range []string{"column", "sort-column"} {
			if c.LocalFlags().Lookup(n) != nil {
				_ = c.RegisterFlagCompletionFunc(n, fixed(output.ColumnNames(cols)))
			}
		}
	}
	if c.LocalFlags().Lookup("nic") != nil {
		_ = c.RegisterFlagCompletionFunc("nic", cp.nics)
	}
	for _, n := range []string{"node", "ironic-node"} {
		if c.LocalFlags().Lookup(n) != nil {
			_ = c.RegisterFlagCompletionFunc(n, cp.nodes)
		}
	}
	switch c.Name() {
	case "local-attach", "attach-volume", "detach-volume":
		c.ValidArgsFunction = firstArg(cp.volumes(false))
	case "local-detach", "get-volume-paths", "cleanup", "extend":
		c.ValidArgsFunction = firstArg(cp.volumes(true))
	case "boot-from-volume":
		c.ValidArgsFunction = firstArg(cp.nodes)
		_ = c.RegisterFlagCompletionFunc("volume", cp.volumes(false))
	}
	for _, sub := range c.Commands() {
		cp.register(sub)
	}
}

// setup applies config and environment and builds the host, as
// setup does, but quietly and without judging the command line (a
// completion is asked for half-typed commands). setup itself ran for
// cobra's __complete command, without the completed command's flags.
func (cp completer) setup(cmd *cobra.Command) {
	cp.a.logger = slog.New(slog.DiscardHandler)
	cfg, err := cp.a.loadSettings(cmd)
	if err != nil { // the environment still applies
		cfg, _ = settings.Parse(cp.a.configFile, nil)
	}
	_ = cp.a.applySettings(cmd, cfg)
	cp.a.host = host.New(cp.a.hostRoot, cp.a.logger, cp.a.redactor)
}

func (cp completer) nics(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cp.setup(cmd)
	addrs, _ := cp.a.host.Sys.InterfaceAddrs()
	var out []string
	for _, ad := range addrs {
		if !slices.Contains(out, ad.Interface) {
			out = append(out, ad.Interface)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func (cp completer) nodes(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cp.setup(cmd)
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	sc, err := cp.a.ironicClient(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	_ = ironicapi.ListNodes(sc, nodes.ListOpts{Fields: []string{"uuid", "name"}, Limit: 500}).EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
		list, err := nodes.ExtractNodes(p)
		for _, n := range list {
			out = append(out, completion(n.UUID, n.Name))
			if n.Name != "" {
				out = append(out, completion(n.Name, n.UUID))
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

// completeVolumes offers Cinder's volumes (IDs and names, with the other
// as description) and, for commands on attached volumes, brick's records
// first.
func (cp completer) volumes(attached bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cp.setup(cmd)
		ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
		defer cancel()
		var out []string
		if attached {
			m := &attach.Manager{Host: cp.a.host}
			entries, _ := m.List(ctx)
			for _, e := range entries {
				out = append(out, completion(e.Record.VolumeID, e.Record.VolumeName))
			}
			if len(out) > 0 {
				return out, cobra.ShellCompDirectiveNoFileComp
			}
		}
		c, err := cp.a.cinderClient(ctx)
		if err != nil {
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		_ = volumes.List(c.SC, volumes.ListOpts{Limit: 500}).EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
			list, err := volumes.ExtractVolumes(p)
			for _, v := range list {
				out = append(out, completion(v.ID, v.Name+" "+v.Status))
				if v.Name != "" {
					out = append(out, completion(v.Name, v.ID+" "+v.Status))
				}
			}
			return false, err
		})
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completion is a value with its description, both kept to one line.
func completion(value, desc string) string {
	value, desc = oneLine(value), strings.TrimSpace(oneLine(desc))
	if desc == "" {
		return value
	}
	return value + "\t" + desc
}
