package policy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// mdLink is a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingSlug is the anchor GitHub gives a heading.
func headingSlug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors lists the heading anchors of a Markdown text.
func anchors(text string) map[string]bool {
	a := map[string]bool{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(line, "#") {
			a[headingSlug(strings.TrimLeft(line, "#"))] = true
		}
	}
	return a
}

// TestDocLinks checks that every relative link of the README and docs/
// names a file that exists and, with #anchor, a heading it has.
func TestDocLinks(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	for _, doc := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		text, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, m := range mdLink.FindAllStringSubmatch(string(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := doc
			if file != "" {
				path = filepath.Join(filepath.Dir(doc), file)
			}
			rel, _ := filepath.Rel(root, doc)
			info, err := os.Stat(path)
			if err != nil {
				t.Errorf("%s links to %s, which does not exist", rel, target)
				continue
			}
			if anchor == "" || info.IsDir() {
				continue
			}
			linked, err := os.ReadFile(path)
			require.NoError(t, err)
			if !anchors(string(linked))[anchor] {
				t.Errorf("%s links to %s: no heading has the anchor #%s", rel, target, anchor)
			}
		}
	}
}

// TestReadmeDesignTable checks that the README's Design table says what
// allowedImports enforces, package by package.
func TestReadmeDesignTable(t *testing.T) {
	text, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, design, ok := strings.Cut(string(text), "\n## Design\n")
	require.True(t, ok, "README.md has a Design section")
	got := map[string][]string{}
	for _, line := range strings.Split(design, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 4 || !strings.Contains(cells[1], "`") || strings.Contains(cells[1], "cmd/brick") {
			continue
		}
		var deps []string
		if d := strings.TrimSpace(cells[2]); d != "nothing" {
			for _, dep := range strings.Split(d, ",") {
				deps = append(deps, strings.TrimSpace(dep))
			}
		}
		for _, pkg := range strings.Split(cells[1], ",") {
			got[strings.Trim(strings.TrimSpace(pkg), "`")] = deps
		}
	}
	require.Equal(t, len(allowedImports), len(got), "the README's Design table lists every package of allowedImports, once")
	for pkg, want := range allowedImports {
		require.ElementsMatch(t, want, got[pkg], "README's Design table, package %s", pkg)
	}
}
