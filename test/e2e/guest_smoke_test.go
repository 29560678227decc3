//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/brick-storage/brick/internal/testbed/guest"
)

// runGuest boots a guest for a smoke test and logs the timings the test bed
// documents.
func runGuest(t *testing.T, opts guest.Options) (*guest.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	res, err := guest.Run(ctx, opts)
	if res != nil {
		t.Logf("guest %s: wall %v, boot %v, script %v, exit %d",
			res.KernelVersion, res.Duration.Round(time.Millisecond), res.Boot.Round(time.Millisecond),
			res.ScriptTime.Round(time.Millisecond), res.ExitCode)
	}
	return res, err
}

// TestGuestBoot: the guest boots, runs a script with the caller's
// environment, and both its output and its exit code come back.
func TestGuestBoot(t *testing.T) {
	share := t.TempDir()
	res, err := runGuest(t, guest.Options{
		Script: `
echo "hello from $(uname -r) as $(id -u) on $(hostname)"
echo "env=$SMOKE_VALUE"
echo artifact >"$BRICK_SHARE/artifact"
echo to-stderr >&2
exit 7
`,
		Env:      map[string]string{"SMOKE_VALUE": `it's "quoted" $HOME`},
		ShareDir: share,
		Timeout:  time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Output)
	for _, want := range []string{
		"hello from " + res.KernelVersion + " as 0 on " + guest.Hostname,
		`env=it's "quoted" $HOME`,
		"to-stderr",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if res.ExitCode != 7 {
		t.Errorf("exit code = %d, want 7", res.ExitCode)
	}
}
