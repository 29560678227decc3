package ironicattach

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/ironicapi"
)

// FlagError is a mistake in a command's flags found before any request
// (the CLI exits 2 on it). Its message names the flag.
type FlagError struct{ Err error }

func (e FlagError) Error() string { return e.Err.Error() }
func (e FlagError) Unwrap() error { return e.Err }

func flagErrorf(format string, args ...any) error {
	return FlagError{fmt.Errorf(format, args...)}
}

// Column maps an Ironic field to its openstackclient column label and its
// value in a T.
type Column[T any] struct {
	Field, Label string
	Value        func(T) any
}

// ConnectorColumns are a volume connector's fields, in list order.
var ConnectorColumns = []Column[ironicapi.VolumeConnector]{
	{"uuid", "UUID", func(c ironicapi.VolumeConnector) any { return c.UUID }},
	{"node_uuid", "Node UUID", func(c ironicapi.VolumeConnector) any { return c.NodeUUID }},
	{"type", "Type", func(c ironicapi.VolumeConnector) any { return c.Type }},
	{"connector_id", "Connector ID", func(c ironicapi.VolumeConnector) any { return c.ConnectorID }},
	{"extra", "Extra", func(c ironicapi.VolumeConnector) any { return emptyIfNil(c.Extra) }},
	{"created_at", "Created At", func(c ironicapi.VolumeConnector) any { return timeValue(c.CreatedAt) }},
	{"updated_at", "Updated At", func(c ironicapi.VolumeConnector) any { return timeValue(c.UpdatedAt) }},
}

// TargetColumns are a volume target's fields, in list order; credential
// properties are masked.
var TargetColumns = []Column[ironicapi.VolumeTarget]{
	{"uuid", "UUID", func(t ironicapi.VolumeTarget) any { return t.UUID }},
	{"node_uuid", "Node UUID", func(t ironicapi.VolumeTarget) any { return t.NodeUUID }},
	{"volume_type", "Driver Volume Type", func(t ironicapi.VolumeTarget) any { return t.VolumeType }},
	{"boot_index", "Boot Index", func(t ironicapi.VolumeTarget) any { return t.BootIndex }},
	{"volume_id", "Volume ID", func(t ironicapi.VolumeTarget) any { return t.VolumeID }},
	{"properties", "Properties", func(t ironicapi.VolumeTarget) any { return MaskProperties(t.Properties) }},
	{"extra", "Extra", func(t ironicapi.VolumeTarget) any { return emptyIfNil(t.Extra) }},
	{"created_at", "Created At", func(t ironicapi.VolumeTarget) any { return timeValue(t.CreatedAt) }},
	{"updated_at", "Updated At", func(t ironicapi.VolumeTarget) any { return timeValue(t.UpdatedAt) }},
}

// PickColumns returns the columns for a list: the first n by default, all
// with long, the named ones with fields (--fields).
func PickColumns[T any](all []Column[T], n int, long bool, fields []string) ([]Column[T], error) {
	switch {
	case len(fields) > 0:
		var out []Column[T]
		for _, f := range fields {
			i := slices.IndexFunc(all, func(c Column[T]) bool { return c.Field == f })
			if i < 0 {
				return nil, flagErrorf("--fields %s: not one of %s", connector.Quote(f), strings.Join(FieldNames(all), ", "))
			}
			out = append(out, all[i])
		}
		return out, nil
	case long:
		return all, nil
	}
	return all[:n], nil
}

// FieldNames are the columns' Ironic field names.
func FieldNames[T any](cols []Column[T]) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Field
	}
	return out
}

// timeValue prints Ironic timestamps; never-set ones are empty (null in JSON).
func timeValue(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// MaskProperties hides credential values in target properties. Ironic
// masks them on output too; this also covers what brick sends and prints
// itself.
func MaskProperties(p map[string]any) map[string]any {
	if p == nil {
		return map[string]any{}
	}
	out := make(map[string]any, len(p))
	for k, v := range p {
		if connector.IsSecretKey(k) {
			v = "******"
		}
		out[k] = v
	}
	return out
}

func emptyIfNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// ShowRecord lays one resource out as openstackclient's show does: field
// names as labels, sorted (or only fields, in their order).
func ShowRecord[T any](cols []Column[T], fields []string, v T) (output.Record, error) {
	if len(fields) > 0 {
		var err error
		if cols, err = PickColumns(cols, 0, false, fields); err != nil {
			return nil, err
		}
	}
	sorted := slices.Clone(cols)
	if len(fields) == 0 {
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].Field < sorted[j].Field })
	}
	r := make(output.Record, len(sorted))
	for i, c := range sorted {
		r[i] = output.Field{Name: c.Field, Value: c.Value(v)}
	}
	return r, nil
}

// ListTable is one row per resource with the given columns.
func ListTable[T any](cols []Column[T], list []T) output.Table {
	t := output.Table{Columns: make([]string, len(cols))}
	for i, c := range cols {
		t.Columns[i] = c.Label
	}
	for _, v := range list {
		row := make([]any, len(cols))
		for i, col := range cols {
			row[i] = col.Value(v)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// ParseKV parses repeatable key=value flags the way ironicclient does: the
// value is JSON when it parses as JSON, else a string.
func ParseKV(flag string, args []string) (map[string]any, error) {
	if len(args) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(args))
	for _, kv := range args {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, flagErrorf("--%s %s: want KEY=VALUE", flag, connector.Quote(kv))
		}
		var val any = v
		var j any
		if json.Unmarshal([]byte(v), &j) == nil {
			val = j
		}
		out[k] = val
	}
	return out, nil
}

// SortOpts splits --sort key[:dir].
func SortOpts(s string) (key, dir string, err error) {
	if s == "" {
		return "", "", nil
	}
	key, dir, _ = strings.Cut(s, ":")
	if dir != "" && dir != "asc" && dir != "desc" {
		return "", "", flagErrorf("--sort %s: direction must be asc or desc", connector.Quote(s))
	}
	return key, dir, nil
}

// PatchOps are the patch operations that add (set) the properties and
// extra keys of a set command.
func PatchOps(props, extra map[string]any) []ironicapi.PatchOp {
	var ops []ironicapi.PatchOp
	for k, v := range props {
		ops = append(ops, ironicapi.Add(ironicapi.PropertyPath(k), v))
	}
	for k, v := range extra {
		ops = append(ops, ironicapi.Add(ironicapi.ExtraPath(k), v))
	}
	return ops
}

// UnsetOps are the patch operations that remove properties and extra keys.
func UnsetOps(props, extra []string) []ironicapi.PatchOp {
	var ops []ironicapi.PatchOp
	for _, k := range props {
		ops = append(ops, ironicapi.Remove(ironicapi.PropertyPath(k)))
	}
	for _, k := range extra {
		ops = append(ops, ironicapi.Remove(ironicapi.ExtraPath(k)))
	}
	return ops
}
