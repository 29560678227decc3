package main

import "github.com/spf13/cobra"

// ironicAttachCommands are attach-volume and detach-volume.
func (a *app) ironicAttachCommands() []*cobra.Command {
	return nil
}
