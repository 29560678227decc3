// Package settings gives the flags a user did not set on the command line
// their value from the environment or brick's YAML file, in the order
// flags > BRICK_* (then a flag's other variables, such as OS_CLOUD) >
// /etc/brick/brick.yaml. viper does the lookup; on top of it a key no
// command knows is refused and every bad value names where it came from.
//
//	cfg, err := settings.Load(trust, path, explicit)
//	applied, err := cfg.Apply(cmd.InheritedFlags(), cmd.LocalFlags())
package settings

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

// DefaultFile is brick's config file; it may be absent.
const DefaultFile = "/etc/brick/brick.yaml"

// ConfigEnv names the config file in place of --config.
const ConfigEnv = "BRICK_CONFIG"

// EnvAnnotation lists the environment variables a flag reads beyond its
// BRICK_* name (OS_CLOUD for --os-cloud); see WithEnv.
const EnvAnnotation = "brick_env"

// FileReader reads a config file after judging whether it may steer brick
// (as root: owned by root, not writable by others); readableByOthers lets
// the caller warn about a file holding a secret. osauth.FileTrust is one.
type FileReader interface {
	ReadFile(path string) (data []byte, readableByOthers bool, err error)
}

// Config is one run's source of settings: the environment and the keys of
// one config file (none when the default file is absent).
type Config struct {
	// Path is the file read, for error messages.
	Path string
	// ReadableByOthers: the file is world-readable (mode o+r).
	ReadableByOthers bool

	keys  map[string]any // normalised key -> value, as in the file
	viper *viper.Viper   // built on the first value to look up (lookup)
}

// ConfigPath returns the config file to read: the --config value when
// given, else $BRICK_CONFIG when set, else flagValue (the default).
// explicit reports that the file must exist.
func ConfigPath(flagValue string, flagChanged bool) (path string, explicit bool) {
	if flagChanged {
		return flagValue, true
	}
	if env, ok := os.LookupEnv(ConfigEnv); ok && env != "" {
		return env, true
	}
	return flagValue, false
}

// Load reads and parses path through r. A missing file is no error unless
// explicit; the Config then holds the environment alone.
func Load(r FileReader, path string, explicit bool) (*Config, error) {
	data, readable, err := r.ReadFile(path)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return Parse(path, nil)
		}
		return nil, fmt.Errorf("read config %s: %w", path, err)
	}
	c, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	c.ReadableByOthers = readable
	return c, nil
}

// Parse reads a config file's YAML: a mapping from flag names (any case,
// '_' or '-') to values. Keys are not judged here: see CheckKeys.
func Parse(path string, data []byte) (*Config, error) {
	var m map[string]any
	if !onlyComments(data) {
		if err := yaml.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("parse config %s: %w", path, err)
		}
	}
	keys := make(map[string]any, len(m))
	for k, val := range m {
		keys[strings.ReplaceAll(strings.ToLower(k), "_", "-")] = val
	}
	return &Config{Path: path, keys: keys}, nil
}

// onlyComments reports whether data holds no YAML but comments and blank
// lines, as the packaged brick.yaml does: it sets nothing, and every
// command's start-up is spared the parser.
func onlyComments(data []byte) bool {
	for line := range bytes.Lines(data) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			return false
		}
	}
	return true
}

// lookup is the viper instance holding the file's keys, built when a value
// is first looked up: a run whose flags no variable or key sets needs none.
func (c *Config) lookup() (*viper.Viper, error) {
	if c.viper == nil {
		v := viper.New()
		if err := v.MergeConfigMap(c.keys); err != nil {
			return nil, fmt.Errorf("load config %s: %w", c.Path, err)
		}
		c.viper = v
	}
	return c.viper, nil
}

// Has reports whether the file sets any of keys (to something not null).
func (c *Config) Has(keys ...string) bool {
	for _, k := range keys {
		if c.keys[k] != nil {
			return true
		}
	}
	return false
}

// CheckKeys refuses a file with a key that is no flag. A key is looked up
// in sets first (the running command's flags); all, which may be costly
// (it lists every command's flags), is called only for the keys left.
func (c *Config) CheckKeys(all func() []string, sets ...*pflag.FlagSet) error {
	var unknown []string
	for k := range c.keys {
		if !inSets(k, sets) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 && all != nil {
		known := all()
		unknown = slices.DeleteFunc(unknown, func(k string) bool { return slices.Contains(known, k) })
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("config %s: unknown key %s (keys are flag names, e.g. multipath, host-root, os-cloud; see brick COMMAND --help)",
		c.Path, strings.Join(unknown, ", "))
}

func inSets(name string, sets []*pflag.FlagSet) bool {
	for _, s := range sets {
		if s.Lookup(name) != nil {
			return true
		}
	}
	return false
}

// Apply gives every flag of sets the user did not set its value from the
// environment or the file, and returns the flags it set. An empty variable
// counts as unset, a null key as absent. A bad value's error names its
// source (the variable, else file: key) and what the flag takes.
func (c *Config) Apply(sets ...*pflag.FlagSet) ([]*pflag.Flag, error) {
	var applied []*pflag.Flag
	var err error
	for _, s := range sets {
		s.VisitAll(func(f *pflag.Flag) {
			if err != nil || f.Changed || f.Name == "help" {
				return
			}
			var set bool
			if set, err = c.apply(f); set {
				applied = append(applied, f)
			}
		})
	}
	return applied, err
}

func (c *Config) apply(f *pflag.Flag) (bool, error) {
	envs := append([]string{EnvName(f.Name)}, f.Annotations[EnvAnnotation]...)
	if _, inFile := c.keys[f.Name]; !inFile && setEnv(envs) == "" {
		return false, nil // no source names the flag: nothing to look up
	}
	v, err := c.lookup()
	if err != nil {
		return false, err
	}
	if err := v.BindEnv(append([]string{f.Name}, envs...)...); err != nil {
		return false, fmt.Errorf("--%s: %w", f.Name, err)
	}
	if !v.IsSet(f.Name) {
		return false, nil
	}
	text := v.GetString(f.Name)
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		err = sv.Replace(v.GetStringSlice(f.Name))
	} else {
		err = f.Value.Set(text)
	}
	if err != nil {
		return false, fmt.Errorf("%s=%q is not valid for --%s: want %s", c.source(f.Name, envs), text, f.Name, Accepted(f))
	}
	return true, nil
}

// source names where a flag's value came from: the first of envs that is
// set and not empty (viper's rule), else the file's key.
func (c *Config) source(name string, envs []string) string {
	if e := setEnv(envs); e != "" {
		return e
	}
	return fmt.Sprintf("%s: key %s", c.Path, name)
}

// setEnv is the first of envs that is set and not empty (viper's rule),
// or "".
func setEnv(envs []string) string {
	for _, e := range envs {
		if v, ok := os.LookupEnv(e); ok && v != "" {
			return e
		}
	}
	return ""
}

// EnvName is the BRICK_* variable of a flag: BRICK_HOST_ROOT for host-root.
func EnvName(flag string) string {
	return "BRICK_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// WithEnv makes a flag also read the given environment variables, after
// its BRICK_* name.
func WithEnv(f *pflag.Flag, names ...string) {
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[EnvAnnotation] = append(f.Annotations[EnvAnnotation], names...)
}

// Accepted describes what a flag takes, for error messages. A value type
// named "a|b|c" takes one of a fixed set.
func Accepted(f *pflag.Flag) string {
	switch t := f.Value.Type(); t {
	case "bool":
		return "true or false"
	case "duration":
		return "a duration such as 30s, 2m or 1m30s"
	case "int":
		return "a whole number"
	default:
		if strings.Contains(t, "|") {
			return "one of " + strings.ReplaceAll(t, "|", ", ")
		}
		return "a " + t
	}
}
