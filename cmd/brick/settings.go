package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// applySettings gives the flags the user did not set their value from the
// environment (BRICK_*, then OS_* for auth) or the config file.
func (a *app) applySettings(cmd *cobra.Command, v *viper.Viper) error {
	var applyErr error
	apply := func(f *pflag.Flag) {
		if applyErr != nil || f.Changed || f.Name == "help" {
			return
		}
		envs := append([]string{envName(f.Name)}, f.Annotations[envAnnotation]...)
		_ = v.BindEnv(append([]string{f.Name}, envs...)...)
		if !v.IsSet(f.Name) {
			return
		}
		var err error
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			err = sv.Replace(v.GetStringSlice(f.Name))
		} else {
			err = f.Value.Set(v.GetString(f.Name))
		}
		if err != nil {
			applyErr = usageError{a.settingError(f, envs, v.GetString(f.Name))}
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

// settingError names where a bad value came from (the variable viper took,
// the first of envs that is set, else the config file) and what the flag
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
