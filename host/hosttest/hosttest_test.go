package hosttest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
)

// recorder is a testing.TB that keeps what Errorf reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}

func TestArgFailsShowingTheCommand(t *testing.T) {
	cmd := host.Command{Name: "mount", Args: []string{"-o", "ro", "src", "/mnt"}}
	for _, tc := range []struct {
		i    int
		want string
		err  string
	}{
		{0, "-o", ""},
		{3, "/mnt", ""},
		{-1, "/mnt", ""},
		{-4, "-o", ""},
		{4, "", "fake: command has no argument 4: mount -o ro src /mnt"},
		{-5, "", "fake: command has no argument -5: mount -o ro src /mnt"},
	} {
		r := &recorder{TB: t}
		require.Equal(t, tc.want, Arg(r, cmd, tc.i), tc.i)
		if tc.err == "" {
			require.Empty(t, r.errs, tc.i)
		} else {
			require.Equal(t, []string{tc.err}, r.errs, tc.i)
		}
	}
	r := &recorder{TB: t}
	require.Empty(t, Arg(r, host.Command{Name: "true"}, -1))
	require.Equal(t, []string{"fake: command has no argument -1: true"}, r.errs)
}

func TestWordFailsShowingTheWords(t *testing.T) {
	r := &recorder{TB: t}
	require.Equal(t, "b", Word(r, []string{"a", "b"}, -1))
	require.Empty(t, r.errs)
	require.Empty(t, Word(r, []string{"a", "b"}, 2))
	require.Equal(t, []string{`fake: no word 2 in ["a" "b"]`}, r.errs)
}
