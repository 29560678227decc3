package output

import (
	"bytes"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
)

// writeTable draws an openstackclient-style table in box-drawing
// characters: cells left-aligned and trimmed, headers as given (no
// upper-casing), a cell of several lines as several lines. Cells are
// fitted to width first (0: no limit), so tablewriter wraps nothing.
func writeTable(w io.Writer, header []string, rows [][]string, width int) error {
	for i, h := range header {
		header[i] = expandTabs(h)
	}
	for _, r := range rows {
		for i, c := range r {
			r[i] = expandTabs(c)
		}
	}
	fitTable(header, rows, width)
	var b bytes.Buffer
	t := tablewriter.NewWriter(&b)
	t.SetAutoFormatHeaders(false)
	t.SetAutoWrapText(false)
	t.SetHeaderAlignment(tablewriter.ALIGN_LEFT)
	t.SetAlignment(tablewriter.ALIGN_LEFT)
	t.SetCenterSeparator("┼")
	t.SetColumnSeparator("│")
	t.SetRowSeparator("─")
	t.SetHeader(evenLines(header, len(header)))
	t.SetHeaderLine(len(rows) > 0)
	for _, r := range rows {
		t.Append(dropBlankLines(evenLines(r, len(header))))
	}
	t.Render()
	_, err := w.Write(boxCorners(b.Bytes()))
	return err
}

// evenLines trims each of n cells (missing cells are empty) and gives
// them all as many lines as the tallest: tablewriter pads a shorter cell
// with lines two columns wide, which overflow a column one wide.
func evenLines(cells []string, n int) []string {
	out := make([]string, n)
	height := 1
	for i := range out {
		if i < len(cells) {
			out[i] = strings.TrimSpace(cells[i])
		}
		height = max(height, strings.Count(out[i], "\n")+1)
	}
	for i, c := range out {
		out[i] = c + strings.Repeat("\n", height-1-strings.Count(c, "\n"))
	}
	return out
}

// dropBlankLines leaves out the lines after a row's first that are blank
// in every cell: they would only stretch the row.
func dropBlankLines(cells []string) []string {
	if len(cells) == 0 {
		return cells
	}
	lines := make([][]string, len(cells))
	for i, c := range cells {
		lines[i] = strings.Split(c, "\n")
	}
	keep := make([][]string, len(cells))
	for j := range lines[0] {
		blank := j > 0
		for i := range lines {
			blank = blank && strings.TrimSpace(lines[i][j]) == ""
		}
		for i := range lines {
			if !blank {
				keep[i] = append(keep[i], lines[i][j])
			}
		}
	}
	for i := range cells {
		cells[i] = strings.Join(keep[i], "\n")
	}
	return cells
}

// boxCorners gives tablewriter's rules their box-drawing corners and
// tees: it draws every junction as one character. Rules are the lines
// that start with it (a row starts with "│").
func boxCorners(table []byte) []byte {
	lines := bytes.SplitAfter(table, []byte("\n"))
	last := len(lines) - 1
	for last > 0 && len(lines[last]) == 0 {
		last--
	}
	for i, l := range lines[:last+1] {
		if !bytes.HasPrefix(l, []byte("┼")) {
			continue
		}
		left, mid, right := "├", "┼", "┤"
		switch i {
		case 0:
			left, mid, right = "┌", "┬", "┐"
		case last:
			left, mid, right = "└", "┴", "┘"
		}
		s := strings.TrimSuffix(string(l), "\n")
		s = strings.TrimSuffix(strings.TrimPrefix(s, "┼"), "┼")
		lines[i] = []byte(left + strings.ReplaceAll(s, "┼", mid) + right + "\n")
	}
	return bytes.Join(lines, nil)
}

// expandTabs turns each tab into eight spaces: tablewriter counts a tab as
// one column, which would break the borders.
func expandTabs(s string) string { return strings.ReplaceAll(s, "\t", "        ") }
