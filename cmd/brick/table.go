package main

import (
	"io"
	"strings"

	"github.com/brick-storage/brick/progress"
)

// writeTable draws openstackclient-style tables in box-drawing characters,
// as brick drew them with tablewriter before (whose package initialisers,
// with go-runewidth's and uniseg's, every brick run paid for): cells
// trimmed, left-aligned, padded to the widest line of their column,
// several lines where a cell holds several.
func writeTable(w io.Writer, header []string, rows [][]string, width int) error {
	fitTable(header, rows, width)
	head := tableCells(header)
	body := make([][][]string, len(rows))
	widths := make([]int, len(head))
	measure := func(cells [][]string) {
		for i, lines := range cells {
			for _, l := range lines {
				widths[i] = max(widths[i], progress.TextWidth(l))
			}
		}
	}
	measure(head)
	for i, r := range rows {
		body[i] = tableCells(r[:min(len(r), len(head))])
		measure(body[i])
	}
	var b strings.Builder
	tableRule(&b, widths, "┌", "┬", "┐")
	tableRow(&b, widths, head)
	if len(body) > 0 {
		tableRule(&b, widths, "├", "┼", "┤")
	}
	for _, r := range body {
		tableRow(&b, widths, r)
	}
	tableRule(&b, widths, "└", "┴", "┘")
	_, err := io.WriteString(w, b.String())
	return err
}

// tableCells splits each cell into its lines, each trimmed.
func tableCells(row []string) [][]string {
	out := make([][]string, len(row))
	for i, c := range row {
		lines := strings.Split(expandTabs(c), "\n")
		for j, l := range lines {
			lines[j] = strings.TrimSpace(l)
		}
		out[i] = lines
	}
	return out
}

func tableRule(b *strings.Builder, widths []int, left, mid, right string) {
	b.WriteString(left)
	for i, w := range widths {
		if i > 0 {
			b.WriteString(mid)
		}
		b.WriteString(strings.Repeat("─", w+2))
	}
	b.WriteString(right + "\n")
}

// tableRow draws one row, as many lines high as its tallest cell.
func tableRow(b *strings.Builder, widths []int, cells [][]string) {
	height := 1
	for _, c := range cells {
		height = max(height, len(c))
	}
	for line := range height {
		b.WriteString("│")
		for i, w := range widths {
			text := ""
			if i < len(cells) && line < len(cells[i]) {
				text = cells[i][line]
			}
			b.WriteString(" " + text + strings.Repeat(" ", w-progress.TextWidth(text)) + " │")
		}
		b.WriteString("\n")
	}
}
