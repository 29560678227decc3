package host

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
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
	_, err = r.Run(ctx, Command{Name: "sleep", Args: []string{"10"}, Timeout: 50 * time.Millisecond})
	require.Error(t, err)
	require.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
	require.Less(t, time.Since(start), 5*time.Second)

	_, err = r.Run(ctx, Command{Name: "/nonexistent/brick-no-such-tool"})
	require.Error(t, err)
	require.Equal(t, -1, ExitCodeOf(err))
}
