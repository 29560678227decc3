package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCliffWidthVariables: cliff's CLIFF_MAX_TERM_WIDTH and CLIFF_FIT_WIDTH
// work as in openstackclient; BRICK_MAX_WIDTH and --max-width win.
func TestCliffWidthVariables(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	root := fixtureHost(t)
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		width int // the width tables are fitted to; 0: not fitted
	}{
		{"none", nil, nil, 0},
		{"CLIFF_MAX_TERM_WIDTH", map[string]string{"CLIFF_MAX_TERM_WIDTH": "40"}, nil, 40},
		{"BRICK_MAX_WIDTH wins", map[string]string{"CLIFF_MAX_TERM_WIDTH": "40", "BRICK_MAX_WIDTH": "50"}, nil, 50},
		{"flag wins", map[string]string{"CLIFF_MAX_TERM_WIDTH": "40"}, []string{"--max-width", "45"}, 45},
		{"CLIFF_FIT_WIDTH", map[string]string{"CLIFF_FIT_WIDTH": "1", "COLUMNS": "42"}, nil, 42},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			a := newApp(io.Discard, io.Discard)
			args := append([]string{"--host-root", root, "--config", "/dev/null", "get-connector"}, tt.args...)
			require.Equal(t, 0, runApp(t.Context(), a, args))
			require.Equal(t, tt.width, a.out.Width())
		})
	}
}
