package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPrintRecord(t *testing.T) {
	r := record{{"ip", "10.0.2.15"}, {"multipath", false}, {"wwpns", []string{"a", "b"}}, {"system uuid", "u-1"}, {"empty", []string(nil)}}
	tests := []struct {
		format  string
		columns []string
		want    string
	}{
		{formatJSON, nil, "{\n  \"ip\": \"10.0.2.15\",\n  \"multipath\": false,\n  \"wwpns\": [\n    \"a\",\n    \"b\"\n  ],\n  \"system uuid\": \"u-1\",\n  \"empty\": []\n}\n"},
		{formatYAML, []string{"multipath", "ip"}, "multipath: false\nip: 10.0.2.15\n"},
		{formatValue, []string{"IP", "system_uuid"}, "10.0.2.15\nu-1\n"},
		{formatShell, []string{"system uuid", "wwpns"}, "system_uuid='u-1'\nwwpns='a, b'\n"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, outputOptions{Format: tt.format, Columns: tt.columns}.printRecord(&b, r))
			require.Equal(t, tt.want, b.String())
		})
	}
	var b bytes.Buffer
	require.NoError(t, outputOptions{Format: formatTable}.printRecord(&b, r))
	require.Contains(t, b.String(), "Field")
	require.Contains(t, b.String(), "10.0.2.15")

	err := outputOptions{Format: formatJSON, Columns: []string{"nope"}}.printRecord(&b, r)
	require.ErrorContains(t, err, `no column "nope"`)
	require.Error(t, outputOptions{Format: "xml"}.validate())
}

func TestPrintTable(t *testing.T) {
	tb := table{Columns: []string{"UUID", "Node UUID", "Type"}, Rows: [][]any{{"u1", "n1", "iqn"}, {"u2", "n1", "wwpn"}}}
	var b bytes.Buffer
	require.NoError(t, outputOptions{Format: formatJSON, Columns: []string{"uuid", "type"}}.printTable(&b, tb))
	require.JSONEq(t, `[{"UUID":"u1","Type":"iqn"},{"UUID":"u2","Type":"wwpn"}]`, b.String())
	b.Reset()
	require.NoError(t, outputOptions{Format: formatValue}.printTable(&b, tb))
	require.Equal(t, "u1 n1 iqn\nu2 n1 wwpn\n", b.String())
	b.Reset()
	require.NoError(t, outputOptions{Format: formatTable}.printTable(&b, tb))
	require.Contains(t, b.String(), "Node UUID")
	require.Error(t, outputOptions{Format: formatShell}.printTable(&b, tb))
	b.Reset()
	require.NoError(t, outputOptions{Format: formatJSON}.printTable(&b, table{Columns: []string{"A"}}))
	require.Equal(t, "[]\n", b.String())
}

// Values from Cinder or Ironic cannot drive the terminal, forge lines or
// run code when shell output is eval'ed.
func TestOutputEscapesHostileValues(t *testing.T) {
	hostile := "vol\x1b[2J\nbrick: fake line\r\u009b31m\x00$(touch /tmp/pwned)`id`'q'"
	r := record{{"name", hostile}}
	tests := []struct {
		format string
		want   string
	}{
		{formatValue, `vol\x1b[2J\x0abrick: fake line\x0d\u009b31m\x00$(touch /tmp/pwned)` + "`id`'q'\n"},
		{formatShell, `name='vol` + "\x1b[2J\nbrick: fake line\r\u009b31m" + `$(touch /tmp/pwned)` + "`id`" + `'\''q'\'''` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, outputOptions{Format: tt.format}.printRecord(&b, r))
			require.Equal(t, tt.want, b.String())
		})
	}
	for _, f := range []string{formatTable, formatValue} {
		var b bytes.Buffer
		require.NoError(t, outputOptions{Format: f}.printTable(&b, table{Columns: []string{"Name"}, Rows: [][]any{{hostile}}}))
		require.NotContains(t, b.String(), "\x1b", f)
		require.NotContains(t, b.String(), "\r", f)
		require.NotContains(t, b.String(), "\u009b", f)
		require.NotContains(t, b.String(), "\nbrick: fake", f)
	}
}
