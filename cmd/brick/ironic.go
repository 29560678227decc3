package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ironicapi"
	"github.com/brick-storage/brick/osauth"
)

// ironicCommand is `brick ironic ...`: Ironic volume connectors and targets
// with the options and columns of `openstack baremetal volume connector|target`,
// plus host registration and the standalone boot-from-volume tools.
func newCmdIronic(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ironic",
		Short: "Manage Ironic volume connectors and targets; register this host with Ironic",
		Long: `Ironic keeps each bare-metal node's storage initiators (volume connectors:
iqn, wwpn, wwnn, ip, mac, port, portgroup) and the volumes it uses or boots
from (volume targets). These commands manage them like
'openstack baremetal volume connector|target', register this host's
initiators as a node's connectors, and export Cinder volumes to a node.

Ironic needs API version 1.32 or later for these resources; brick always
sends at least that. Nodes may be given by name or UUID everywhere.
Ironic changes and deletes connectors and targets only while the node is
powered off; creating them works in any power state.

Authentication: --os-cloud / OS_* for Keystone, or --os-auth-type noauth
(or http_basic with --os-username/--os-password) with --ironic-endpoint
(BRICK_IRONIC_ENDPOINT); clouds.yaml's baremetal_endpoint_override is used.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	a.addOutputFlags(cmd.PersistentFlags())
	cmd.AddCommand(newCmdIronicConnector(a), newCmdIronicTarget(a), newCmdIronicRegister(a, nil))
	cmd.AddCommand(newCmdIronicAttachVolume(a, nil), newCmdIronicDetachVolume(a, nil))
	cmd.AddCommand(newCmdBootVolume(a, nil))
	addIronicAuthFlags(a, cmd)
	return cmd
}

// usesCinder are the ironic commands that talk to Cinder too.
var usesCinder = []string{"attach-volume", "detach-volume", "boot-from-volume"}

// cinderOnlyFlags mean nothing to a command that talks to Ironic alone.
var cinderOnlyFlags = []string{"cinder-endpoint", "os-endpoint", "os-volume-api-version"}

// addIronicAuthFlags gives each ironic command the auth flags; those only
// Cinder uses are accepted but unlisted on the commands that do not.
func addIronicAuthFlags(a *app, c *cobra.Command) {
	for _, sub := range c.Commands() {
		addIronicAuthFlags(a, sub)
	}
	if !c.Runnable() || c.HasSubCommands() {
		return
	}
	a.addAuthFlags(c.Flags())
	if !slices.Contains(usesCinder, c.Name()) {
		for _, n := range cinderOnlyFlags {
			_ = c.Flags().MarkHidden(n)
		}
	}
}

// ironicClient builds the Ironic client from the auth flags.
func (a *app) ironicClient(ctx context.Context) (*gophercloud.ServiceClient, error) {
	defer a.authenticating("ironic")()
	sc, err := a.cloud().Baremetal(ctx)
	if err != nil {
		if errors.Is(err, osauth.ErrConfig) {
			return nil, usageError{err}
		}
		return nil, err
	}
	return sc, nil
}

// resolveNode turns a node name or UUID into the UUID.
func resolveNode(ctx context.Context, sc *gophercloud.ServiceClient, ident string) (string, error) {
	if ident == "" {
		return "", nil
	}
	if !ironicapi.ValidNodeIdent(ident) {
		return "", usageError{fmt.Errorf("--node %s is not a node name or UUID", connector.Quote(ident))}
	}
	return ironicapi.ResolveNode(ctx, sc, ident)
}

// listFlags are the list options both resources share.
type listFlags struct {
	node   string
	limit  int
	marker string
	sort   string
	long   bool
	fields []string
}

func (l *listFlags) add(cmd *cobra.Command, what string, fields []string) {
	f := cmd.Flags()
	f.StringVar(&l.node, "node", "", "only the "+what+" of this node (name or UUID)")
	f.IntVar(&l.limit, "limit", 0, "return at most this many "+what+" (0: all; pages are followed)")
	f.StringVar(&l.marker, "marker", "", "start after the "+strings.TrimSuffix(what, "s")+" with this UUID (the last one of the previous list)")
	f.StringVar(&l.sort, "sort", "", "sort by KEY, KEY:asc or KEY:desc, e.g. created_at:desc")
	f.BoolVar(&l.long, "long", false, "show all columns")
	f.StringSliceVar(&l.fields, "fields", nil, "show only these fields ("+strings.Join(fields, ", ")+"); repeatable or comma-separated")
	cmd.MarkFlagsMutuallyExclusive("long", "fields")
}

// registerSecrets masks credential property values in everything brick
// prints or logs from here on (errors included).
func registerSecrets(a *app, props map[string]any) {
	for k, v := range props {
		if s, ok := v.(string); ok && s != "" && connector.IsSecretKey(k) {
			a.redactor.Add(s)
		}
	}
}

// deleteAll deletes each UUID, going on after failures like openstackclient,
// and fails at the end if any failed.
func deleteAll(a *app, what string, ids []string, del func(string) error) error {
	var failed []string
	for _, id := range ids {
		if err := del(id); err != nil {
			// One "brick: " line per failure, as every error prints.
			printError(a.errWriter(), a.redactor.Redact(err.Error()))
			failed = append(failed, id)
			continue
		}
		fmt.Fprintf(a.errWriter(), "Deleted %s %s\n", what, id)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d %ss not deleted: %s", len(failed), len(ids), what, strings.Join(failed, ", "))
	}
	return nil
}
