package progress

import (
	"unicode"

	"golang.org/x/text/width"
)

// RuneWidth is the number of terminal columns r takes: 0 for control
// characters, combining marks and other zero-width runes, 2 for East Asian
// wide and fullwidth runes, else 1. It agrees with go-runewidth (whose
// package initialisers every run would pay) for every rune outside a few
// emoji and unassigned ranges; ambiguous-width runes count as 1, as go-runewidth does outside CJK locales.
func RuneWidth(r rune) int {
	switch {
	case r < 0x20 || r > unicode.MaxRune:
		return 0
	case r >= 0x7f && r <= 0x9f || r == 0xad:
		return 0
	case r < 0x300:
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc, unicode.Cf, unicode.Cs):
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// TextWidth is the number of terminal columns s takes.
func TextWidth(s string) int {
	n := 0
	for _, r := range s {
		n += RuneWidth(r)
	}
	return n
}

// Truncate cuts s to at most w columns, ending it with tail when it had to
// cut (tail's columns count in w).
func Truncate(s string, w int, tail string) string {
	if TextWidth(s) <= w {
		return s
	}
	w -= TextWidth(tail)
	n := 0
	for i, r := range s {
		rw := RuneWidth(r)
		if n+rw > w {
			return s[:i] + tail
		}
		n += rw
	}
	return s + tail
}
