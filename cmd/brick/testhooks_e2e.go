//go:build e2e

package main

import (
	"context"
	"os"
	"syscall"

	"github.com/brick-storage/brick/rollback"
)

// crashEnv names the testing aid that makes brick SIGKILL itself just
// before a local-attach/local-detach step (see attach.Step*), so tests can
// prove that `brick cleanup` repairs any interruption. Only the binary the
// end-to-end suite builds (go build -tags e2e) has it.
const crashEnv = "BRICK_TEST_CRASH_AT"

// testHooks arms BRICK_TEST_CRASH_AT on the operation's context.
func (a *app) testHooks(ctx context.Context) context.Context {
	step := os.Getenv(crashEnv)
	if step == "" {
		return ctx
	}
	return rollback.WithTrace(ctx, func(s string) {
		if s == step {
			a.logger.Warn("testing aid: killing myself", "env", crashEnv, "step", s)
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	})
}
