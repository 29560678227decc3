//go:build !e2e

package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/rollback"
)

// The shipped binary ignores BRICK_TEST_CRASH_AT: no step trace is armed.
func TestNoCrashHookInShippedBinary(t *testing.T) {
	t.Setenv("BRICK_TEST_CRASH_AT", "reserve")
	a := &app{}
	ctx := a.testHooks(context.Background())
	require.Equal(t, context.Background(), ctx)
	rollback.Trace(ctx, "reserve") // would SIGKILL the test binary if armed
}
