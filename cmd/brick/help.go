package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/brick-storage/brick/internal/cmd/connflags"
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

// briefFlags are the flags --help shows of those every command shares;
// the rest of them (and every cloud and tuning flag) --help-all shows.
var briefFlags = []string{"format", "column", "sort-column", "os-cloud", "verbose", "timeout"}

// moreFlags are a command's own flags that only some users need: --help
// leaves them to --help-all.
var moreFlags = []string{"enforce-multipath", "ip", "hostname", "mkfs-force", "mount-fstype", "mount-suid-dev", "boot-index", "no-decrypt"}

// sharedFlags are the flags many commands share (output, cloud, global):
// --help shows only briefFlags of them.
func sharedFlag(f *pflag.Flag) bool {
	switch f.Name {
	case "help":
		return false
	case "format", "column", "sort-column", "sort-descending", "noindent", "quote", "max-width", "fit-width",
		"debug", "verbose", "timeout", "host-root", "config":
		return true
	}
	return isCloudFlag(f)
}

// helpAllFlag asks for every flag in a command's help.
const helpAllFlag = "--help-all"

// helpAllArgs turns --help-all into --help and reports whether it was
// given (before a "--").
func helpAllArgs(args []string) ([]string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		if a == helpAllFlag {
			out := slices.Clone(args)
			out[i] = "--help"
			return out, true
		}
	}
	return args, false
}

// usage is cobra's usage text: with all, every flag with the cloud flags
// grouped apart; else the command's own flags and the few every user
// needs, and where to find the others.
func usage(c *cobra.Command, all bool) error {
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
	if all {
		writeAllFlags(&b, c)
	} else {
		writeBriefFlags(&b, c)
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\n\nUse \"%s [command] --help\" for more information about a command.", c.CommandPath())
	}
	b.WriteString("\n")
	_, err := fmt.Fprint(c.OutOrStderr(), b.String())
	return err
}

func writeAllFlags(b *strings.Builder, c *cobra.Command) {
	own, cloud := splitFlags(c.LocalFlags())
	inherited, inheritedCloud := splitFlags(c.InheritedFlags())
	cloud.AddFlagSet(inheritedCloud)
	writeFlagSection(b, "Flags", own)
	writeFlagSection(b, "Cloud flags (or OS_* variables, or clouds.yaml with --os-cloud)", cloud)
	writeFlagSection(b, "Global Flags", inherited)
}

// writeBriefFlags writes the command's own flags, then the shared ones
// worth a line, then a footer naming what --help-all adds.
func writeBriefFlags(b *strings.Builder, c *cobra.Command) {
	own := pflag.NewFlagSet("own", pflag.ContinueOnError)
	common := pflag.NewFlagSet("common", pflag.ContinueOnError)
	left, tuning, cloud := 0, 0, false
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		switch {
		case f.Hidden || f.Name == "help":
		case isCloudFlag(f) && !cloud:
			cloud = true
			fallthrough
		case sharedFlag(f) || slices.Contains(connflags.TuningFlags, f.Name) || slices.Contains(moreFlags, f.Name):
			if slices.Contains(briefFlags, f.Name) {
				common.AddFlag(f)
				return
			}
			if slices.Contains(connflags.TuningFlags, f.Name) {
				tuning++
			}
			left++
		default:
			own.AddFlag(f)
		}
	})
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		if slices.Contains(briefFlags, f.Name) {
			common.AddFlag(f)
		} else {
			left++
		}
	})
	writeFlagSection(b, "Flags", own)
	writeFlagSection(b, "Common flags", common)
	writeHelpFooter(b, left, tuning, cloud)
}

func writeHelpFooter(b *strings.Builder, left, tuning int, cloud bool) {
	if left == 0 {
		return
	}
	fmt.Fprintf(b, "\n\n%s shows %d more flags", helpAllFlag, left)
	var topics []string
	if cloud {
		topics = append(topics, "'brick help auth' (cloud flags, OS_* variables)")
	}
	if tuning > 0 {
		topics = append(topics, "'brick help tuning' (protocol limits)")
	}
	if len(topics) > 0 {
		b.WriteString("; see also " + strings.Join(topics, ", "))
	}
	b.WriteString(".")
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
	writeHelpTopics(b, c)
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
