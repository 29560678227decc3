package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/brick-storage/brick/internal/cmd/connflags"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// helpTopics are 'brick help auth', 'brick help tuning' and 'brick help
// exit-status': what every command's --help would otherwise repeat.
func helpTopics() []*cobra.Command {
	var auth pflag.FlagSet
	newApp(io.Discard, io.Discard).addAuthFlags(&auth)
	var co connflags.Options
	var tuning pflag.FlagSet
	connflags.AddMultipathFlags(&tuning, &co, "attach through dm-multipath over every portal")
	connflags.AddProtocolFlags(&tuning, &co)
	return []*cobra.Command{
		{Use: "auth", Short: "Cloud flags: Keystone, clouds.yaml, OS_* variables, noauth endpoints", Long: authTopic + flagList(&auth)},
		{Use: "tuning", Short: "Protocol limits and switches (iSCSI, FC, NFS, RBD, NVMe-oF, multipath)", Long: tuningTopic + flagList(&tuning)},
		{Use: "exit-status", Short: "What brick's exit statuses mean", Long: "Every brick command exits with one of:\n\n" + exitStatusText()},
	}
}

const authTopic = `Commands that talk to Cinder, Ironic or Barbican take these flags. Each
also reads its OS_* variable (as openstackclient does) after BRICK_*, and
brick.yaml's key of the same name. Give a clouds.yaml entry with
--os-cloud (OS_CLOUD), or Keystone credentials, or for a standalone
Cinder or Ironic without Keystone --os-auth-type noauth with
--cinder-endpoint / --ironic-endpoint.

  brick local-attach data --os-cloud mycloud
  OS_AUTH_TYPE=noauth brick list --cinder-endpoint http://cinder:8776/v3

`

const tuningTopic = `The commands that connect or disconnect volumes (local-attach,
local-detach, cleanup, connect, disconnect, reconcile, restore,
docker-plugin, ironic boot-from-volume) take these limits and switches;
--help-all lists those each command uses. Defaults suit most hosts: raise
a timeout for a slow array, not to hide a fault.

`

// flagList is a flag set's usage lines under a heading.
func flagList(fs *pflag.FlagSet) string {
	return "Flags:\n" + strings.TrimRight(fs.FlagUsages(), " \n")
}

// newHelpCommand is 'brick help [command | topic]'. Unlike cobra's, an
// unknown topic is a usage error (exit status 2), not root's help.
func newHelpCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command | topic]",
		Short: "Help about a command, or a topic: auth, tuning, exit-status",
		RunE: func(_ *cobra.Command, args []string) error {
			target, rest, err := root.Find(args)
			if err != nil || target == nil || len(rest) > 0 || (len(args) > 0 && target == root) {
				return usagef("unknown help topic %q (topics: auth, tuning, exit-status; commands: brick --help)", strings.Join(args, " "))
			}
			target.InitDefaultHelpFlag()
			return target.Help()
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var out []string
			if len(args) == 0 {
				for _, c := range root.Commands() {
					if c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() {
						out = append(out, c.Name())
					}
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
	}
}

// strictGroups makes a command group with subcommands refuse an unknown
// subcommand (brick completion tcsh, brick ironic nosuch) with a usage
// error instead of printing its help and exiting 0.
func strictGroups(c *cobra.Command) {
	for _, sub := range c.Commands() {
		strictGroups(sub)
	}
	if !c.HasParent() || !c.HasSubCommands() || c.Run != nil || c.RunE != nil {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("unknown command %q for %q", args[0], cmd.CommandPath())
		}
		return cmd.Help()
	}
}

// writeHelpTopics lists the help topics under root's commands.
func writeHelpTopics(b *strings.Builder, c *cobra.Command) {
	var topics []*cobra.Command
	for _, sub := range c.Commands() {
		if sub.IsAdditionalHelpTopicCommand() {
			topics = append(topics, sub)
		}
	}
	if len(topics) == 0 {
		return
	}
	b.WriteString("\n\nHelp topics (brick help TOPIC):")
	for _, t := range topics {
		fmt.Fprintf(b, "\n  %-*s %s", c.NamePadding(), t.Name(), t.Short)
	}
}
