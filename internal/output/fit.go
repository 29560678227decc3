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
	keys, err := o.selectColumns(t.Columns, t.keys(), o.SortColumns)
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
	t.Rows = rows
	return t, nil
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
	case gib:
		return n.gib(), true
	}
	return 0, false
}

// fitTable wraps cells so the table's lines fit in width columns (0: no
// limit): the widest column gives way first, down to minColumnWidth or its
// longest identifier, as cliff does; a table that cannot fit is printed as
// narrow as it gets.
func fitTable(header []string, rows [][]string, width int) {
	n := len(header)
	if width <= 0 || n == 0 {
		return
	}
	widths, floors := make([]int, n), make([]int, n)
	for _, r := range append([][]string{header}, rows...) {
		for i, c := range r[:min(len(r), n)] {
			widths[i] = max(widths[i], runewidth.StringWidth(c))
			floors[i] = max(floors[i], longestIdentifier(c))
		}
	}
	for i := range floors {
		floors[i] = max(floors[i], min(widths[i], minColumnWidth))
	}
	avail := width - (3*n + 1) // "│ " before each cell, " " after, and the last "│"
	total := 0
	for _, w := range widths {
		total += w
	}
	for total > avail {
		i := -1
		for j, w := range widths {
			if w > floors[j] && (i < 0 || w > widths[i]) {
				i = j
			}
		}
		if i < 0 {
			break
		}
		widths[i]--
		total--
	}
	for _, r := range append([][]string{header}, rows...) {
		for i := range r[:min(len(r), n)] {
			r[i] = wrapText(r[i], widths[i])
		}
	}
}

// wrapText breaks each line of s into lines of at most width columns, at
// spaces where it can and inside a word where it must, but never inside
// an identifier (a word wider than width stays whole).
func wrapText(s string, width int) string {
	if runewidth.StringWidth(s) <= width {
		return s
	}
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		lines = append(lines, wrapLine(l, width)...)
	}
	return strings.Join(lines, "\n")
}

func wrapLine(s string, width int) []string {
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
		if identifier(word) {
			line, lw = word, ww
			continue
		}
		for _, r := range word {
			rw := runewidth.RuneWidth(r)
			if lw+rw > width && lw > 0 {
				lines = append(lines, line)
				line, lw = "", 0
			}
			line, lw = line+string(r), lw+rw
		}
	}
	return append(lines, line)
}

// identifier reports whether a word is an identifier a table must not
// break, so it can be copied whole: an IQN or NQN, a WWN, a UUID, a path,
// a portal, a name. Such words hold only letters, digits and . : / _ - @
// (a list's comma after it aside); JSON or prose has other characters.
func identifier(word string) bool {
	word = strings.TrimRight(word, ",;")
	if word == "" {
		return false
	}
	for _, r := range word {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune(".:/_-@[]", r):
		default:
			return false
		}
	}
	return true
}

// longestIdentifier is the width of the widest identifier in s.
func longestIdentifier(s string) int {
	w := 0
	for _, word := range strings.Fields(s) {
		if identifier(word) {
			w = max(w, runewidth.StringWidth(word))
		}
	}
	return w
}
