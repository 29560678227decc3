package output

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
	"github.com/stretchr/testify/require"
)

// TestTableShapesRandom: for random tables of the values brick prints (IDs,
// names, sizes, paths, empty cells, several lines, CJK, padding, tabs) at
// several widths, every line of a table is as wide as its border, and a
// fitted table is no wider than asked unless its columns are at their
// narrowest.
func TestTableShapesRandom(t *testing.T) {
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
		h, r := clone(header, rows)
		var got bytes.Buffer
		require.NoError(t, writeTable(&got, h, r, width))
		lines := strings.Split(strings.TrimSuffix(got.String(), "\n"), "\n")
		border := runewidth.StringWidth(lines[0])
		for _, l := range lines {
			require.Equal(t, border, runewidth.StringWidth(l), "table %d: %q", n, got.String())
		}
		if width > 0 {
			floor := 3*cols + 1
			for i := range header {
				f := 0
				for _, r := range append([][]string{header}, rows...) {
					f = max(f, longestIdentifier(expandTabs(r[i])), min(runewidth.StringWidth(expandTabs(r[i])), minColumnWidth))
				}
				floor += f
			}
			require.LessOrEqual(t, border, max(width, floor), "table %d: %s", n, got.String())
		}
		for _, r := range append([][]string{header}, rows...) {
			for _, c := range r {
				for _, word := range strings.Fields(c) {
					if identifier(word) {
						require.Contains(t, got.String(), word, "table %d: %s broken", n, word)
					}
				}
			}
		}
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
