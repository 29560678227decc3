//go:build e2e

package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed/guest"
)

// TestGuestSession proves the shared-guest API (guest.Start / Exec / Close)
// that groups of tests can use to pay for one boot: scripts run in turn in
// one guest, each with its own files and environment; what a script starts
// does not outlive it; a script that leaves kernel state (here a dm map)
// fails with ErrLeftovers; a script that overruns its timeout fails with
// ErrTimeout and the session goes on.
func TestGuestSession(t *testing.T) {
	lane(t, laneGuestOnly)
	ctx := testContext(t)
	start := time.Now()
	s, err := guest.Start(ctx, guest.Options{Env: map[string]string{"SESSION_VALUE": "whole session"}})
	require.NoError(t, err)
	t.Logf("session ready in %v (boot)", s.Boot().Round(time.Millisecond))
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = s.Close()
		}
	})
	input := filepath.Join(t.TempDir(), "input.txt")
	require.NoError(t, os.WriteFile(input, []byte("from the host\n"), 0o644))

	exec := func(name string, e guest.Exec) (*guest.Result, error) {
		res, err := s.Exec(ctx, e)
		if res != nil {
			t.Logf("exec %s: wall %v, script %v, exit %d, leftovers %q", name,
				res.Duration.Round(time.Millisecond), res.ScriptTime.Round(time.Millisecond), res.ExitCode, res.Leftovers)
		}
		return res, err
	}

	res, err := exec("first", guest.Exec{
		Script: `echo "env=$SESSION_VALUE/$EXEC_VALUE input=$(cat in/input.txt)"
setsid sleep 1000 </dev/null >/dev/null 2>&1 &
echo started-daemon`,
		Files: map[string]string{input: "in/input.txt"},
		Env:   map[string]string{"EXEC_VALUE": "first"},
	})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode)
	require.Contains(t, string(res.Output), "env=whole session/first input=from the host")
	require.Empty(t, res.Leftovers)

	res, err = exec("second", guest.Exec{Script: `echo "exec=${EXEC_VALUE:-unset}"
if pgrep -x sleep >/dev/null; then echo "daemon survived"; exit 1; fi
exit 3`})
	require.NoError(t, err)
	require.Equal(t, 3, res.ExitCode, "%s", res.Output)
	require.Contains(t, string(res.Output), "exec=unset", "the first script's environment stays with it")

	_, err = exec("leaves a map", guest.Exec{Script: `modprobe dm_mod && dmsetup create --noudevsync brick-leak --table "0 8 zero"`})
	require.ErrorIs(t, err, guest.ErrLeftovers)
	require.Contains(t, err.Error(), "dm map dm-0 brick-leak")

	res, err = exec("cleans the map", guest.Exec{Script: `dmsetup remove --noudevsync brick-leak`})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "%s", res.Output)
	require.Empty(t, res.Leftovers)

	_, err = exec("overruns", guest.Exec{Script: `sleep 60`, Timeout: 2 * time.Second})
	require.ErrorIs(t, err, guest.ErrTimeout)

	res, err = exec("after the timeout", guest.Exec{Script: `echo still-here`})
	require.NoError(t, err)
	require.Equal(t, "still-here", strings.TrimSpace(string(res.Output)))

	require.NoError(t, s.Close())
	closed = true
	_, err = s.Exec(ctx, guest.Exec{Script: "true"})
	require.Error(t, err)
	require.False(t, errors.Is(err, guest.ErrTimeout))
	t.Logf("session of 6 scripts: %v in all", time.Since(start).Round(time.Millisecond))
}
