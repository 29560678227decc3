package ironic

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/ironicapi"
	"github.com/brick-storage/brick/ironicattach"
)

// volumeResource is what the commands connectors and targets share (list,
// show, delete, create/set/unset, printing) need to know about one of
// them, so each command is written once.
type volumeResource[T any] struct {
	name        string // "connector": used in help and messages
	short       string // the group command's help line
	columns     []ironicattach.Column[T]
	listColumns int      // how many columns a plain list shows
	fields      []string // the fields Ironic accepts in ?fields=
	listExample string
	showSecrets bool // show's help says credentials are masked
	list        func(ctx context.Context, sc *gophercloud.ServiceClient, q ironicapi.ListOpts) ([]T, error)
	get         func(ctx context.Context, sc *gophercloud.ServiceClient, id string, opts *ironicapi.GetOpts) (*T, error)
	del         func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error
}

// groupCommand is `brick ironic <name>` with list, show and delete plus
// the resource's own create, set and unset.
func (r volumeResource[T]) groupCommand(f *factory.Factory, create, set, unset *cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   r.name,
		Short: r.short,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(create, r.listCommand(f), r.showCommand(f), set, unset, r.deleteCommand(f))
	return cmd
}

func newCmdIronicConnector(f *factory.Factory) *cobra.Command {
	r := connectorResource()
	return r.groupCommand(f, newCmdConnectorCreate(f, r), newCmdConnectorSet(f, r), newCmdConnectorUnset(f, r))
}

type connectorCmd = volumeResource[ironicapi.VolumeConnector]

func connectorResource() connectorCmd {
	return connectorCmd{
		name: "connector", short: "Manage Ironic volume connectors (a node's storage initiators)",
		columns: ironicattach.ConnectorColumns, listColumns: 4, fields: ironicapi.ConnectorFields,
		listExample: `  brick ironic connector list --node node-1
  brick ironic connector list --long -f json
  brick ironic connector list --fields uuid,connector_id --sort connector_id:desc`,
		list: func(ctx context.Context, sc *gophercloud.ServiceClient, q ironicapi.ListOpts) ([]ironicapi.VolumeConnector, error) {
			return ironicapi.AllConnectors(ctx, ironicapi.ListConnectors(sc, q), q.Limit)
		},
		get: func(ctx context.Context, sc *gophercloud.ServiceClient, id string, opts *ironicapi.GetOpts) (*ironicapi.VolumeConnector, error) {
			return ironicapi.GetConnector(ctx, sc, id, opts).Extract()
		},
		del: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error {
			return ironicapi.DeleteConnector(ctx, sc, id).ExtractErr()
		},
	}
}

func newCmdIronicTarget(f *factory.Factory) *cobra.Command {
	r := targetResource()
	return r.groupCommand(f, newCmdTargetCreate(f, r), newCmdTargetSet(f, r), newCmdTargetUnset(f, r))
}

type targetCmd = volumeResource[ironicapi.VolumeTarget]

func targetResource() targetCmd {
	return targetCmd{
		name: "target", short: "Manage Ironic volume targets (the volumes a node uses or boots from)",
		columns: ironicattach.TargetColumns, listColumns: 5, fields: ironicapi.TargetFields, showSecrets: true,
		listExample: `  brick ironic target list --node node-1
  brick ironic target list --long -f json`,
		list: func(ctx context.Context, sc *gophercloud.ServiceClient, q ironicapi.ListOpts) ([]ironicapi.VolumeTarget, error) {
			return ironicapi.AllTargets(ctx, ironicapi.ListTargets(sc, q), q.Limit)
		},
		get: func(ctx context.Context, sc *gophercloud.ServiceClient, id string, opts *ironicapi.GetOpts) (*ironicapi.VolumeTarget, error) {
			return ironicapi.GetTarget(ctx, sc, id, opts).Extract()
		},
		del: func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error {
			return ironicapi.DeleteTarget(ctx, sc, id).ExtractErr()
		},
	}
}

// writeRequest makes a create or update request and returns the record.
type writeRequest[T any] func(ctx context.Context, sc *gophercloud.ServiceClient, args []string) (*T, error)

// writeCommand gives a create, set or unset command its RunE: check
// validates the flags before any request (nil: nothing to check), do
// makes the request, and the answer is printed as show prints it.
func (r volumeResource[T]) writeCommand(f *factory.Factory, cmd *cobra.Command, check func() error, do writeRequest[T]) *cobra.Command {
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if check != nil {
			if err := check(); err != nil {
				return err
			}
		}
		ctx := cmd.Context()
		sc, err := f.Ironic(ctx)
		if err != nil {
			return err
		}
		v, err := do(ctx, sc, args)
		if err != nil {
			return err
		}
		return r.print(f, cmd, v, nil)
	}
	return cmd
}

func (r volumeResource[T]) print(f *factory.Factory, cmd *cobra.Command, v *T, fields []string) error {
	rec, err := ironicattach.ShowRecord(r.columns, fields, *v)
	if err != nil {
		return err
	}
	return f.Output().PrintRecord(cmd.OutOrStdout(), rec)
}

func (r volumeResource[T]) listCommand(f *factory.Factory) *cobra.Command {
	var l listFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List volume " + r.name + "s",
		Long: `List volume ` + r.name + `s, following every page: unlike ironicclient, each page
keeps the --node filter (Ironic's next-page link drops it).`,
		Example: r.listExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cols, err := ironicattach.PickColumns(r.columns, r.listColumns, l.long, l.fields)
			if err != nil {
				return err
			}
			q, err := l.query(ironicattach.FieldNames(cols))
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			sc, err := f.Ironic(ctx)
			if err != nil {
				return err
			}
			if q.Node, err = ResolveNode(ctx, sc, l.node); err != nil {
				return err
			}
			list, err := r.list(ctx, sc, q)
			if err != nil {
				return err
			}
			out := f.Output()
			out.LongHint = !l.long && len(l.fields) == 0
			return out.PrintTable(cmd.OutOrStdout(), ironicattach.ListTable(cols, list))
		},
	}
	l.add(cmd, r.name+"s", r.fields)
	return cmd
}

// query is the list request of the flags, asking for fields with
// --fields; the node is left out (resolving it needs the client).
func (l *listFlags) query(fields []string) (ironicapi.ListOpts, error) {
	key, dir, err := ironicattach.SortOpts(l.sort)
	if err != nil {
		return ironicapi.ListOpts{}, err
	}
	if l.limit < 0 {
		return ironicapi.ListOpts{}, factory.UsageError{Err: fmt.Errorf("--limit %d: must be 0 or more", l.limit)}
	}
	q := ironicapi.ListOpts{Limit: l.limit, Marker: l.marker, SortKey: key, SortDir: dir}
	if len(l.fields) > 0 {
		q.Fields = fields
	} else if l.long {
		q.Detail = true
	}
	return q, nil
}

func (r volumeResource[T]) showCommand(f *factory.Factory) *cobra.Command {
	var fields []string
	short := "Show a volume " + r.name
	if r.showSecrets {
		short += " (credentials masked)"
	}
	cmd := &cobra.Command{
		Use:   "show UUID",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			sc, err := f.Ironic(ctx)
			if err != nil {
				return err
			}
			var opts *ironicapi.GetOpts
			if len(fields) > 0 {
				opts = &ironicapi.GetOpts{Fields: fields}
			}
			v, err := r.get(ctx, sc, args[0], opts)
			if err != nil {
				return err
			}
			return r.print(f, cmd, v, fields)
		},
	}
	cmd.Flags().StringSliceVar(&fields, "fields", nil, "show only these fields; repeatable or comma-separated")
	return cmd
}

func (r volumeResource[T]) deleteCommand(f *factory.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "delete UUID...",
		Short: "Delete volume " + r.name + "s (their nodes must be powered off)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			sc, err := f.Ironic(ctx)
			if err != nil {
				return err
			}
			return deleteAll(f, "volume "+r.name, args, func(id string) error {
				return r.del(ctx, sc, id)
			})
		},
	}
}

// patchFlags are the flags set and unset share: the node to move to and
// KEY=VALUE (set) or KEY (unset) lists, with the parsed maps.
type patchFlags struct {
	node         string
	props, extra []string
	propMap      map[string]any
	extraMap     map[string]any
}

// parse parses --property and --extra as KEY=VALUE; property values that
// are credentials are masked in all output from here on.
func (p *patchFlags) parse(f *factory.Factory) (err error) {
	if p.propMap, err = ironicattach.ParseKV("property", p.props); err != nil {
		return err
	}
	registerSecrets(f, p.propMap)
	p.extraMap, err = ironicattach.ParseKV("extra", p.extra)
	return err
}

// setOps are the patch operations of set: --node, then the resource's
// own (own may be nil), then --property and --extra.
func (p *patchFlags) setOps(ctx context.Context, sc *gophercloud.ServiceClient, own func() ([]ironicapi.PatchOp, error)) ([]ironicapi.PatchOp, error) {
	var ops []ironicapi.PatchOp
	if p.node != "" {
		nodeUUID, err := ResolveNode(ctx, sc, p.node)
		if err != nil {
			return nil, err
		}
		ops = append(ops, ironicapi.Replace("/node_uuid", nodeUUID))
	}
	if own != nil {
		more, err := own()
		if err != nil {
			return nil, err
		}
		ops = append(ops, more...)
	}
	return append(ops, ironicattach.PatchOps(p.propMap, p.extraMap)...), nil
}

// unsetOps are the patch operations of unset's --property and --extra keys.
func (p *patchFlags) unsetOps() []ironicapi.PatchOp {
	return ironicattach.UnsetOps(p.props, p.extra)
}
