// Package output prints brick's results as openstackclient (cliff) does:
// -f table|json|yaml|value|shell|csv, repeatable -c COLUMN and
// --sort-column, --noindent, --fit-width and --max-width. JSON and YAML
// keep the fields' order and real types; table, value, shell and csv print
// text, with control characters from servers escaped. Tables are drawn by
// tablewriter, fitted to the terminal first.
//
//	opts := output.Options{Format: output.FormatJSON}
//	err := opts.PrintRecord(os.Stdout, output.Record{{Name: "ip", Value: "192.0.2.2"}})
package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/brick-storage/brick/ident"
	"go.yaml.in/yaml/v3"
)

// Output formats.
const (
	FormatTable = "table"
	FormatJSON  = "json"
	FormatYAML  = "yaml"
	FormatValue = "value"
	FormatShell = "shell"
	FormatCSV   = "csv"
)

// Formats are the values -f takes.
var Formats = []string{FormatTable, FormatJSON, FormatYAML, FormatValue, FormatShell, FormatCSV}

// Field is one named value of a Record; Name is both the table label and
// the JSON key.
type Field struct {
	Name  string
	Value any
}

// Record is one object, printed as a Field/Value table.
type Record []Field

// Table is a list of objects sharing columns.
type Table struct {
	// Columns are the labels a table shows ("Multipath ID").
	Columns []string
	// Keys, when set, name the columns in JSON and YAML instead of the
	// labels ("multipath_id"), one per column; -c takes either.
	Keys []string
	Rows [][]any
	// Empty is the hint printed to Options.Hints when the table has no
	// row: the table form then prints nothing, as cliff does.
	Empty string
}

// keys are the JSON and YAML names of t's columns.
func (t Table) keys() []string {
	if len(t.Keys) == len(t.Columns) {
		return t.Keys
	}
	return t.Columns
}

// Options are the output flags (-f, -c, --sort-column, ...).
type Options struct {
	Format         string
	Columns        []string
	SortColumns    []string
	SortDescending bool
	Noindent       bool
	Quote          string // csv quoting, as cliff's --quote
	FitWidth       bool
	MaxWidth       int
	// TermWidth is stdout's terminal width (0: not a terminal); a table on
	// a terminal is fitted to it, as cliff does.
	TermWidth int
	// LongHint: the command shows more columns with --long, which the error
	// for an unknown -c column then suggests.
	LongHint bool
	// Hints receives a table's Empty hint (stderr; nil: none).
	Hints io.Writer
}

// Width is the width tables are fitted to; 0 means do not fit.
func (o Options) Width() int {
	if o.MaxWidth > 0 {
		return o.MaxWidth
	}
	if o.FitWidth || o.TermWidth > 0 {
		return o.TermWidth
	}
	return 0
}

// Validate checks -f and --quote before any work is done.
func (o Options) Validate() error {
	if o.Format == "" { // a command that prints nothing
		return nil
	}
	if o.Quote != "" && !slices.Contains(QuoteModes, o.Quote) {
		return fmt.Errorf("unknown --quote %q (use one of: %s)", o.Quote, strings.Join(QuoteModes, ", "))
	}
	if slices.Contains(Formats, o.Format) {
		return nil
	}
	return fmt.Errorf("unknown output format %q (use one of: %s)", o.Format, strings.Join(Formats, ", "))
}

// columnKey lets -c match "System UUID", "system_uuid" and "system uuid" alike.
func columnKey(s string) string {
	return strings.ToLower(strings.NewReplacer(" ", "_", "-", "_").Replace(s))
}

// ColumnNames are the words a shell completes for -c: each column's label,
// or its key form where the label has a space ("multipath_id").
func ColumnNames(columns []string) []string {
	out := make([]string, len(columns))
	for i, c := range columns {
		out[i] = c
		if strings.ContainsAny(c, " \t") {
			out[i] = columnKey(c)
		}
	}
	return out
}

// selectColumns returns the indexes of the wanted columns in order, or
// all; a wanted name matches a column's label or its key.
func (o Options) selectColumns(names, keys, want []string) ([]int, error) {
	if len(want) == 0 {
		idx := make([]int, len(names))
		for i := range names {
			idx[i] = i
		}
		return idx, nil
	}
	var idx []int
	for _, w := range want {
		i := slices.IndexFunc(names, func(n string) bool { return columnKey(n) == columnKey(w) })
		if i < 0 && keys != nil {
			i = slices.IndexFunc(keys, func(k string) bool { return columnKey(k) == columnKey(w) })
		}
		if i < 0 {
			hint := ""
			if o.LongHint {
				hint = "; --long shows more columns"
			}
			return nil, fmt.Errorf("%w %q (columns: %s%s)", ErrNoColumn, w, strings.Join(names, ", "), hint)
		}
		idx = append(idx, i)
	}
	return idx, nil
}

// ErrNoColumn: -c or --sort-column named a column the output does not
// have (the CLI's usage error).
var ErrNoColumn = errors.New("no column")

// PrintRecord prints one object: a Field/Value table, a JSON object, ...
func (o Options) PrintRecord(w io.Writer, r Record) error {
	names := make([]string, len(r))
	for i, f := range r {
		names[i] = f.Name
	}
	idx, err := o.selectColumns(names, nil, o.Columns)
	if err != nil {
		return err
	}
	sel := make(Record, len(idx))
	for i, j := range idx {
		sel[i] = r[j]
	}
	switch o.Format {
	case FormatJSON:
		return writeJSON(w, sel.node(), !o.Noindent)
	case FormatYAML:
		return writeYAML(w, sel.node())
	case FormatValue:
		for _, f := range sel {
			if _, err := fmt.Fprintln(w, Cell(f.Value)); err != nil {
				return err
			}
		}
		return nil
	case FormatShell:
		for _, f := range sel {
			if _, err := fmt.Fprintf(w, "%s=%s\n", shellName(f.Name), shellQuote(text(f.Value))); err != nil {
				return err
			}
		}
		return nil
	case FormatCSV:
		header, vals := make([]string, len(sel)), make([]any, len(sel))
		for i, f := range sel {
			header[i], vals[i] = f.Name, f.Value
		}
		return writeCSV(w, header, [][]any{vals}, o.Quote)
	default:
		rows := make([][]string, len(sel))
		for i, f := range sel {
			rows[i] = []string{f.Name, Cell(f.Value)}
		}
		return writeTable(w, []string{"Field", "Value"}, rows, o.Width())
	}
}

// PrintTable prints a list: a table, a JSON array of objects, ... An empty
// list prints nothing in table form but the table's Empty hint.
func (o Options) PrintTable(w io.Writer, t Table) error {
	idx, err := o.selectColumns(t.Columns, t.keys(), o.Columns)
	if err != nil {
		return err
	}
	if t, err = o.sorted(t); err != nil {
		return err
	}
	rows := make([][]any, len(t.Rows))
	for i, row := range t.Rows {
		rows[i] = pick(row, idx)
	}
	switch o.Format {
	case FormatJSON, FormatYAML:
		return o.writeObjects(w, pick(t.keys(), idx), rows)
	case FormatValue:
		for _, row := range rows {
			if _, err := fmt.Fprintln(w, strings.Join(cells(row), " ")); err != nil {
				return err
			}
		}
		return nil
	case FormatShell:
		return fmt.Errorf("the shell format prints one object; use -f value or -f json for lists")
	case FormatCSV:
		return writeCSV(w, pick(t.Columns, idx), rows, o.Quote)
	}
	if len(rows) == 0 {
		if t.Empty != "" && o.Hints != nil {
			_, err := fmt.Fprintln(o.Hints, t.Empty)
			return err
		}
		return nil
	}
	text := make([][]string, len(rows))
	for i, row := range rows {
		text[i] = cells(row)
	}
	return writeTable(w, pick(t.Columns, idx), text, o.Width())
}

// writeObjects prints rows as a JSON or YAML list of objects.
func (o Options) writeObjects(w io.Writer, keys []string, rows [][]any) error {
	list := make([]orderedMap, len(rows))
	for i, row := range rows {
		m := make(orderedMap, len(keys))
		for k, name := range keys {
			m[k] = Field{Name: name, Value: row[k]}
		}
		list[i] = m
	}
	if o.Format == FormatJSON {
		return writeJSON(w, list, !o.Noindent)
	}
	return writeYAML(w, list)
}

// pick returns the items of s at idx, in that order.
func pick[T any](s []T, idx []int) []T {
	out := make([]T, len(idx))
	for k, j := range idx {
		out[k] = s[j]
	}
	return out
}

// cells renders a row's values as text.
func cells(row []any) []string {
	out := make([]string, len(row))
	for i, v := range row {
		out[i] = Cell(v)
	}
	return out
}

// orderedMap marshals as a JSON object or YAML mapping in field order.
type orderedMap []Field

func (r Record) node() orderedMap { return orderedMap(r) }

func (m orderedMap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Name)
		v, err := json.Marshal(jsonValue(f.Value))
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", f.Name, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (m orderedMap) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, f := range m {
		var v yaml.Node
		if err := v.Encode(jsonValue(f.Value)); err != nil {
			return nil, fmt.Errorf("encode %s: %w", f.Name, err)
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: f.Name}, &v)
	}
	return n, nil
}

// jsonValue makes nil slices print as [] rather than null, so scripts can
// iterate without a null check.
func jsonValue(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice && rv.IsNil() {
		return []any{}
	}
	return v
}

func writeJSON(w io.Writer, v any, indent bool) error {
	enc := json.NewEncoder(w)
	if indent {
		enc.SetIndent("", "  ")
	}
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func writeYAML(w io.Writer, v any) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return enc.Close()
}

// Cell renders a value for table and value output. Values come from Cinder
// and Ironic (volume names, server messages): control characters are
// escaped so a value cannot move the cursor, recolour the terminal or
// forge an extra line.
func Cell(v any) string {
	s := text(v)
	return ident.Escape(s)
}

// OneLine keeps an error to one line whatever it quotes: joined errors are
// separated by "; ", and control characters that came in with a volume
// name or a server's message are escaped, so they cannot forge log lines
// or drive the terminal.
func OneLine(s string) string {
	return ident.Escape(strings.NewReplacer("\n", "; ", "\t", " ").Replace(s))
}

// shellQuote single-quotes s for `eval "$(brick ... -f shell)"`: nothing
// inside single quotes is expanded, so a value holding $(...) or `...`
// stays text. (openstackclient's double quotes would run it.) A shell
// cannot hold NUL, so it is dropped.
func shellQuote(s string) string {
	s = strings.ReplaceAll(s, "\x00", "")
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// text renders a value as plain text.
func text(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case bool:
		return strconv.FormatBool(t)
	case *bool:
		if t == nil {
			return ""
		}
		return strconv.FormatBool(*t)
	case []string:
		return strings.Join(t, ", ")
	case map[string]string:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + t[k]
		}
		return strings.Join(parts, ", ")
	case fmt.Stringer:
		return t.String()
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map, reflect.Slice, reflect.Struct:
		b, err := json.Marshal(v)
		if err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}

// shellName makes a field name a shell variable name, as openstackclient does.
func shellName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// GiB is a size in bytes as Cinder gives sizes: a number of GiB in JSON
// and YAML (openstackclient prints "Size": 1), "2 GiB" as text, sorted by
// value; nil (null, an empty cell) when the size is unknown.
func GiB(bytes int64) any {
	if bytes <= 0 {
		return nil
	}
	return gib(bytes)
}

type gib int64

func (g gib) gib() float64 { return float64(g) / (1 << 30) }

func (g gib) String() string {
	if g%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", g>>30)
	}
	return fmt.Sprintf("%.2f GiB", g.gib())
}

func (g gib) MarshalJSON() ([]byte, error) { return json.Marshal(g.gib()) }

func (g gib) MarshalYAML() (any, error) { return g.gib(), nil }
