package host

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
		extra   []string
		in      string
		want    string
	}{
		{"none", nil, nil, "iscsiadm -m node", "iscsiadm -m node"},
		{"registered", []string{"s3cr3t"}, nil, "-v s3cr3t", "-v ***"},
		{"extra", nil, []string{"pw"}, "pw=pw", "***=***"},
		{"longest first", []string{"abc", "abcdef"}, nil, "x abcdef y abc", "x *** y ***"},
		{"empty secret ignored", []string{""}, nil, "keep", "keep"},
		{"repeated", []string{"k"}, nil, "k=k k", "***=*** ***"},
		{"short: not inside a word", []string{"k"}, nil, "kkk", "kkk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRedactor(tt.secrets...)
			require.Equal(t, tt.want, r.Redact(tt.in, tt.extra...))
		})
	}
}

func TestRedactorNilIsSafe(t *testing.T) {
	var r *Redactor
	r.Add("x")
	require.Equal(t, "a *** b", r.Redact("a x b", "x"))
	require.Equal(t, []string{"***"}, r.RedactArgs([]string{"x"}, "x"))
}

// TestRedactNeitherLeaksNorGarbles: short secrets, common-word
// secrets and secrets that are parts of flag names are masked where they
// stand as values, and the rest of the message stays readable, so what
// was masked does not spell the secret out.
func TestRedactNeitherLeaksNorGarbles(t *testing.T) {
	const msg = "--os-auth-type password needs --os-username and --os-password; the Ironic user/password; node.session.auth.password"
	tests := []struct {
		name   string
		secret string
		in     string
		want   string
	}{
		{"one letter, flags intact", "p", msg + " = p", msg + " = ***"},
		{"one letter in key=value and quotes", "p", `auth_password=p "p" 'p' user:p@host`, `auth_password=*** "***" '***' user:***@host`},
		{"substring of a flag name", "auth", msg, msg},
		{"substring of a flag name, as a value", "os", "--os-password os", "--os-password ***"},
		{"common word inside names stays", "password", "--os-password node.session.auth.password os_password", "--os-password node.session.auth.password os_password"},
		{"common word as a value", "password", `{"auth_password": "password"}`, `{"auth_password": "***"}`},
		{"argv element", "pw", "pw", "***"},
		{"in a path", "hunter2", "ls: cannot access '/nonexistent/hunter2'", "ls: cannot access '/nonexistent/***'"},
		{"long secret anywhere", "gAAAAABn0tokenZZZ", "X-Auth-Token:xgAAAAABn0tokenZZZy", "X-Auth-Token:x***y"},
		{"unicode neighbours", "pä", "ëpä pä", "ëpä ***"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRedactor(tt.secret)
			require.Equal(t, tt.want, r.Redact(tt.in))
			require.Equal(t, []string{tt.want}, r.RedactArgs([]string{tt.in}))
		})
	}
}
