// Package hostile holds the hostile connection-info values that every
// protocol's tests feed to its connector, and the check that each one is
// refused before any command runs. It is a test helper: brick never
// imports it.
package hostile

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host/hosttest"
)

// Huge is a value far over every length limit.
var Huge = strings.Repeat("A", 1<<16)

// Shell holds shell metacharacter payloads: harmless only if nothing ever
// hands them to a shell or takes them for part of a path or option.
var Shell = []string{"x;reboot", "$(reboot)", "`reboot`", "x|reboot", "x&&reboot", "x\nreboot", "x>/etc/passwd", "x y"}

// WrongTypes are JSON values of every type but a string.
var WrongTypes = []any{42, 1.5, true, []any{"x"}, map[string]any{"a": "b"}}

// Case is one hostile connection info: Base with Key set to Value (or
// deleted when Delete), expected to be refused with an error naming Key.
type Case struct {
	Name  string
	Key   string
	Value any
	// WantKey is the key the error must name (Key when empty), e.g.
	// "target_portals[1]".
	WantKey string
}

// Build returns base with the case applied, passed through JSON so numbers
// and NUL bytes arrive as they do from Cinder.
func (c Case) Build(t testing.TB, base map[string]any) connector.ConnectionInfo {
	t.Helper()
	m := map[string]any{}
	for k, v := range base {
		m[k] = v
	}
	m[c.Key] = c.Value
	raw, err := json.Marshal(m)
	require.NoError(t, err)
	ci, err := connector.ParseConnectionInfo(raw)
	require.NoError(t, err, "the JSON document itself is well formed")
	return ci
}

// Strings makes one case per value for key.
func Strings(key string, values ...any) []Case {
	out := make([]Case, 0, len(values))
	for _, v := range values {
		out = append(out, Case{Name: key + "=" + short(v), Key: key, Value: v})
	}
	return out
}

// Common returns the cases every string key gets: shell payloads, NUL,
// a huge value, wrong types, option injection.
func Common(key string) []Case {
	vals := []any{"x\x00y", Huge, "-o", "--help"}
	for _, s := range Shell {
		vals = append(vals, s)
	}
	vals = append(vals, WrongTypes...)
	return Strings(key, vals...)
}

func short(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 24 {
		s = s[:24] + "..."
	}
	return s
}

// Op is one connector entry point under test.
type Op struct {
	Name string
	Run  func(ctx context.Context, ci connector.ConnectionInfo) error
}

// Ops returns Connect, Disconnect (no device), Disconnect --force and
// DevicePaths of c.
func Ops(c connector.Connector) []Op {
	return []Op{
		{"connect", func(ctx context.Context, ci connector.ConnectionInfo) error { _, err := c.Connect(ctx, ci); return err }},
		{"disconnect", func(ctx context.Context, ci connector.ConnectionInfo) error {
			return c.Disconnect(ctx, ci, nil, connector.DisconnectOptions{})
		}},
		{"disconnect-force", func(ctx context.Context, ci connector.ConnectionInfo) error {
			return c.Disconnect(ctx, ci, nil, connector.DisconnectOptions{Force: true})
		}},
		{"device-paths", func(ctx context.Context, ci connector.ConnectionInfo) error {
			_, err := c.DevicePaths(ctx, ci)
			return err
		}},
	}
}

// Check runs every case through every op: each must fail with an error
// that wraps connector.ErrInvalid, names the key, repeats none of secrets,
// and no command may have run. It returns how many (case, op) pairs were
// refused.
func Check(t *testing.T, base map[string]any, cases []Case, newConn func(t *testing.T) (connector.Connector, *hosttest.Runner), secrets ...string) int {
	t.Helper()
	n := 0
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			ci := tc.Build(t, base)
			want := tc.WantKey
			if want == "" {
				want = tc.Key
			}
			conn, runner := newConn(t)
			for _, op := range Ops(conn) {
				err := op.Run(context.Background(), ci)
				require.Error(t, err, "%s accepted %s", op.Name, tc.Name)
				require.True(t, errors.Is(err, connector.ErrInvalid), "%s: %v does not wrap ErrInvalid", op.Name, err)
				require.Contains(t, err.Error(), `"`+want, "%s: the error names the key", op.Name)
				for _, s := range secrets {
					require.NotContains(t, err.Error(), s, "%s: the error repeats a secret", op.Name)
				}
				require.Empty(t, runner.Calls(), "%s: commands ran for hostile input", op.Name)
				n++
			}
		})
	}
	return n
}
