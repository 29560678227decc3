package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// cloudFlagAnnotation marks the OpenStack auth flags, which help lists in
// a section of their own: 25 of them buried a command's few real options.
const cloudFlagAnnotation = "brick_cloud_flag"

func markCloudFlag(f *pflag.Flag) {
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[cloudFlagAnnotation] = []string{"true"}
}

func isCloudFlag(f *pflag.Flag) bool {
	_, ok := f.Annotations[cloudFlagAnnotation]
	return ok
}

// usage is cobra's usage text with the cloud flags grouped apart.
func usage(c *cobra.Command) error {
	var b strings.Builder
	b.WriteString("Usage:")
	if c.Runnable() {
		b.WriteString("\n  " + c.UseLine())
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\n  " + c.CommandPath() + " [command]")
	}
	if len(c.Aliases) > 0 {
		b.WriteString("\n\nAliases:\n  " + c.NameAndAliases())
	}
	if c.HasExample() {
		b.WriteString("\n\nExamples:\n" + c.Example)
	}
	writeSubcommands(&b, c)
	own, cloud := splitFlags(c.LocalFlags())
	inherited, inheritedCloud := splitFlags(c.InheritedFlags())
	cloud.AddFlagSet(inheritedCloud)
	writeFlagSection(&b, "Flags", own)
	writeFlagSection(&b, "Cloud flags (or OS_* variables, or clouds.yaml with --os-cloud)", cloud)
	writeFlagSection(&b, "Global Flags", inherited)
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\n\nUse \"%s [command] --help\" for more information about a command.", c.CommandPath())
	}
	b.WriteString("\n")
	_, err := fmt.Fprint(c.OutOrStderr(), b.String())
	return err
}

// commandGroup is a heading of the root help and its commands, in order.
type commandGroup struct {
	title string
	names []string
}

// rootGroups orders the top-level commands for a newcomer: what Cinder
// needs to know, then the main job, then the rest. A command in no group
// is listed under "Other commands".
var rootGroups = []commandGroup{
	{"Start here (no cloud needed)", []string{"get-connector"}},
	{"Cinder volumes on this host", []string{"local-attach", "local-detach", "list", "extend", "get-volume-paths", "get-all-volume-paths", "cleanup"}},
	{"The whole host", []string{"reconcile", "restore"}},
	{"From connection info (no Cinder call)", []string{"connect", "disconnect"}},
	{"Ironic and Docker", []string{"ironic", "docker-plugin"}},
}

func writeSubcommands(b *strings.Builder, c *cobra.Command) {
	if !c.HasAvailableSubCommands() {
		return
	}
	var subs []*cobra.Command
	byName := map[string]*cobra.Command{}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() || sub.Name() == "help" {
			subs = append(subs, sub)
			byName[sub.Name()] = sub
		}
	}
	if c.HasParent() {
		writeCommandList(b, "Available Commands", subs)
		return
	}
	grouped := map[string]bool{}
	for _, g := range rootGroups {
		var in []*cobra.Command
		for _, n := range g.names {
			if sub, ok := byName[n]; ok {
				in = append(in, sub)
				grouped[n] = true
			}
		}
		writeCommandList(b, g.title, in)
	}
	rest := slices.DeleteFunc(subs, func(sub *cobra.Command) bool { return grouped[sub.Name()] })
	writeCommandList(b, "Other commands", rest)
}

func writeCommandList(b *strings.Builder, title string, cmds []*cobra.Command) {
	if len(cmds) == 0 {
		return
	}
	b.WriteString("\n\n" + title + ":")
	for _, sub := range cmds {
		fmt.Fprintf(b, "\n  %-*s %s", sub.NamePadding(), sub.Name(), sub.Short)
	}
}

// splitFlags separates the cloud flags from the rest; hidden flags stay
// hidden because FlagUsages skips them.
func splitFlags(fs *pflag.FlagSet) (own, cloud *pflag.FlagSet) {
	own = pflag.NewFlagSet("own", pflag.ContinueOnError)
	cloud = pflag.NewFlagSet("cloud", pflag.ContinueOnError)
	fs.VisitAll(func(f *pflag.Flag) {
		if isCloudFlag(f) {
			cloud.AddFlag(f)
		} else {
			own.AddFlag(f)
		}
	})
	return own, cloud
}

func writeFlagSection(b *strings.Builder, title string, fs *pflag.FlagSet) {
	if text := fs.FlagUsages(); text != "" {
		b.WriteString("\n\n" + title + ":\n" + strings.TrimRight(text, " \n"))
	}
}
