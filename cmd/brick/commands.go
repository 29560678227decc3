package main

import "github.com/spf13/cobra"

// extraCommands lists the command groups beyond the foundation; each
// feature adds its constructor here.
func (a *app) extraCommands() []*cobra.Command {
	return []*cobra.Command{
		a.ironicCommand(),
		a.localAttachCommand(), a.localDetachCommand(), a.getVolumePathsCommand(), a.getAllVolumePathsCommand(), a.listCommand(), a.cleanupCommand(),
		a.connectCommand(), a.disconnectCommand(),
		a.extendCommand(),
		a.reconcileCommand(), a.restoreCommand(),
		a.dockerPluginCommand(),
	}
}
