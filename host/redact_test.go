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
		{"repeated", []string{"k"}, nil, "kkk", "*********"},
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
