package main

import (
	"io"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/internal/settings"
	"github.com/brick-storage/brick/osauth"
)

// loadSettings reads the config file (--config, $BRICK_CONFIG or the
// default, which may be absent) and refuses a key no command knows.
func (a *app) loadSettings(cmd *cobra.Command) (*settings.Config, error) {
	path, explicit := settings.ConfigPath(a.configFile, cmd.Flags().Changed("config"))
	a.configFile = path
	cfg, err := settings.Load(a.trust, path, explicit)
	if err != nil {
		return nil, usageError{Err: err}
	}
	if err := cfg.CheckKeys(configKeys, cmd.Flags(), cmd.InheritedFlags()); err != nil {
		return nil, usageError{Err: err}
	}
	if cfg.ReadableByOthers && cfg.Has("os-password", "os-token", "os-application-credential-secret") {
		osauth.WarnReadable(a.logger, path, "a password or token")
	}
	return cfg, nil
}

// applySettings gives the flags the user did not set their value from the
// environment (BRICK_*, then OS_* for auth) or the config file.
func (a *app) applySettings(cmd *cobra.Command, cfg *settings.Config) error {
	applied, err := cfg.Apply(cmd.InheritedFlags(), cmd.LocalFlags())
	for _, f := range applied {
		if f.Name == "format" {
			a.formatSet = true
		}
		// A required flag given by env or config is given; other flags stay
		// unchanged so mutually exclusive groups only judge the command line.
		if _, required := f.Annotations[cobra.BashCompOneRequiredFlag]; required {
			f.Changed = true
		}
	}
	if err != nil {
		return usageError{Err: err}
	}
	return nil
}

// configKeys lists every flag of every command: a key of brick.yaml must
// be one of them (a key for another command is fine, a typo is not).
// Building every command is costly: only a key the running command does
// not know asks for it.
func configKeys() []string {
	return flagNames(newApp(io.Discard, io.Discard).rootCommand(nil))
}

// flagNames lists the flags of root and its commands, sorted, once each.
func flagNames(root *cobra.Command) []string {
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
