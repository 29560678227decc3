package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/stretchr/testify/require"
)

func TestPrintRecord(t *testing.T) {
	r := record{{"ip", "10.0.2.15"}, {"multipath", false}, {"wwpns", []string{"a", "b"}}, {"system uuid", "u-1"}, {"empty", []string(nil)}}
	tests := []struct {
		format  string
		columns []string
		want    string
	}{
		{formatJSON, nil, "{\n  \"ip\": \"10.0.2.15\",\n  \"multipath\": false,\n  \"wwpns\": [\n    \"a\",\n    \"b\"\n  ],\n  \"system uuid\": \"u-1\",\n  \"empty\": []\n}\n"},
		{formatYAML, []string{"multipath", "ip"}, "multipath: false\nip: 10.0.2.15\n"},
		{formatValue, []string{"IP", "system_uuid"}, "10.0.2.15\nu-1\n"},
		{formatShell, []string{"system uuid", "wwpns"}, "system_uuid='u-1'\nwwpns='a, b'\n"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, outputOptions{Format: tt.format, Columns: tt.columns}.printRecord(&b, r))
			require.Equal(t, tt.want, b.String())
		})
	}
	var b bytes.Buffer
	require.NoError(t, outputOptions{Format: formatTable}.printRecord(&b, r))
	require.Contains(t, b.String(), "Field")
	require.Contains(t, b.String(), "10.0.2.15")

	err := outputOptions{Format: formatJSON, Columns: []string{"nope"}}.printRecord(&b, r)
	require.ErrorContains(t, err, `no column "nope"`)
	require.Error(t, outputOptions{Format: "xml"}.validate())
}

func TestPrintTable(t *testing.T) {
	tb := table{Columns: []string{"UUID", "Node UUID", "Type"}, Rows: [][]any{{"u1", "n1", "iqn"}, {"u2", "n1", "wwpn"}}}
	var b bytes.Buffer
	require.NoError(t, outputOptions{Format: formatJSON, Columns: []string{"uuid", "type"}}.printTable(&b, tb))
	require.JSONEq(t, `[{"UUID":"u1","Type":"iqn"},{"UUID":"u2","Type":"wwpn"}]`, b.String())
	b.Reset()
	require.NoError(t, outputOptions{Format: formatValue}.printTable(&b, tb))
	require.Equal(t, "u1 n1 iqn\nu2 n1 wwpn\n", b.String())
	b.Reset()
	require.NoError(t, outputOptions{Format: formatTable}.printTable(&b, tb))
	require.Contains(t, b.String(), "Node UUID")
	require.Error(t, outputOptions{Format: formatShell}.printTable(&b, tb))
	b.Reset()
	require.NoError(t, outputOptions{Format: formatJSON}.printTable(&b, table{Columns: []string{"A"}}))
	require.Equal(t, "[]\n", b.String())
}

// Values from Cinder or Ironic cannot drive the terminal, forge lines or
// run code when shell output is eval'ed.
func TestOutputEscapesHostileValues(t *testing.T) {
	hostile := "vol\x1b[2J\nbrick: fake line\r\u009b31m\x00$(touch /tmp/pwned)`id`'q'"
	r := record{{"name", hostile}}
	tests := []struct {
		format string
		want   string
	}{
		{formatValue, `vol\x1b[2J\x0abrick: fake line\x0d\u009b31m\x00$(touch /tmp/pwned)` + "`id`'q'\n"},
		{formatShell, `name='vol` + "\x1b[2J\nbrick: fake line\r\u009b31m" + `$(touch /tmp/pwned)` + "`id`" + `'\''q'\'''` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, outputOptions{Format: tt.format}.printRecord(&b, r))
			require.Equal(t, tt.want, b.String())
		})
	}
	for _, f := range []string{formatTable, formatValue} {
		var b bytes.Buffer
		require.NoError(t, outputOptions{Format: f}.printTable(&b, table{Columns: []string{"Name"}, Rows: [][]any{{hostile}}}))
		require.NotContains(t, b.String(), "\x1b", f)
		require.NotContains(t, b.String(), "\r", f)
		require.NotContains(t, b.String(), "\u009b", f)
		require.NotContains(t, b.String(), "\nbrick: fake", f)
	}
}

func TestOutputConventions(t *testing.T) {
	tb := table{Columns: []string{"Volume", "Size", "Name"}, Rows: [][]any{{"v2", 10, "b,c"}, {"v1", 2, "a"}, {"v3", 10, "a"}}}
	tests := []struct {
		name string
		o    outputOptions
		want string
		err  string
	}{
		{"csv", outputOptions{Format: formatCSV}, `"Volume","Size","Name"` + "\n" + `"v2",10,"b,c"` + "\n" + `"v1",2,"a"` + "\n" + `"v3",10,"a"` + "\n", ""},
		{"csv columns", outputOptions{Format: formatCSV, Columns: []string{"name"}}, "\"Name\"\n\"b,c\"\n\"a\"\n\"a\"\n", ""},
		{"csv minimal", outputOptions{Format: formatCSV, Quote: quoteMinimal}, "Volume,Size,Name\nv2,10,\"b,c\"\nv1,2,a\nv3,10,a\n", ""},
		{"csv all", outputOptions{Format: formatCSV, Quote: quoteAll, Columns: []string{"size"}}, "\"Size\"\n\"10\"\n\"2\"\n\"10\"\n", ""},
		{"csv none", outputOptions{Format: formatCSV, Quote: quoteNone, Columns: []string{"name"}}, "Name\nb\\,c\na\na\n", ""},
		{"sort numeric", outputOptions{Format: formatValue, SortColumns: []string{"size"}}, "v1 2 a\nv2 10 b,c\nv3 10 a\n", ""},
		{"sort two keys", outputOptions{Format: formatValue, SortColumns: []string{"Size", "name"}}, "v1 2 a\nv3 10 a\nv2 10 b,c\n", ""},
		{"sort descending", outputOptions{Format: formatValue, SortColumns: []string{"volume"}, SortDescending: true}, "v3 10 a\nv2 10 b,c\nv1 2 a\n", ""},
		{"noindent", outputOptions{Format: formatJSON, Columns: []string{"volume"}, Noindent: true}, `[{"Volume":"v2"},{"Volume":"v1"},{"Volume":"v3"}]` + "\n", ""},
		{"unknown column", outputOptions{Format: formatValue, Columns: []string{"uuid"}}, "", `no column "uuid" (columns: Volume, Size, Name)`},
		{"unknown column, long hint", outputOptions{Format: formatValue, Columns: []string{"uuid"}, LongHint: true}, "", "--long shows more columns"},
		{"unknown sort column", outputOptions{Format: formatValue, SortColumns: []string{"x"}}, "", `no column "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			err := tt.o.printTable(&b, tb)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, b.String())
		})
	}
	var b bytes.Buffer
	require.NoError(t, outputOptions{Format: formatCSV}.printRecord(&b, record{{"ip", "10.0.0.1"}, {"multipath", true}}))
	require.Equal(t, `"ip","multipath"`+"\n"+`"10.0.0.1",true`+"\n", b.String())
	require.ErrorContains(t, outputOptions{Format: formatCSV, Quote: "some"}.validate(), `unknown --quote "some"`)
}

func TestTableWidth(t *testing.T) {
	long := strings.Repeat("word ", 30)
	tb := table{Columns: []string{"ID", "Description"}, Rows: [][]any{{"0b7d1f2e-0000-4000-8000-000000000001", long}}}
	tests := []struct {
		name string
		o    outputOptions
		max  int // widest line allowed; 0: unbounded (one long line)
	}{
		{"no terminal, no flag", outputOptions{}, 0},
		{"terminal", outputOptions{TermWidth: 60}, 60},
		{"max width", outputOptions{MaxWidth: 50}, 50},
		{"max width beats terminal", outputOptions{MaxWidth: 70, TermWidth: 200}, 70},
		{"fit width without a terminal", outputOptions{FitWidth: true}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Format = formatTable
			var b bytes.Buffer
			require.NoError(t, tt.o.printTable(&b, tb))
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
		{"abcdefghijkl", 5, "abcde\nfghij\nkl"},
		{"a abcdefghij", 5, "a\nabcde\nfghij"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, wrapText(tt.in, tt.width), tt.in)
	}
}

// TestCliffWidthVariables: cliff's CLIFF_MAX_TERM_WIDTH and CLIFF_FIT_WIDTH
// work as in openstackclient; BRICK_MAX_WIDTH and --max-width win.
func TestCliffWidthVariables(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	root := fixtureHost(t)
	tests := []struct {
		name string
		env  map[string]string
		args []string
		max  int // widest line allowed; 0: wider than 60 (not fitted)
	}{
		{"none", nil, nil, 0},
		{"CLIFF_MAX_TERM_WIDTH", map[string]string{"CLIFF_MAX_TERM_WIDTH": "40"}, nil, 40},
		{"BRICK_MAX_WIDTH wins", map[string]string{"CLIFF_MAX_TERM_WIDTH": "40", "BRICK_MAX_WIDTH": "50"}, nil, 50},
		{"flag wins", map[string]string{"CLIFF_MAX_TERM_WIDTH": "40"}, []string{"--max-width", "45"}, 45},
		{"CLIFF_FIT_WIDTH", map[string]string{"CLIFF_FIT_WIDTH": "1", "COLUMNS": "42"}, nil, 42},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			args := append([]string{"--host-root", root, "--config", "/dev/null", "get-connector"}, tt.args...)
			code, out, errs := runVolumeCmd(t, args...)
			require.Equal(t, 0, code, errs)
			widest := 0
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				widest = max(widest, runewidth.StringWidth(l))
			}
			if tt.max == 0 {
				require.Greater(t, widest, 60)
				return
			}
			require.LessOrEqual(t, widest, tt.max, out)
			require.Greater(t, widest, tt.max-5, "fitted to that width, not narrower")
		})
	}
}
