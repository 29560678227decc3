package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/nfs"
	"github.com/brick-storage/brick/host/hosttest"
)

// TestFlagsWhereTheyMeanSomething: auth flags only on cloud commands,
// attach tuning only in attach's help (still accepted by detach).
func TestFlagsWhereTheyMeanSomething(t *testing.T) {
	root := newApp(nil, nil).rootCommand(nil)
	find := func(path ...string) *cobra.Command {
		c, _, err := root.Find(path)
		require.NoError(t, err, path)
		return c
	}
	tests := []struct {
		cmd           []string
		shown, hidden []string
		absent        []string
	}{
		{[]string{"get-connector"}, []string{"multipath", "format", "nic"}, nil, []string{"os-cloud", "cinder-endpoint", "mode"}},
		{[]string{"local-attach"}, []string{"os-cloud", "multipath", "rbd-driver", "fc-device-timeout", "iscsi-login-timeout", "mode", "format"}, []string{"sort-column", "sort-descending"}, nil},
		{[]string{"extend"}, []string{"os-cloud", "size", "format", "multipath-map-timeout"}, []string{"sort-column"}, []string{"multipath", "rbd-driver"}},
		{[]string{"local-detach"}, []string{"os-cloud", "force", "iscsi-command-timeout", "fc-command-timeout", "hostname"}, []string{"multipath", "iscsi-login-timeout", "device-timeout", "rbd-driver", "device-info", "format"}, []string{"mode", "mountpoint"}},
		{[]string{"get-volume-paths"}, []string{"os-cloud", "format", "hostname"}, []string{"multipath", "iscsi-command-timeout"}, []string{"mode"}},
		{[]string{"get-all-volume-paths"}, []string{"protocol", "format"}, []string{"nic"}, []string{"os-cloud"}},
		{[]string{"list"}, []string{"os-cloud", "offline", "sort-column"}, nil, []string{"multipath"}},
		{[]string{"connect"}, []string{"multipath", "rbd-driver", "fc-device-timeout", "format"}, []string{"sort-column"}, []string{"os-cloud"}},
		{[]string{"disconnect"}, []string{"force", "iscsi-command-timeout"}, []string{"multipath", "rbd-map-timeout", "format"}, []string{"os-cloud"}},
		{[]string{"ironic", "connector", "list"}, []string{"os-cloud", "ironic-endpoint", "format", "long"}, nil, nil},
		{[]string{"version"}, []string{"format"}, nil, []string{"os-cloud", "multipath"}},
	}
	for _, tt := range tests {
		c := find(tt.cmd...)
		for _, n := range tt.shown {
			f := c.Flag(n)
			require.NotNil(t, f, "%v --%s", tt.cmd, n)
			require.False(t, f.Hidden, "%v --%s shown", tt.cmd, n)
		}
		for _, n := range tt.hidden {
			f := c.Flag(n)
			require.NotNil(t, f, "%v --%s accepted", tt.cmd, n)
			require.True(t, f.Hidden, "%v --%s hidden", tt.cmd, n)
		}
		for _, n := range tt.absent {
			require.Nil(t, c.Flag(n), "%v --%s absent", tt.cmd, n)
		}
	}
}

// TestExtHabits: python-brick-cinderclient-ext's spellings.
func TestExtHabits(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	root := fixtureHost(t)
	const id = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	hosttest.WriteFile(t, root, "/var/lib/brick/volumes/"+id+".json", `{"version":1,"volume_id":"`+id+`","phase":"attached","step":"done","flow":"v3",
"host_name":"fixture-node","mode":"rw","connector":{},"connection_info":{"driver_volume_type":"iscsi","data":{}},
"device":{"path":"/dev/sdx","type":"block","protocol":"iscsi"},"created_at":"2026-12-02T10:00:00Z","updated_at":"2026-12-02T10:00:00Z"}`)
	base := []string{"--host-root", root, "--config", "/dev/null"}
	tests := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		// The fixture's record has no device to find: a warning naming it
		// shows that the filter let it through.
		{"protocol any case", []string{"get-all-volume-paths", "--protocol", "ISCSI"}, 0, "", "volume " + id},
		{"protocol unknown", []string{"get-all-volume-paths", "--protocol", "scsi"}, 2, "", "--protocol \"scsi\": unknown protocol (use one of:"},
		{"device_info", []string{"local-detach", "v", "--device_info", "{}"}, 2, "", "brick: note: --device-info ignored"},
		{"multipath True", []string{"get-connector", "--multipath", "True", "-f", "value", "-c", "multipath"}, 0, "", ""},
		{"enforce_multipath False", []string{"get-connector", "--enforce_multipath", "False", "-f", "value", "-c", "enforce_multipath"}, 0, "false\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runVolumeCmd(t, append(base, tt.args...)...)
			require.Equal(t, tt.code, code, errs)
			if tt.out != "" {
				require.Equal(t, tt.out, out)
			}
			require.Contains(t, errs, tt.err)
		})
	}
	code, _, errs := runVolumeCmd(t, append(base, "get-all-volume-paths", "--protocol", "nfs")...)
	require.Equal(t, 0, code)
	require.NotContains(t, errs, id, "an iSCSI record is not an nfs one")
}

// TestHelpLengths keeps get-connector's help on one screen.
func TestHelpLengths(t *testing.T) {
	for cmd, most := range map[string]int{"get-connector": 45, "local-detach": 60} {
		code, out, _ := runVolumeCmd(t, cmd, "--help")
		require.Equal(t, 0, code)
		require.LessOrEqual(t, strings.Count(out, "\n"), most, cmd)
	}
}

// TestHelpGroupsCloudFlags: with --help-all the auth flags get a section
// of their own on cloud commands and appear nowhere on get-connector.
func TestHelpGroupsCloudFlags(t *testing.T) {
	tests := []struct {
		args      []string
		wantCloud bool
	}{
		{[]string{"local-attach", "--help-all"}, true},
		{[]string{"ironic", "connector", "list", "--help-all"}, true},
		{[]string{"get-connector", "--help-all"}, false},
		{[]string{"connect", "--help-all"}, false},
	}
	for _, tc := range tests {
		code, out, _ := runVolumeCmd(t, tc.args...)
		require.Equal(t, 0, code, tc.args)
		own, cloud, found := strings.Cut(out, "\nCloud flags")
		require.Equal(t, tc.wantCloud, found, tc.args)
		require.NotContains(t, own, "--os-password", tc.args)
		if found {
			section, _, _ := strings.Cut(cloud, "\n\n")
			require.Contains(t, section, "--os-password", tc.args)
			require.Contains(t, section, "--insecure", tc.args)
		}
	}
}

// TestSettingsErrors: a typo in brick.yaml, a bad BRICK_* or OS_* value
// and a missing --host-root are usage errors that say where and what.
func TestSettingsErrors(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	root := fixtureHost(t)
	dir := t.TempDir()
	cfg := func(body string) string {
		p := filepath.Join(dir, fmt.Sprintf("c%d.yaml", len(body)))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	tests := []struct {
		name   string
		env    map[string]string
		config string
		args   []string
		code   int
		want   string
	}{
		{"unknown key", nil, cfg("multipath: true\nmultipth: true\n"), []string{"get-connector"}, 2, "unknown key multipth"},
		{"key of another command", nil, cfg("os_cloud: x\nrbd-driver: nbd\n"), []string{"get-connector"}, 0, ""},
		{"bad yaml value", nil, cfg("multipath: maybe\n"), []string{"get-connector"}, 2, `key multipath="maybe" is not valid for --multipath: want true or false`},
		{"bad BRICK bool", map[string]string{"BRICK_MULTIPATH": "yes please"}, "/dev/null", []string{"get-connector"}, 2, `BRICK_MULTIPATH="yes please" is not valid for --multipath: want true or false`},
		{"bad BRICK duration", map[string]string{"BRICK_ISCSI_LOGIN_TIMEOUT": "5"}, "/dev/null", []string{"connect"}, 2, "BRICK_ISCSI_LOGIN_TIMEOUT=\"5\" is not valid for --iscsi-login-timeout: want a duration"},
		{"bad BRICK enum", map[string]string{"BRICK_RBD_DRIVER": "fuse"}, "/dev/null", []string{"connect"}, 2, "BRICK_RBD_DRIVER=\"fuse\" is not valid for --rbd-driver: want one of krbd, nbd"},
		// Fixed sets fail before any Cinder call (none is configured here).
		{"bad BRICK mode", map[string]string{"BRICK_MODE": "rx"}, "/dev/null", []string{"local-attach", "v"}, 2, `BRICK_MODE="rx" is not valid for --mode: want one of rw, ro`},
		{"bad --mode", nil, "/dev/null", []string{"local-attach", "v", "--mode", "rx"}, 2, `--mode "rx": want one of rw, ro`},
		{"bad BRICK quote", map[string]string{"BRICK_QUOTE": "some"}, "/dev/null", []string{"get-connector"}, 2, `BRICK_QUOTE="some" is not valid for --quote: want one of nonnumeric, minimal, all, none`},
		{"bad BRICK format", map[string]string{"BRICK_FORMAT": "xml"}, "/dev/null", []string{"get-connector"}, 2, "BRICK_FORMAT: unknown output format"},
		{"bad OS variable", map[string]string{"OS_INSECURE": "perhaps"}, "/dev/null", []string{"list"}, 2, `OS_INSECURE="perhaps" is not valid for --insecure`},
		{"missing host root", nil, "/dev/null", []string{"get-connector", "--host-root", filepath.Join(dir, "nope")}, 2, "--host-root " + filepath.Join(dir, "nope") + ": no such directory"},
		// No record: nothing to ask Cinder, so an unreachable one is no warning.
		{"list without records", nil, "/dev/null", []string{"list", "-f", "json", "--os-auth-url", "http://127.0.0.1:1/v3", "--os-username", "u", "--os-password", "p"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			args := append([]string{"--host-root", root, "--config", tt.config}, tt.args...)
			code, _, errs := runVolumeCmd(t, args...)
			require.Equal(t, tt.code, code, errs)
			if tt.want == "" {
				require.Empty(t, errs)
				return
			}
			require.Contains(t, errs, tt.want)
			require.Equal(t, 1, strings.Count(errs, "\n"), errs)
		})
	}
}

// TestVolumePathsOutput: get-volume-paths prints bare paths, one a line, as
// python-brick-cinderclient-ext does, unless a format is asked for;
// get-all-volume-paths keeps its table (volume, protocol, path).
func TestVolumePathsOutput(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	root := fixtureHost(t)
	const id = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
	ci := `{"driver_volume_type":"nfs","data":{"export":"192.0.2.5:/srv/cinder","name":"volume-` + id + `"}}`
	info, err := connector.ParseConnectionInfo([]byte(ci))
	require.NoError(t, err)
	vol, err := nfs.ParseVolume(info)
	require.NoError(t, err)
	file := "/var/lib/brick/mnt/" + vol.Export.ID() + "/volume-" + id
	hosttest.WriteFile(t, root, file, "")
	hosttest.WriteFile(t, root, "/proc/self/mountinfo", "40 1 0:50 / "+filepath.Dir(file)+" rw,relatime - nfs4 192.0.2.5:/srv/cinder rw\n")
	hosttest.WriteFile(t, root, "/var/lib/brick/volumes/"+id+".json", `{"version":1,"volume_id":"`+id+`","phase":"attached","step":"done","flow":"v3",
"host_name":"fixture-node","mode":"rw","connector":{},"connection_info":`+ci+`,
"device":{"path":"`+file+`","type":"file","protocol":"nfs"},"created_at":"2026-12-02T10:00:00Z","updated_at":"2026-12-02T10:00:00Z"}`)
	base := []string{"--host-root", root, "--config", "/dev/null"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"plain", []string{"get-volume-paths", id}, file + "\n"},
		{"multipath True accepted", []string{"get-volume-paths", id, "--multipath", "True"}, file + "\n"},
		{"json", []string{"get-volume-paths", id, "-f", "json", "--noindent"}, `[{"Path":"` + file + `"}]` + "\n"},
		{"table", []string{"get-volume-paths", id, "-f", "table"}, "│ Path "},
		{"all: a table", []string{"get-all-volume-paths", "--protocol", "NFS"}, "│ " + id + " │ nfs "},
		{"all: value", []string{"get-all-volume-paths", "-f", "value", "-c", "path"}, file + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runVolumeCmd(t, append(base, tt.args...)...)
			require.Equal(t, 0, code, errs)
			require.Empty(t, errs)
			if strings.HasSuffix(tt.want, "\n") {
				require.Equal(t, tt.want, out)
			} else {
				require.Contains(t, out, tt.want)
			}
		})
	}
}

// TestRootHelpGroups: brick --help lists every command once, under a
// heading, get-connector first; each grouped name is a real command.
func TestRootHelpGroups(t *testing.T) {
	root := newApp(nil, nil).rootCommand(nil)
	for _, g := range rootGroups {
		for _, n := range g.names {
			c, _, err := root.Find([]string{n})
			require.NoError(t, err, n)
			require.Equal(t, n, c.Name())
		}
	}
	code, out, _ := runVolumeCmd(t, "--help")
	require.Equal(t, 0, code)
	commands, _, _ := strings.Cut(out, "\nFlags:")
	_, commands, _ = strings.Cut(commands, "brick [command]\n")
	require.True(t, strings.HasPrefix(commands, "\nStart here (no cloud needed):\n  get-connector "), commands)
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			require.Equal(t, 1, strings.Count(commands, "\n  "+c.Name()+" "), c.Name())
		}
	}
	require.Contains(t, commands, "\nOther commands:\n")
}
