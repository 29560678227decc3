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

// Line keeps the first line of an untrusted text, without control
// characters or surrounding space, clipped to n bytes: what a message may
// quote of it without flooding or driving the user's terminal.
func Line(s string, n int) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, s)
	return Clip(strings.TrimSpace(s), n)
}
