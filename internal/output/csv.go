package output

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
)

// The --quote modes of cliff's csv formatter; nonnumeric is its default.
const (
	QuoteNonnumeric = "nonnumeric"
	QuoteMinimal    = "minimal"
	QuoteAll        = "all"
	QuoteNone       = "none"
)

var QuoteModes = []string{QuoteNonnumeric, QuoteMinimal, QuoteAll, QuoteNone}

// writeCSV prints a header row and the rows, each value rendered as in a
// table (control characters escaped) and quoted as cliff's --quote mode.
func writeCSV(w io.Writer, header []string, rows [][]any, mode string) error {
	if mode == QuoteMinimal {
		return writeMinimalCSV(w, header, rows)
	}
	var b strings.Builder
	line := func(vals []any) {
		for i, v := range vals {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(csvField(v, mode))
		}
		b.WriteByte('\n')
	}
	head := make([]any, len(header))
	for i, h := range header {
		head[i] = h
	}
	line(head)
	for _, r := range rows {
		line(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// csvField quotes like Python's csv module: nonnumeric quotes every Field
// that is not a number (None too), none escapes with a backslash instead.
func csvField(v any, mode string) string {
	s := Cell(v)
	_, isNumber := number(v)
	if _, ok := v.(fmt.Stringer); ok { // printed as its text ("2 GiB")
		isNumber = false
	}
	if _, isBool := v.(bool); isBool { // a Python bool is a number
		isNumber = true
	}
	switch {
	case mode == QuoteNone:
		return strings.NewReplacer(`\`, `\\`, `,`, `\,`, `"`, `\"`, "\n", "\\\n").Replace(s)
	case mode == QuoteAll || !isNumber:
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

func writeMinimalCSV(w io.Writer, header []string, rows [][]any) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, r := range rows {
		rec := make([]string, len(r))
		for i, v := range r {
			rec[i] = Cell(v)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
