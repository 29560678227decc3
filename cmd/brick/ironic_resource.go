package main

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/ironicapi"
)

// listQuery is what a list command asks of Ironic; each resource turns it
// into its own ironicapi list options.
type listQuery struct {
	node, marker, sortKey, sortDir string
	limit                          int
	fields                         []string
	detail                         bool
}

// volumeResource is what the commands connectors and targets share (list,
// show, delete, printing) need to know about one of them, so each command
// is written once.
type volumeResource[T any] struct {
	name         string // "connector": used in help and messages
	columns      []column
	listColumns  int      // how many columns a plain list shows
	fields       []string // the fields Ironic accepts in ?fields=
	listExample  string
	showSecrets  bool // show's help says credentials are masked
	value        func(T, string) any
	list         func(ctx context.Context, sc *gophercloud.ServiceClient, q listQuery) ([]T, error)
	get          func(ctx context.Context, sc *gophercloud.ServiceClient, id string, opts *ironicapi.GetOpts) (*T, error)
	deleteByUUID func(ctx context.Context, sc *gophercloud.ServiceClient, id string) error
}

func (r volumeResource[T]) print(a *app, cmd *cobra.Command, v *T, fields []string) error {
	rec, err := showRecord(r.columns, fields, func(f string) any { return r.value(*v, f) })
	if err != nil {
		return err
	}
	return a.out.printRecord(cmd.OutOrStdout(), rec)
}

func (r volumeResource[T]) listCommand(a *app) *cobra.Command {
	var l listFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List volume " + r.name + "s",
		Long: `List volume ` + r.name + `s, following every page: unlike ironicclient, each page
keeps the --node filter (Ironic's next-page link drops it).`,
		Example: r.listExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cols, err := pickColumns(r.columns, r.listColumns, l.long, l.fields)
			if err != nil {
				return err
			}
			key, dir, err := sortOpts(l.sort)
			if err != nil {
				return err
			}
			if l.limit < 0 {
				return usageError{fmt.Errorf("--limit %d: must be 0 or more", l.limit)}
			}
			ctx := cmd.Context()
			sc, err := a.ironicClient(ctx)
			if err != nil {
				return err
			}
			nodeUUID, err := resolveNode(ctx, sc, l.node)
			if err != nil {
				return err
			}
			q := listQuery{node: nodeUUID, limit: l.limit, marker: l.marker, sortKey: key, sortDir: dir}
			if len(l.fields) > 0 {
				q.fields = fieldNames(cols)
			} else if l.long {
				q.detail = true
			}
			list, err := r.list(ctx, sc, q)
			if err != nil {
				return err
			}
			t := table{Columns: make([]string, len(cols))}
			for i, c := range cols {
				t.Columns[i] = c.label
			}
			for _, v := range list {
				row := make([]any, len(cols))
				for i, col := range cols {
					row[i] = r.value(v, col.field)
				}
				t.Rows = append(t.Rows, row)
			}
			return a.out.printTable(cmd.OutOrStdout(), t)
		},
	}
	l.add(cmd, r.name+"s", r.fields)
	return cmd
}

func (r volumeResource[T]) showCommand(a *app) *cobra.Command {
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
			sc, err := a.ironicClient(ctx)
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
			return r.print(a, cmd, v, fields)
		},
	}
	cmd.Flags().StringSliceVar(&fields, "fields", nil, "show only these fields; repeatable or comma-separated")
	return cmd
}

func (r volumeResource[T]) deleteCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "delete UUID...",
		Short: "Delete volume " + r.name + "s (their nodes must be powered off)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			sc, err := a.ironicClient(ctx)
			if err != nil {
				return err
			}
			return a.deleteAll(cmd, "volume "+r.name, args, func(id string) error {
				return r.deleteByUUID(ctx, sc, id)
			})
		},
	}
}
