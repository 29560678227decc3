package host

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestExecRunner(t *testing.T) {
	var logs bytes.Buffer
	red := NewRedactor("hunter2")
	r := &ExecRunner{Logger: slog.New(NewRedactingHandler(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}), red)), Redactor: red}
	ctx := context.Background()

	res, err := r.Run(ctx, Command{Name: "cat", Stdin: []byte("hunter2 via stdin")})
	require.NoError(t, err)
	require.Equal(t, "hunter2 via stdin", string(res.Stdout))

	// ls names the missing paths on stderr and exits 2: a secret in argv
	// and in stderr must both come out masked.
	_, err = r.Run(ctx, Command{Name: "ls", Args: []string{"/nonexistent/hunter2", "/nonexistent/other-secret"}, Secrets: []string{"other-secret"}})
	var ee *ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 2, ee.ExitCode)
	require.Equal(t, 2, ExitCodeOf(err))
	require.NotContains(t, err.Error(), "hunter2")
	require.NotContains(t, err.Error(), "other-secret")
	require.Contains(t, err.Error(), "***")
	require.NotContains(t, logs.String(), "hunter2")
	require.NotContains(t, logs.String(), "other-secret")

	_, err = r.Run(ctx, Command{Name: "ls", Args: []string{"/nonexistent"}, OKExitCodes: []int{2}})
	require.NoError(t, err)

	start := time.Now()
	_, err = r.Run(ctx, Command{Name: "sleep", Args: []string{"60"}, Timeout: 50 * time.Millisecond})
	require.Error(t, err)
	require.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
	require.Less(t, time.Since(start), 20*time.Second, "the timeout, not the sleep")

	_, err = r.Run(ctx, Command{Name: "/nonexistent/brick-no-such-tool"})
	require.Error(t, err)
	require.Equal(t, -1, ExitCodeOf(err))
}

// TestChildEnvironment: a child sees a fixed PATH and the C locale, never
// brick's own environment (passwords, tokens, CEPH_ARGS, a user's PATH).
func TestChildEnvironment(t *testing.T) {
	t.Setenv("OS_PASSWORD", "hunter2")
	t.Setenv("CEPH_ARGS", "--id evil")
	t.Setenv("PATH", t.TempDir()+":"+os.Getenv("PATH"))
	r := &ExecRunner{}
	res, err := r.Run(context.Background(), Command{Name: "env", Env: []string{"EXTRA=1"}})
	require.NoError(t, err)
	got := strings.Fields(string(res.Stdout))
	require.ElementsMatch(t, []string{"PATH=" + ChildPath, "LC_ALL=C", "EXTRA=1"}, got)
}

// TestLookPathIgnoresCallerPATH: a program planted in a directory of the
// caller's PATH is not the one brick runs.
func TestLookPathIgnoresCallerPATH(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "brick-planted"), []byte("#!/bin/true\n"), 0o755))
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	_, err := lookPath("brick-planted")
	require.ErrorIs(t, err, exec.ErrNotFound)
	p, err := lookPath("env")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(p, "/"), p)
}

func TestFindProgram(t *testing.T) {
	h := &Host{Runner: &ExecRunner{}}
	require.NoError(t, h.FindProgram("true"))
	require.ErrorIs(t, h.FindProgram("brick-no-such-program"), exec.ErrNotFound)
	h.Runner = nil
	require.NoError(t, h.FindProgram("brick-no-such-program"), "a test's runner is trusted")
}
