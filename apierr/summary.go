package apierr

import (
	"html"
	"regexp"
	"strings"
	"sync"

	"github.com/brick-storage/brick/ident"
)

// traceback starts a Python traceback: an OpenStack service in debug
// mode appends one to its message.
const traceback = "Traceback (most recent call last)"

// Message is what an error line quotes of a server's message: its first
// line, before any traceback, without control characters, clipped to n
// bytes.
func Message(s string, n int) string {
	if i := strings.Index(s, traceback); i >= 0 {
		s = s[:i]
	}
	return ident.Line(s, n)
}

// Page summarises an HTML page (a proxy's or a web server's error page):
// its title, or else its text without tags, as one line of at most n
// bytes. ok is false for a body that is not HTML.
func Page(body []byte, n int) (title, text string, ok bool) {
	s := string(body)
	lower := strings.ToLower(s)
	m := titleRE().FindStringSubmatch(s)
	if m == nil && !strings.Contains(lower, "<html") && !strings.Contains(lower, "<!doctype") {
		return "", "", false
	}
	if m != nil {
		title = ident.OneLine(html.UnescapeString(m[1]), n)
	}
	if title == "" {
		text = ident.OneLine(html.UnescapeString(StripTags(s)), n)
	}
	return title, text, true
}

var titleRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`) })

var tagRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<[^>]*>`) })

// StripTags replaces every tag with a space: the text of an HTML fragment
// (Ironic's framework puts some in its error descriptions).
func StripTags(s string) string { return tagRE().ReplaceAllString(s, " ") }
