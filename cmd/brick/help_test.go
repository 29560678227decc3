package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHelpShowsWhatMatters: --help lists a command's own flags and the few
// every user needs and says where the rest are; --help-all lists them all.
func TestHelpShowsWhatMatters(t *testing.T) {
	tests := []struct {
		args          []string
		most          int
		shown, hidden []string
	}{
		{[]string{"local-attach"}, 40, []string{"--mountpoint", "--mkfs ", "--os-cloud", "--format", "--help-all shows"}, []string{"--os-password", "--rbd-driver", "--iscsi-login-timeout", "--host-root"}},
		{[]string{"local-detach"}, 40, []string{"--force", "--os-cloud"}, []string{"--iscsi-command-timeout", "--os-auth-url"}},
		{[]string{"ironic", "connector", "list"}, 40, []string{"--node", "--os-cloud"}, []string{"--ironic-endpoint", "--cinder-endpoint"}},
	}
	for _, tt := range tests {
		code, out, _ := runVolumeCmd(t, append(tt.args, "--help")...)
		require.Equal(t, 0, code, tt.args)
		require.LessOrEqual(t, strings.Count(out, "\n"), tt.most, "%v:\n%s", tt.args, out)
		for _, s := range tt.shown {
			require.Contains(t, out, s, tt.args)
		}
		for _, s := range tt.hidden {
			require.NotContains(t, out, s, tt.args)
		}
		code, all, _ := runVolumeCmd(t, append(tt.args, "--help-all")...)
		require.Equal(t, 0, code, tt.args)
		require.Greater(t, len(all), len(out), tt.args)
	}
}

// TestIrrelevantFlagsUnlisted: even --help-all leaves out what a command
// never uses (it still accepts it, so one set of flags fits all commands).
func TestIrrelevantFlagsUnlisted(t *testing.T) {
	tests := []struct {
		args   []string
		absent []string
	}{
		{[]string{"ironic", "connector", "list"}, []string{"--cinder-endpoint", "--os-volume-api-version"}},
		{[]string{"ironic", "boot-from-volume"}, []string{"--rbd-driver", "--nfs-mount-base", "--nvme-portal-timeout", "--fc-device-timeout", "--as-block"}},
		{[]string{"connect"}, []string{"--rbd-unmap-timeout"}},
		{[]string{"get-volume-paths"}, []string{"--iscsi-login-timeout"}},
	}
	for _, tt := range tests {
		code, out, _ := runVolumeCmd(t, append(tt.args, "--help-all")...)
		require.Equal(t, 0, code, tt.args)
		for _, s := range tt.absent {
			require.NotContains(t, out, s+" ", tt.args)
		}
	}
}

// TestHelpTopics: brick help auth / tuning / exit-status, and an unknown
// topic is a usage error.
func TestHelpTopics(t *testing.T) {
	for topic, want := range map[string][]string{
		"auth":        {"--os-password", "--cinder-endpoint", "--ironic-endpoint", "OS_*"},
		"tuning":      {"--rbd-driver", "--iscsi-login-timeout", "--nvme-device-timeout", "--multipath-flush-timeout"},
		"exit-status": {"  0  success", "  1  the operation failed", "  2  usage error"},
	} {
		code, out, _ := runVolumeCmd(t, "help", topic)
		require.Equal(t, 0, code, topic)
		for _, w := range want {
			require.Contains(t, out, w, topic)
		}
	}
	code, out, _ := runVolumeCmd(t, "--help")
	require.Equal(t, 0, code)
	require.Contains(t, out, "\nHelp topics (brick help TOPIC):\n  auth ")
}

// TestExitStatuses: one table, applied everywhere.
func TestExitStatuses(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	root := fixtureHost(t)
	base := []string{"--host-root", root, "--config", "/dev/null"}
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"--help"}, exitOK, ""},
		{[]string{"help", "auth"}, exitOK, ""},
		{[]string{"help", "local-attach"}, exitOK, ""},
		{[]string{"help", "nonexist"}, exitUsage, `brick: unknown help topic "nonexist"`},
		{[]string{"completion", "tcsh"}, exitUsage, `brick: unknown command "tcsh" for "brick completion"`},
		{[]string{"ironic", "nosuch"}, exitUsage, `brick: unknown command "nosuch" for "brick ironic"`},
		{[]string{"nosuch"}, exitUsage, `brick: unknown command "nosuch" for "brick"`},
		{[]string{"list", "--offline", "-f", "xml"}, exitUsage, `brick: unknown output format "xml"`},
		{[]string{"list", "--offline", "-c", "nope"}, exitUsage, `brick: no column "nope"`},
		{[]string{"list", "--offline", "--max-width", "x"}, exitUsage, `brick: --max-width "x": want a whole number`},
		{[]string{"list", "--nosuch"}, exitUsage, "brick: unknown flag: --nosuch"},
	}
	for _, tt := range tests {
		code, _, errs := runVolumeCmd(t, append(base, tt.args...)...)
		require.Equal(t, tt.code, code, "%v: %s", tt.args, errs)
		require.True(t, strings.HasPrefix(errs, tt.err), "%v: %q", tt.args, errs)
		if tt.err != "" {
			require.NotContains(t, errs, "strconv.")
		}
	}
}

func TestExitStatusTableDocumented(t *testing.T) {
	text := exitStatusText()
	for _, code := range []int{exitOK, exitError, exitUsage} {
		require.Equal(t, code, exitStatuses[code].code, "the table is in order")
		require.Contains(t, text, "  "+string(rune('0'+code))+"  ")
	}
}
