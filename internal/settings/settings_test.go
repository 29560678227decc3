package settings

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// testFlags is a flag set with one flag of each kind brick uses.
type testFlags struct {
	set     *pflag.FlagSet
	str     string
	on      bool
	wait    time.Duration
	n       int
	columns []string
}

func newTestFlags() *testFlags {
	f := &testFlags{set: pflag.NewFlagSet("t", pflag.ContinueOnError)}
	f.set.StringVar(&f.str, "os-cloud", "", "")
	f.set.BoolVar(&f.on, "multipath", false, "")
	f.set.DurationVar(&f.wait, "device-timeout", 30*time.Second, "")
	f.set.IntVar(&f.n, "max-width", 0, "")
	f.set.StringArrayVar(&f.columns, "column", nil, "")
	WithEnv(f.set.Lookup("os-cloud"), "OS_CLOUD")
	return f
}

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		config  string
		args    []string
		check   func(t *testing.T, f *testFlags)
		applied []string
		err     string
	}{
		{name: "nothing", check: func(t *testing.T, f *testFlags) { require.Equal(t, 30*time.Second, f.wait) }},
		{name: "comments only", config: "# multipath: true\n\n  #max-width: 3\n", env: map[string]string{"BRICK_MAX_WIDTH": "40"}, applied: []string{"max-width"},
			check: func(t *testing.T, f *testFlags) { require.False(t, f.on); require.Equal(t, 40, f.n) }},
		{name: "comment then key", config: "# the ops team's\nmultipath: true # on\n", applied: []string{"multipath"},
			check: func(t *testing.T, f *testFlags) { require.True(t, f.on) }},
		{name: "BRICK env", env: map[string]string{"BRICK_MULTIPATH": "true"}, applied: []string{"multipath"},
			check: func(t *testing.T, f *testFlags) { require.True(t, f.on) }},
		{name: "empty env is unset", env: map[string]string{"BRICK_OS_CLOUD": ""}, config: "os_cloud: file\n", applied: []string{"os-cloud"},
			check: func(t *testing.T, f *testFlags) { require.Equal(t, "file", f.str) }},
		{name: "BRICK before OS_", env: map[string]string{"BRICK_OS_CLOUD": "b", "OS_CLOUD": "o"}, applied: []string{"os-cloud"},
			check: func(t *testing.T, f *testFlags) { require.Equal(t, "b", f.str) }},
		{name: "second variable", env: map[string]string{"OS_CLOUD": "o"}, config: "os-cloud: file\n", applied: []string{"os-cloud"},
			check: func(t *testing.T, f *testFlags) { require.Equal(t, "o", f.str) }},
		{name: "flag beats all", env: map[string]string{"BRICK_MAX_WIDTH": "40"}, config: "max-width: 50\n", args: []string{"--max-width", "60"},
			check: func(t *testing.T, f *testFlags) { require.Equal(t, 60, f.n) }},
		{name: "config types", config: "Device_Timeout: 1m\nmultipath: true\nmax-width: 70\n", applied: []string{"device-timeout", "max-width", "multipath"},
			check: func(t *testing.T, f *testFlags) {
				require.Equal(t, time.Minute, f.wait)
				require.True(t, f.on)
				require.Equal(t, 70, f.n)
			}},
		{name: "null key is absent", config: "multipath: null\n"},
		{name: "list from env", env: map[string]string{"BRICK_COLUMN": "ID Status"}, applied: []string{"column"},
			check: func(t *testing.T, f *testFlags) { require.Equal(t, []string{"ID", "Status"}, f.columns) }},
		{name: "list from config", config: "column: [ID, 2]\n", applied: []string{"column"},
			check: func(t *testing.T, f *testFlags) { require.Equal(t, []string{"ID", "2"}, f.columns) }},
		{name: "bad env names the variable", env: map[string]string{"BRICK_MULTIPATH": "yes please"},
			err: `BRICK_MULTIPATH="yes please" is not valid for --multipath: want true or false`},
		{name: "bad config names file and key", config: "device-timeout: 5\n",
			err: `c.yaml: key device-timeout="5" is not valid for --device-timeout: want a duration such as 30s, 2m or 1m30s`},
		{name: "empty variable is no source", env: map[string]string{"BRICK_MAX_WIDTH": ""}, config: "max-width: wide\n",
			err: `key max-width="wide" is not valid for --max-width: want a whole number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, e := range []string{"BRICK_MULTIPATH", "BRICK_OS_CLOUD", "OS_CLOUD", "BRICK_MAX_WIDTH", "BRICK_COLUMN", "BRICK_DEVICE_TIMEOUT"} {
				t.Setenv(e, "")
				require.NoError(t, os.Unsetenv(e))
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			f := newTestFlags()
			require.NoError(t, f.set.Parse(tt.args))
			cfg, err := Parse(filepath.Join(t.TempDir(), "c.yaml"), []byte(tt.config))
			require.NoError(t, err)
			applied, err := cfg.Apply(f.set)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			var names []string
			for _, a := range applied {
				names = append(names, a.Name)
			}
			require.ElementsMatch(t, tt.applied, names)
			if tt.check != nil {
				tt.check(t, f)
			}
		})
	}
}

func TestCheckKeys(t *testing.T) {
	tests := []struct {
		name     string
		config   string
		wantAll  bool // the costly list is asked for
		err      string
		allNames []string
	}{
		{name: "empty file", config: "# all commented out\n"},
		{name: "keys of this command", config: "multipath: true\nOS_CLOUD: x\n"},
		{name: "key of another command", config: "rbd-driver: nbd\n", wantAll: true, allNames: []string{"rbd-driver"}},
		{name: "typo", config: "multipth: true\nzz: 1\n", wantAll: true, err: "config c.yaml: unknown key multipth, zz (keys are flag names"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse("c.yaml", []byte(tt.config))
			require.NoError(t, err)
			asked := false
			all := func() []string { asked = true; return tt.allNames }
			err = cfg.CheckKeys(all, newTestFlags().set)
			require.Equal(t, tt.wantAll, asked)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
		})
	}
}

// fakeReader stands for osauth.FileTrust.
type fakeReader struct {
	data     string
	readable bool
	err      error
}

func (r fakeReader) ReadFile(string) ([]byte, bool, error) { return []byte(r.data), r.readable, r.err }

func TestLoad(t *testing.T) {
	tests := []struct {
		name     string
		r        fakeReader
		explicit bool
		err      string
		secret   bool
	}{
		{name: "default file absent", r: fakeReader{err: fs.ErrNotExist}},
		{name: "named file absent", r: fakeReader{err: fmt.Errorf("open: %w", fs.ErrNotExist)}, explicit: true, err: "read config /c.yaml: open: file does not exist"},
		{name: "untrusted file", r: fakeReader{err: errors.New("owned by uid 1000")}, err: "read config /c.yaml: owned by uid 1000"},
		{name: "bad yaml", r: fakeReader{data: "multipath: [\n"}, err: "parse config /c.yaml: yaml:"},
		{name: "not a mapping", r: fakeReader{data: "- a\n"}, err: "parse config /c.yaml"},
		{name: "readable secret", r: fakeReader{data: "os_password: x\n", readable: true}, secret: true},
		{name: "private secret", r: fakeReader{data: "os-password: x\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(tt.r, "/c.yaml", tt.explicit)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.secret, cfg.ReadableByOthers && cfg.Has("os-password"))
		})
	}
}

func TestConfigPath(t *testing.T) {
	tests := []struct {
		name, env, flag string
		changed         bool
		want            string
		explicit        bool
	}{
		{"default", "", DefaultFile, false, DefaultFile, false},
		{"BRICK_CONFIG", "/e.yaml", DefaultFile, false, "/e.yaml", true},
		{"flag wins", "/e.yaml", "/f.yaml", true, "/f.yaml", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(ConfigEnv, tt.env)
			path, explicit := ConfigPath(tt.flag, tt.changed)
			require.Equal(t, tt.want, path)
			require.Equal(t, tt.explicit, explicit)
		})
	}
}

func TestJoinBoolValues(t *testing.T) {
	tests := []struct{ in, want []string }{
		{[]string{"local-attach", "v", "--multipath", "True"}, []string{"local-attach", "v", "--multipath=True"}},
		{[]string{"local-attach", "--enforce_multipath", "False", "v"}, []string{"local-attach", "--enforce_multipath=False", "v"}},
		{[]string{"local-attach", "--multipath", "v"}, []string{"local-attach", "--multipath", "v"}},
		{[]string{"local-attach", "--", "--multipath", "true"}, []string{"local-attach", "--", "--multipath", "true"}},
		{[]string{"get-connector", "--multipath"}, []string{"get-connector", "--multipath"}},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, JoinBoolValues(tt.in), "%v", tt.in)
	}
}

func TestAccepted(t *testing.T) {
	f := newTestFlags()
	var choice pflag.Value = &enumValue{"krbd|nbd"}
	f.set.Var(choice, "rbd-driver", "")
	for name, want := range map[string]string{
		"multipath": "true or false", "device-timeout": "a duration such as 30s, 2m or 1m30s",
		"max-width": "a whole number", "os-cloud": "a string", "rbd-driver": "one of krbd, nbd",
	} {
		require.Equal(t, want, Accepted(f.set.Lookup(name)), name)
	}
}

type enumValue struct{ typ string }

func (e *enumValue) String() string   { return "" }
func (e *enumValue) Set(string) error { return nil }
func (e *enumValue) Type() string     { return e.typ }

// FuzzParse: any file parses or fails with an error naming it; a parsed
// file's keys are judged, and applied to flags, without a panic.
func FuzzParse(f *testing.F) {
	f.Add("multipath: true\nos_cloud: x\n")
	f.Add("column: [ID, {a: 1}]\nmax-width: 1e400\n")
	f.Add("device-timeout: ~\n? [a]\n: b\n")
	f.Add("# multipath: true\n  \n#\n")
	f.Fuzz(func(t *testing.T, data string) {
		cfg, err := Parse("c.yaml", []byte(data))
		if err != nil {
			require.Contains(t, err.Error(), "c.yaml")
			return
		}
		_ = cfg.CheckKeys(nil, newTestFlags().set)
		_, _ = cfg.Apply(newTestFlags().set)
	})
}

// FuzzJoinBoolValues: only a separate true/false after an ext bool flag is
// joined; every other word survives in order.
func FuzzJoinBoolValues(f *testing.F) {
	f.Add("local-attach v --multipath True")
	f.Add("--enforce_multipath false -- --multipath true")
	f.Fuzz(func(t *testing.T, line string) {
		in := strings.Fields(line)
		out := JoinBoolValues(in)
		require.Equal(t, strings.Join(in, " "), strings.Join(splitJoined(out), " "))
	})
}

// splitJoined undoes JoinBoolValues' joins.
func splitJoined(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		name, val, ok := strings.Cut(a, "=")
		if ok && strings.Contains(strings.Join(extBoolFlags, " "), name) && (strings.EqualFold(val, "true") || strings.EqualFold(val, "false")) {
			out = append(out, name, val)
			continue
		}
		out = append(out, a)
	}
	return out
}

// TestPackagedConfig: the .deb's brick.yaml, every line commented, sets
// nothing and is settled without the YAML parser.
func TestPackagedConfig(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "packaging", "brick.yaml"))
	require.NoError(t, err)
	require.True(t, onlyComments(data))
	cfg, err := Parse("brick.yaml", data)
	require.NoError(t, err)
	require.False(t, cfg.Has("multipath", "format", "os-auth-type"))
	require.NoError(t, cfg.CheckKeys(nil))
	for data, want := range map[string]bool{"": true, "\n  # x\n": true, "a: 1": false, "  #c\n---\n": false, "#c\n\tb: 2\n": false} {
		require.Equal(t, want, onlyComments([]byte(data)), "%q", data)
	}
}
