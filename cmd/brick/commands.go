package main

import "github.com/spf13/cobra"

// extraCommands lists the command groups beyond the foundation; each
// feature adds its constructor here.
func (a *app) extraCommands() []*cobra.Command {
	return []*cobra.Command{
		newCmdIronic(a),
		newCmdLocalAttach(a, nil), newCmdLocalDetach(a, nil), a.getVolumePathsCommand(), a.getAllVolumePathsCommand(), a.listCommand(), a.cleanupCommand(),
		newCmdConnect(a, nil), newCmdDisconnect(a, nil),
		newCmdExtend(a, nil),
		newCmdReconcile(a, nil), newCmdRestore(a, nil),
		newCmdDockerPlugin(a, nil),
	}
}
