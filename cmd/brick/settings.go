package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// settingSource holds where a flag the user did not set may find a value:
// the environment, then the config file's keys (normalised flag names).
// It does what viper did for brick (same precedence, an empty variable
// counts as unset, a null key as absent, the same string conversions),
// without viper's package initialisers, which every brick run paid for.
type settingSource struct {
	config map[string]any
}

// lookup returns a flag's value: the first of envs that is set and not
// empty, else the config file's key unless it is null.
func (s *settingSource) lookup(key string, envs []string) (any, bool) {
	for _, e := range envs {
		if v, ok := os.LookupEnv(e); ok && v != "" {
			return v, true
		}
	}
	v, ok := s.config[key]
	return v, ok && v != nil
}

// settingString renders a value for a flag; ok is false for a value that
// has no text form (a list or a map where one value is wanted).
func settingString(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case bool:
		return strconv.FormatBool(t), true
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), true
	case int:
		return strconv.Itoa(t), true
	case int64:
		return strconv.FormatInt(t, 10), true
	case uint64:
		return strconv.FormatUint(t, 10), true
	case nil:
		return "", true
	case fmt.Stringer:
		return t.String(), true
	case error:
		return t.Error(), true
	}
	return "", false
}

// settingStrings renders a value for a repeatable flag: a string is split
// at white space (as in BRICK_COLUMN="ID Status"), a list item by item.
func settingStrings(v any) []string {
	switch t := v.(type) {
	case string:
		return strings.Fields(t)
	case []any:
		out := make([]string, 0, len(t))
		for _, item := range t {
			s, ok := settingString(item)
			if !ok {
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	if s, ok := settingString(v); ok {
		return []string{s}
	}
	return nil
}

// applySettings gives the flags the user did not set their value from the
// environment (BRICK_*, then OS_* for auth) or the config file.
func (a *app) applySettings(cmd *cobra.Command, src *settingSource) error {
	var applyErr error
	apply := func(f *pflag.Flag) {
		if applyErr != nil || f.Changed || f.Name == "help" {
			return
		}
		envs := append([]string{envName(f.Name)}, f.Annotations[envAnnotation]...)
		val, set := src.lookup(f.Name, envs)
		if !set {
			return
		}
		text, _ := settingString(val)
		var err error
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			err = sv.Replace(settingStrings(val))
		} else {
			err = f.Value.Set(text)
		}
		if err != nil {
			applyErr = usageError{a.settingError(f, envs, text)}
			return
		}
		if f.Name == "format" {
			a.formatSet = true
		}
		// A required flag given by env or config is given; other flags stay
		// unchanged so mutually exclusive groups only judge the command line.
		if _, required := f.Annotations[cobra.BashCompOneRequiredFlag]; required {
			f.Changed = true
		}
	}
	cmd.InheritedFlags().VisitAll(apply)
	cmd.LocalFlags().VisitAll(apply)
	return applyErr
}

// envName is the BRICK_* variable of a flag.
func envName(flag string) string {
	return "BRICK_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// settingError names where a bad value came from (the first of envs that is set, else the config file) and what the flag
// accepts.
func (a *app) settingError(f *pflag.Flag, envs []string, value string) error {
	source := fmt.Sprintf("%s: key %s", a.configFile, f.Name)
	for _, e := range envs {
		if _, ok := os.LookupEnv(e); ok {
			source = e
			break
		}
	}
	return fmt.Errorf("%s=%q is not valid for --%s: want %s", source, value, f.Name, acceptedValues(f))
}

// acceptedValues describes what a flag takes, for error messages.
func acceptedValues(f *pflag.Flag) string {
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

// configKeys lists every flag of every command: a key of brick.yaml must
// be one of them (a key for another command is fine, a typo is not).
func configKeys() []string {
	root := newApp(io.Discard, io.Discard).rootCommand(nil)
	var keys []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		add := func(f *pflag.Flag) { keys = append(keys, f.Name) }
		c.LocalFlags().VisitAll(add)
		c.PersistentFlags().VisitAll(add)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	slices.Sort(keys)
	return slices.Compact(keys)
}

// checkConfigKeys refuses a config file with a key no command knows.
func checkConfigKeys(file string, norm map[string]any) error {
	var unknown []string
	known := configKeys()
	for k := range norm {
		if _, found := slices.BinarySearch(known, k); !found {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("config %s: unknown key %s (keys are flag names, e.g. multipath, host-root, os-cloud; see brick COMMAND --help)", file, strings.Join(unknown, ", "))
}
