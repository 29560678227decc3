package ident

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clip cuts s to at most n bytes on a rune boundary and marks the cut with
// "...": a server's message or a file's content stays short in an error,
// and stays valid UTF-8.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// IsControl is true for the runes a terminal acts on instead of printing:
// C0 (tab, CR and LF too), DEL and C1.
func IsControl(r rune) bool { return r < 0x20 || r >= 0x7f && r <= 0x9f }

// Line keeps the first line of an untrusted text, without control
// characters or surrounding space, clipped to n bytes: what a message may
// quote of it without flooding or driving the user's terminal.
func Line(s string, n int) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	s = strings.Map(func(r rune) rune {
		if IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, s)
	return Clip(strings.TrimSpace(s), n)
}

// OneLine folds a whole untrusted text (a traceback, an HTML page, a
// joined error) onto one line of at most n bytes: invalid UTF-8 becomes
// "?", and every run of control characters and white space one space.
func OneLine(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	f := strings.FieldsFunc(s, func(r rune) bool { return IsControl(r) || unicode.IsSpace(r) })
	return Clip(strings.Join(f, " "), n)
}

// Escape spells every control character but tab as a Go escape (\x1b for
// C0 and DEL, \u009b for C1), so a value from a server printed to a
// terminal stays visible text and cannot move the cursor or forge a line.
func Escape(s string) string {
	if strings.IndexFunc(s, escaped) < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !escaped(r):
			b.WriteRune(r)
		case r < 0x80:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[r>>4])
			b.WriteByte(hexDigits[r&0xf])
		default:
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[r>>4])
			b.WriteByte(hexDigits[r&0xf])
		}
	}
	return b.String()
}

const hexDigits = "0123456789abcdef"

func escaped(r rune) bool { return r != '\t' && IsControl(r) }
