// Package ironic is `brick ironic`: Ironic's volume connectors and targets
// and the standalone attach-volume and detach-volume.
package ironic

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/ironicapi"
)

// NewCmd is `brick ironic ...`: Ironic volume connectors and targets
// with the options and columns of `openstack baremetal volume connector|target`,
// plus the standalone attach-volume and detach-volume, register and
// boot-from-volume.
func NewCmd(f *factory.Factory) *cobra.Command {
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
	f.AddOutputFlags(cmd.PersistentFlags())
	cmd.AddCommand(newCmdIronicConnector(f), newCmdIronicTarget(f))
	cmd.AddCommand(newCmdIronicAttachVolume(f, nil), newCmdIronicDetachVolume(f, nil))
	cmd.AddCommand(newCmdIronicRegister(f, nil), newCmdBootVolume(f, nil))
	addIronicAuthFlags(f, cmd)
	return cmd
}

// usesCinder are the ironic commands that talk to Cinder too.
var usesCinder = []string{"attach-volume", "detach-volume", "boot-from-volume"}

// cinderOnlyFlags mean nothing to a command that talks to Ironic alone.
var cinderOnlyFlags = []string{"cinder-endpoint", "os-endpoint", "os-volume-api-version"}

// addIronicAuthFlags gives each ironic command the auth flags; those only
// Cinder uses are accepted but unlisted on the commands that do not.
func addIronicAuthFlags(f *factory.Factory, c *cobra.Command) {
	for _, sub := range c.Commands() {
		addIronicAuthFlags(f, sub)
	}
	if !c.Runnable() || c.HasSubCommands() {
		return
	}
	f.AddAuthFlags(c.Flags())
	if !slices.Contains(usesCinder, c.Name()) {
		for _, n := range cinderOnlyFlags {
			_ = c.Flags().MarkHidden(n)
		}
	}
}

// ResolveNode turns a node name or UUID into the UUID.
func ResolveNode(ctx context.Context, sc *gophercloud.ServiceClient, ident string) (string, error) {
	if ident == "" {
		return "", nil
	}
	if !ironicapi.ValidNodeIdent(ident) {
		return "", factory.UsageError{Err: fmt.Errorf("--node %s is not a node name or UUID", connector.Quote(ident))}
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
	fl := cmd.Flags()
	fl.StringVar(&l.node, "node", "", "only the "+what+" of this node (name or UUID)")
	fl.IntVar(&l.limit, "limit", 0, "return at most this many "+what+" (0: all; pages are followed)")
	fl.StringVar(&l.marker, "marker", "", "start after the "+strings.TrimSuffix(what, "s")+" with this UUID (the last one of the previous list)")
	fl.StringVar(&l.sort, "sort", "", "sort by KEY, KEY:asc or KEY:desc, e.g. created_at:desc")
	fl.BoolVar(&l.long, "long", false, "show all columns")
	fl.StringSliceVar(&l.fields, "fields", nil, "show only these fields ("+strings.Join(fields, ", ")+"); repeatable or comma-separated")
	cmd.MarkFlagsMutuallyExclusive("long", "fields")
}

// registerSecrets masks credential property values in everything brick
// prints or logs from here on (errors included).
func registerSecrets(f *factory.Factory, props map[string]any) {
	for k, v := range props {
		if s, ok := v.(string); ok && s != "" && connector.IsSecretKey(k) {
			f.Redactor.Add(s)
		}
	}
}

// deleteAll deletes each UUID, going on after failures like openstackclient,
// and fails at the end if any failed.
func deleteAll(f *factory.Factory, what string, ids []string, del func(string) error) error {
	var failed []string
	for _, id := range ids {
		if err := del(id); err != nil {
			// One "brick: " line per failure, as every error prints.
			factory.PrintError(f.ErrWriter(), f.Redactor.Redact(err.Error()))
			failed = append(failed, id)
			continue
		}
		fmt.Fprintf(f.ErrWriter(), "Deleted %s %s\n", what, id)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d %ss not deleted: %s", len(failed), len(ids), what, strings.Join(failed, ", "))
	}
	return nil
}
