package host

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunnerRefusesShells: the real runner starts no shell, whatever argv.
func TestRunnerRefusesShells(t *testing.T) {
	r := &ExecRunner{}
	for _, name := range []string{"sh", "/bin/sh", "bash", "/usr/bin/bash", "dash", "busybox", "zsh"} {
		_, err := r.Run(context.Background(), Command{Name: name, Args: []string{"-c", "touch /tmp/brick-shell-ran"}})
		require.True(t, errors.Is(err, ErrShell), "%s: %v", name, err)
		require.Equal(t, -1, ExitCodeOf(err))
	}
	for _, name := range []string{"iscsiadm", "/sbin/multipath", "shred", "bashful"} {
		require.False(t, IsShell(name), name)
	}
}
