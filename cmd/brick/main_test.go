package main

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// envRunAsBrick makes the test binary run brick's main instead of the
// tests: a test execs brick's real main without a go build of its own.
const envRunAsBrick = "BRICK_TEST_RUN_AS_BRICK"

func TestMain(m *testing.M) {
	if os.Getenv(envRunAsBrick) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// brickCommand is the brick binary run with args: this test binary, in
// the environment given plus envRunAsBrick.
func brickCommand(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, args...)
	cmd.Env = append(env, envRunAsBrick+"=1")
	return cmd
}
