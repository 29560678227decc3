package main

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/stretchr/testify/require"
)

// tablewriterTable is how brick drew tables before writeTable: tablewriter
// (now a test-only dependency) with these options.
func tablewriterTable(t *testing.T, header []string, rows [][]string, width int) string {
	fitTable(header, rows, width)
	var b bytes.Buffer
	tbl := tablewriter.NewTable(&b,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	)
	hdr := make([]any, len(header))
	for i, h := range header {
		hdr[i] = expandTabs(h)
	}
	tbl.Header(hdr...)
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = expandTabs(c)
		}
		require.NoError(t, tbl.Append(cells))
	}
	require.NoError(t, tbl.Render())
	return b.String()
}

// TestTableMatchesTablewriter: writeTable draws what tablewriter drew, for
// random tables of the values brick prints (IDs, names, sizes, paths,
// empty cells, wrapped cells, CJK, padding, tabs) at several widths.
func TestTableMatchesTablewriter(t *testing.T) {
	pool := []string{
		"", "-", "ID", "Volume", "Status", "in-use", "2 GiB", "/dev/dm-3", "/dev/sdb\n/dev/sdc",
		"6d54cb90-a5d1-40d8-9cb2-c6adf43a02af", "iqn.2010-10.org.openstack:volume-6d54cb90-a5d1-40d8-9cb2-c6adf43a02af",
		"  padded  ", "a\tb", "日本語のボリューム", "ｆｕｌｌ", "äöü", "true", "a very long volume name with several words in it",
		"line one\nline two\nline three",
	}
	rng := rand.New(rand.NewPCG(27, 22))
	pick := func() string { return pool[rng.IntN(len(pool))] }
	for n := range 400 {
		cols := 1 + rng.IntN(5)
		header := make([]string, cols)
		for i := range header {
			header[i] = pick()
		}
		rows := make([][]string, rng.IntN(4))
		for i := range rows {
			rows[i] = make([]string, cols)
			for j := range rows[i] {
				rows[i][j] = pick()
			}
		}
		width := []int{0, 0, 40, 80, 120}[rng.IntN(5)]
		clone := func(h []string, rs [][]string) ([]string, [][]string) {
			out := make([][]string, len(rs))
			for i, r := range rs {
				out[i] = append([]string(nil), r...)
			}
			return append([]string(nil), h...), out
		}
		h1, r1 := clone(header, rows)
		want := tablewriterTable(t, h1, r1, width)
		h2, r2 := clone(header, rows)
		var got bytes.Buffer
		require.NoError(t, writeTable(&got, h2, r2, width))
		require.Equal(t, want, got.String(), "table %d: header %q rows %q width %d", n, header, rows, width)
	}
}

func TestTableShapes(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, writeTable(&b, []string{"Field", "Value"}, [][]string{{"size", "2 GiB"}, {"paths", "/dev/sdb\n/dev/sdc"}}, 0))
	require.Equal(t, strings.Join([]string{
		"┌───────┬──────────┐",
		"│ Field │ Value    │",
		"├───────┼──────────┤",
		"│ size  │ 2 GiB    │",
		"│ paths │ /dev/sdb │",
		"│       │ /dev/sdc │",
		"└───────┴──────────┘",
		"",
	}, "\n"), b.String())
}
