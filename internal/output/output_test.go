package output

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/stretchr/testify/require"
)

func TestPrintRecord(t *testing.T) {
	r := Record{{"ip", "10.0.2.15"}, {"multipath", false}, {"wwpns", []string{"a", "b"}}, {"system uuid", "u-1"}, {"empty", []string(nil)}}
	tests := []struct {
		format  string
		columns []string
		want    string
	}{
		{FormatJSON, nil, "{\n  \"ip\": \"10.0.2.15\",\n  \"multipath\": false,\n  \"wwpns\": [\n    \"a\",\n    \"b\"\n  ],\n  \"system uuid\": \"u-1\",\n  \"empty\": []\n}\n"},
		{FormatYAML, []string{"multipath", "ip"}, "multipath: false\nip: 10.0.2.15\n"},
		{FormatValue, []string{"IP", "system_uuid"}, "10.0.2.15\nu-1\n"},
		{FormatShell, []string{"system uuid", "wwpns"}, "system_uuid='u-1'\nwwpns='a, b'\n"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, Options{Format: tt.format, Columns: tt.columns}.PrintRecord(&b, r))
			require.Equal(t, tt.want, b.String())
		})
	}
	var b bytes.Buffer
	require.NoError(t, Options{Format: FormatTable}.PrintRecord(&b, r))
	require.Contains(t, b.String(), "Field")
	require.Contains(t, b.String(), "10.0.2.15")

	err := Options{Format: FormatJSON, Columns: []string{"nope"}}.PrintRecord(&b, r)
	require.ErrorContains(t, err, `no column "nope"`)
	require.Error(t, Options{Format: "xml"}.Validate())
}

func TestPrintTable(t *testing.T) {
	tb := Table{Columns: []string{"UUID", "Node UUID", "Type"}, Rows: [][]any{{"u1", "n1", "iqn"}, {"u2", "n1", "wwpn"}}}
	var b bytes.Buffer
	require.NoError(t, Options{Format: FormatJSON, Columns: []string{"uuid", "type"}}.PrintTable(&b, tb))
	require.JSONEq(t, `[{"UUID":"u1","Type":"iqn"},{"UUID":"u2","Type":"wwpn"}]`, b.String())
	b.Reset()
	require.NoError(t, Options{Format: FormatValue}.PrintTable(&b, tb))
	require.Equal(t, "u1 n1 iqn\nu2 n1 wwpn\n", b.String())
	b.Reset()
	require.NoError(t, Options{Format: FormatTable}.PrintTable(&b, tb))
	require.Contains(t, b.String(), "Node UUID")
	require.Error(t, Options{Format: FormatShell}.PrintTable(&b, tb))
	b.Reset()
	require.NoError(t, Options{Format: FormatJSON}.PrintTable(&b, Table{Columns: []string{"A"}}))
	require.Equal(t, "[]\n", b.String())
}

// Values from Cinder or Ironic cannot drive the terminal, forge lines or
// run code when shell output is eval'ed.
func TestOutputEscapesHostileValues(t *testing.T) {
	hostile := "vol\x1b[2J\nbrick: fake line\r\u009b31m\x00$(touch /tmp/pwned)`id`'q'"
	r := Record{{"name", hostile}}
	tests := []struct {
		format string
		want   string
	}{
		{FormatValue, `vol\x1b[2J\x0abrick: fake line\x0d\u009b31m\x00$(touch /tmp/pwned)` + "`id`'q'\n"},
		{FormatShell, `name='vol` + "\x1b[2J\nbrick: fake line\r\u009b31m" + `$(touch /tmp/pwned)` + "`id`" + `'\''q'\'''` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, Options{Format: tt.format}.PrintRecord(&b, r))
			require.Equal(t, tt.want, b.String())
		})
	}
	for _, f := range []string{FormatTable, FormatValue} {
		var b bytes.Buffer
		require.NoError(t, Options{Format: f}.PrintTable(&b, Table{Columns: []string{"Name"}, Rows: [][]any{{hostile}}}))
		require.NotContains(t, b.String(), "\x1b", f)
		require.NotContains(t, b.String(), "\r", f)
		require.NotContains(t, b.String(), "\u009b", f)
		require.NotContains(t, b.String(), "\nbrick: fake", f)
	}
}

func TestOutputConventions(t *testing.T) {
	tb := Table{Columns: []string{"Volume", "Size", "Name"}, Rows: [][]any{{"v2", 10, "b,c"}, {"v1", 2, "a"}, {"v3", 10, "a"}}}
	tests := []struct {
		name string
		o    Options
		want string
		err  string
	}{
		{"csv", Options{Format: FormatCSV}, `"Volume","Size","Name"` + "\n" + `"v2",10,"b,c"` + "\n" + `"v1",2,"a"` + "\n" + `"v3",10,"a"` + "\n", ""},
		{"csv columns", Options{Format: FormatCSV, Columns: []string{"name"}}, "\"Name\"\n\"b,c\"\n\"a\"\n\"a\"\n", ""},
		{"csv minimal", Options{Format: FormatCSV, Quote: QuoteMinimal}, "Volume,Size,Name\nv2,10,\"b,c\"\nv1,2,a\nv3,10,a\n", ""},
		{"csv all", Options{Format: FormatCSV, Quote: QuoteAll, Columns: []string{"size"}}, "\"Size\"\n\"10\"\n\"2\"\n\"10\"\n", ""},
		{"csv none", Options{Format: FormatCSV, Quote: QuoteNone, Columns: []string{"name"}}, "Name\nb\\,c\na\na\n", ""},
		{"sort numeric", Options{Format: FormatValue, SortColumns: []string{"size"}}, "v1 2 a\nv2 10 b,c\nv3 10 a\n", ""},
		{"sort two keys", Options{Format: FormatValue, SortColumns: []string{"Size", "name"}}, "v1 2 a\nv3 10 a\nv2 10 b,c\n", ""},
		{"sort descending", Options{Format: FormatValue, SortColumns: []string{"volume"}, SortDescending: true}, "v3 10 a\nv2 10 b,c\nv1 2 a\n", ""},
		{"noindent", Options{Format: FormatJSON, Columns: []string{"volume"}, Noindent: true}, `[{"Volume":"v2"},{"Volume":"v1"},{"Volume":"v3"}]` + "\n", ""},
		{"unknown column", Options{Format: FormatValue, Columns: []string{"uuid"}}, "", `no column "uuid" (columns: Volume, Size, Name)`},
		{"unknown column, long hint", Options{Format: FormatValue, Columns: []string{"uuid"}, LongHint: true}, "", "--long shows more columns"},
		{"unknown sort column", Options{Format: FormatValue, SortColumns: []string{"x"}}, "", `no column "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			err := tt.o.PrintTable(&b, tb)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, b.String())
		})
	}
	var b bytes.Buffer
	require.NoError(t, Options{Format: FormatCSV}.PrintRecord(&b, Record{{"ip", "10.0.0.1"}, {"multipath", true}}))
	require.Equal(t, `"ip","multipath"`+"\n"+`"10.0.0.1",true`+"\n", b.String())
	require.ErrorContains(t, Options{Format: FormatCSV, Quote: "some"}.Validate(), `unknown --quote "some"`)
}

func TestTableWidth(t *testing.T) {
	long := strings.Repeat("word ", 30)
	tb := Table{Columns: []string{"ID", "Description"}, Rows: [][]any{{"0b7d1f2e-0000-4000-8000-000000000001", long}}}
	tests := []struct {
		name string
		o    Options
		max  int // widest line allowed; 0: unbounded (one long line)
	}{
		{"no terminal, no flag", Options{}, 0},
		{"terminal", Options{TermWidth: 60}, 60},
		{"max width", Options{MaxWidth: 56}, 56},
		{"max width beats terminal", Options{MaxWidth: 70, TermWidth: 200}, 70},
		{"fit width without a terminal", Options{FitWidth: true}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Format = FormatTable
			var b bytes.Buffer
			require.NoError(t, tt.o.PrintTable(&b, tb))
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			widest := 0
			for _, l := range lines {
				widest = max(widest, runewidth.StringWidth(l))
			}
			if tt.max == 0 {
				require.Greater(t, widest, 150)
				return
			}
			require.LessOrEqual(t, widest, tt.max, b.String())
			require.Contains(t, b.String(), "0b7d1f2e-0000")
		})
	}
}

func TestWrapText(t *testing.T) {
	tests := []struct {
		in    string
		width int
		want  string
	}{
		{"short", 8, "short"},
		{"two words here", 9, "two words\nhere"},
		{`{"a":"bcdefghijkl"}`, 5, "{\"a\":\n\"bcde\nfghij\nkl\"}"},
		{"a {abcdefghij}", 5, "a\n{abcd\nefghi\nj}"},
		{"line one\nline two", 5, "line\none\nline\ntwo"},
		// Identifiers stay whole, however narrow the column.
		{"iqn.2010-10.org.openstack:volume-1", 8, "iqn.2010-10.org.openstack:volume-1"},
		{"/dev/sdb, /dev/sdc", 9, "/dev/sdb,\n/dev/sdc"},
		{"see 6d54cb90-a5d1-40d8-9cb2-c6adf43a02af now", 10, "see\n6d54cb90-a5d1-40d8-9cb2-c6adf43a02af\nnow"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, wrapText(tt.in, tt.width), tt.in)
	}
}

// TestTableKeysSizesEmpty: JSON names columns by their keys and prints
// sizes as numbers of GiB; tables keep labels and "2 GiB"; an empty table
// prints only its hint.
func TestTableKeysSizesEmpty(t *testing.T) {
	tb := Table{Columns: []string{"Volume", "Cinder Status", "Size"}, Keys: []string{"volume_id", "cinder_status", "size"},
		Rows: [][]any{{"v1", "in-use", GiB(10 << 30)}, {"v2", "unknown", GiB(0)}, {"v3", "in-use", GiB(3 << 29)}}}
	tests := []struct {
		name  string
		o     Options
		t     Table
		want  string
		hints string
	}{
		{"json keys and numbers", Options{Format: FormatJSON, Noindent: true}, tb,
			`[{"volume_id":"v1","cinder_status":"in-use","size":10},{"volume_id":"v2","cinder_status":"unknown","size":null},{"volume_id":"v3","cinder_status":"in-use","size":1.5}]` + "\n", ""},
		{"yaml", Options{Format: FormatYAML, Columns: []string{"size"}}, tb, "- size: 10\n- size: null\n- size: 1.5\n", ""},
		{"-c by label or key, sorted by size", Options{Format: FormatValue, Columns: []string{"Volume", "cinder_status", "Size"}, SortColumns: []string{"size"}}, tb,
			"v2 unknown \nv3 in-use 1.50 GiB\nv1 in-use 10 GiB\n", ""},
		{"csv keeps the text", Options{Format: FormatCSV, Columns: []string{"size"}}, tb, "\"Size\"\n\"10 GiB\"\n\"\"\n\"1.50 GiB\"\n", ""},
		{"empty table", Options{Format: FormatTable}, Table{Columns: []string{"A"}, Empty: "nothing here"}, "", "nothing here\n"},
		{"empty json", Options{Format: FormatJSON}, Table{Columns: []string{"A"}, Empty: "nothing here"}, "[]\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, hints bytes.Buffer
			tt.o.Hints = &hints
			require.NoError(t, tt.o.PrintTable(&out, tt.t))
			require.Equal(t, tt.want, out.String())
			require.Equal(t, tt.hints, hints.String())
		})
	}
	var out bytes.Buffer
	require.NoError(t, Options{Format: FormatTable}.PrintTable(&out, tb))
	require.Contains(t, out.String(), "│ Cinder Status │")
	require.Contains(t, out.String(), "│ 10 GiB ")
}
