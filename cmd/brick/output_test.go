package main

import (
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
	"github.com/stretchr/testify/require"
)

// TestCliffWidthVariables: cliff's CLIFF_MAX_TERM_WIDTH and CLIFF_FIT_WIDTH
// work as in openstackclient; BRICK_MAX_WIDTH and --max-width win.
func TestCliffWidthVariables(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	root := fixtureHost(t)
	tests := []struct {
		name string
		env  map[string]string
		args []string
		max  int // widest line allowed; 0: wider than 60 (not fitted)
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
			args := append([]string{"--host-root", root, "--config", "/dev/null", "get-connector"}, tt.args...)
			code, out, errs := runVolumeCmd(t, args...)
			require.Equal(t, 0, code, errs)
			widest := 0
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				widest = max(widest, runewidth.StringWidth(l))
			}
			if tt.max == 0 {
				require.Greater(t, widest, 60)
				return
			}
			require.LessOrEqual(t, widest, tt.max, out)
			require.Greater(t, widest, tt.max-5, "fitted to that width, not narrower")
		})
	}
}
