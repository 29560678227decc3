package policy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// uncheckedIndex matches an index into a guest's output that can panic
// when the line is missing or short: a parsed line's words indexed
// directly (g.lines["X"][1]), a split indexed at once
// (strings.Fields(s)[0]), or a string sliced at a separator it may lack
// (s[:strings.LastIndex(s, "-")]). e2e tests read such words through
// guestRun's word/words or firstWord, which fail the test with the output
// instead.
var uncheckedIndex = regexp.MustCompile(`\blines\[[^\]]+\]\[|\b(Fields|Split|SplitN)\([^()]*(\([^()]*\))?[^()]*\)\[[0-9]|\[:strings\.(Last)?Index\w*\([^()]*\)\]|\[strings\.(Last)?Index\w*\([^()]*\):`)

// TestE2EOutputIndexedSafely keeps one test's unexpected guest output from
// ending the whole e2e binary in a panic (and every later test unrun).
func TestE2EOutputIndexedSafely(t *testing.T) {
	files, err := filepath.Glob("../../test/e2e/*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no e2e tests found: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if uncheckedIndex.MatchString(line) {
				t.Errorf("%s:%d indexes guest output unchecked (use g.word/g.words or firstWord): %s", filepath.Base(f), i+1, strings.TrimSpace(line))
			}
		}
	}
}

func TestUncheckedIndexCatches(t *testing.T) {
	for _, bad := range []string{`x := g.lines["A b"][0]`, `strings.Fields(g["DEVICE 1"])[0]`, `strings.Split(out, "\n")[2]`, `tool := f[1][:strings.LastIndex(f[1], "-")]`, `v := s[strings.Index(s, "="):]`} {
		if !uncheckedIndex.MatchString(bad) {
			t.Errorf("not caught: %s", bad)
		}
	}
	for _, ok := range []string{`v := g.lines["A b"]`, `g.word("A b", 0)`, `f := strings.Fields(s); if len(f) > 0 {`, `port := e[strings.LastIndex(e, ":")+1:]`} {
		if uncheckedIndex.MatchString(ok) {
			t.Errorf("caught wrongly: %s", ok)
		}
	}
}
