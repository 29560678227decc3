package progress

import (
	"testing"
	"unicode"

	"github.com/mattn/go-runewidth"
	"github.com/stretchr/testify/require"
)

// TestRuneWidthMatchesRunewidth: RuneWidth replaced go-runewidth (still a
// test-only dependency). They agree on every rune but combining marks and
// format characters outside the few blocks go-runewidth lists (it counts
// them 1 column, glibc's wcwidth and RuneWidth 0), and a handful of others.
func TestRuneWidthMatchesRunewidth(t *testing.T) {
	c := runewidth.NewCondition()
	c.EastAsianWidth = false
	var other []rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		ours, theirs := RuneWidth(r), c.RuneWidth(r)
		if ours == theirs || ours == 0 && theirs == 1 && unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me, unicode.Cf) {
			continue
		}
		other = append(other, r)
	}
	require.LessOrEqual(t, len(other), 24, "%U", other)
	for _, s := range []string{"volume-1 in-use", "äöü ñ ß €", "日本語のボリューム", "한국어", "ｆｕｌｌ", "e\u0301", "a\u200bb", "\u00ad"} {
		require.Equal(t, c.StringWidth(s), TextWidth(s), "%q", s)
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		s    string
		w    int
		want string
	}{
		{"attaching volume-1", 40, "attaching volume-1"},
		{"attaching volume-1", 10, "attaching…"},
		{"日本語のボリューム", 7, "日本語…"},
		{"日本語のボリューム", 8, "日本語…"},
		{"abc", 0, "…"},
	} {
		require.Equal(t, runewidth.Truncate(tc.s, tc.w, "…"), Truncate(tc.s, tc.w, "…"), "%q %d", tc.s, tc.w)
		require.Equal(t, tc.want, Truncate(tc.s, tc.w, "…"), "%q %d", tc.s, tc.w)
	}
}
