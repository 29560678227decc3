//go:build e2e

package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDemo runs make demo's program (test/demo) as a newcomer's first
// command would, after the install: brick's main job in the guest with
// brick's own output at each step, and the volume available again after.
// It asks for Cinder with the demo's settings first, so the demo reuses
// the suite's Cinder instead of waiting to restart it.
func TestDemo(t *testing.T) {
	lane(t, laneServices)
	ctx := testContext(t)
	needCinder(t, guestCinderOptions)
	brick := buildBrick(t)
	start := time.Now()
	out, err := exec.CommandContext(ctx, "go", "run", "../demo", "-brick", brick, "-timeout", "10m").CombinedOutput()
	t.Logf("demo output (%v):\n%s", time.Since(start).Round(time.Second/10), out)
	require.NoError(t, err, "the demo failed")
	text := string(out)
	for _, want := range []string{
		"Cinder ready at", "### 1. this host's connector", "initiator", "iqn.",
		"### 2. attach volume", "### 3. write through", "hello from brick",
		"### 4. what brick has attached here", "### 5. detach", "Cinder says volume",
	} {
		require.Contains(t, text, want)
	}
	require.True(t, strings.Contains(text, "is available again"), "the volume is available after the demo")
}
