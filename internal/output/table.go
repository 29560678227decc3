package output

import (
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
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
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	)
	hdr := make([]any, len(header))
	for i, h := range header {
		hdr[i] = h
	}
	t.Header(hdr...)
	for _, r := range rows {
		cells := make([]string, len(header))
		for i := range cells {
			if i < len(r) {
				cells[i] = r[i]
			}
		}
		if err := t.Append(cells); err != nil {
			return err
		}
	}
	return t.Render()
}

// expandTabs turns each tab into eight spaces: tablewriter counts a tab as
// one column, which would break the borders.
func expandTabs(s string) string { return strings.ReplaceAll(s, "\t", "        ") }
