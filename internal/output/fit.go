package output

import (
	"cmp"
	"slices"
	"strings"

	"github.com/mattn/go-runewidth"
)

// minColumnWidth is the narrowest a fitted column gets, as in cliff.
const minColumnWidth = 8

// sorted returns t with its rows ordered by --sort-column (each column a
// tie-breaker for the one before), numbers by value, the rest as text.
func (o Options) sorted(t Table) (Table, error) {
	if len(o.SortColumns) == 0 {
		return t, nil
	}
	keys, err := o.selectColumns(t.Columns, o.SortColumns)
	if err != nil {
		return t, err
	}
	rows := slices.Clone(t.Rows)
	slices.SortStableFunc(rows, func(a, b []any) int {
		for _, k := range keys {
			if c := compareValues(a[k], b[k]); c != 0 {
				if o.SortDescending {
					return -c
				}
				return c
			}
		}
		return 0
	})
	return Table{Columns: t.Columns, Rows: rows}, nil
}

func compareValues(a, b any) int {
	x, xok := number(a)
	y, yok := number(b)
	if xok && yok {
		return cmp.Compare(x, y)
	}
	return strings.Compare(text(a), text(b))
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// fitTable wraps cells so the table's lines fit in width columns (0: no
// limit): the widest column gives way first, down to minColumnWidth, as
// cliff does; a table that cannot fit is printed as narrow as it gets.
func fitTable(header []string, rows [][]string, width int) {
	n := len(header)
	if width <= 0 || n == 0 {
		return
	}
	widths := make([]int, n)
	measure := func(r []string) {
		for i, c := range r {
			widths[i] = max(widths[i], runewidth.StringWidth(c))
		}
	}
	measure(header)
	for _, r := range rows {
		measure(r)
	}
	avail := width - (3*n + 1) // "| " before each cell, " " after, and the last "|"
	total := 0
	for _, w := range widths {
		total += w
	}
	for total > avail {
		i := 0
		for j, w := range widths {
			if w > widths[i] {
				i = j
			}
		}
		if widths[i] <= minColumnWidth {
			break
		}
		widths[i]--
		total--
	}
	for i := range header {
		header[i] = wrapText(header[i], widths[i])
	}
	for _, r := range rows {
		for i := range r {
			r[i] = wrapText(r[i], widths[i])
		}
	}
}

// wrapText breaks s into lines of at most width columns, at spaces where
// it can and inside a word where it must.
func wrapText(s string, width int) string {
	if runewidth.StringWidth(s) <= width {
		return s
	}
	var lines []string
	line, lw := "", 0
	for _, word := range strings.Fields(s) {
		ww := runewidth.StringWidth(word)
		switch {
		case lw > 0 && lw+1+ww <= width:
			line, lw = line+" "+word, lw+1+ww
			continue
		case lw > 0:
			lines = append(lines, line)
		}
		line, lw = "", 0
		for _, r := range word {
			rw := runewidth.RuneWidth(r)
			if lw+rw > width && lw > 0 {
				lines = append(lines, line)
				line, lw = "", 0
			}
			line, lw = line+string(r), lw+rw
		}
	}
	return strings.Join(append(lines, line), "\n")
}
