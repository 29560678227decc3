package main

import (
	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/internal/cmd/connect"
	"github.com/brick-storage/brick/internal/cmd/dockerplugin"
	"github.com/brick-storage/brick/internal/cmd/ironic"
	"github.com/brick-storage/brick/internal/cmd/reconcile"
	"github.com/brick-storage/brick/internal/cmd/volume"
)

// extraCommands lists the command groups beyond the foundation; each
// feature adds its constructor here.
func extraCommands(a *app) []*cobra.Command {
	f := a.factory()
	return []*cobra.Command{
		ironic.NewCmd(f),
		volume.NewCmdLocalAttach(f, nil), volume.NewCmdLocalDetach(f, nil), volume.NewCmdGetVolumePaths(f, nil),
		volume.NewCmdGetAllVolumePaths(f, nil), volume.NewCmdList(f, nil), volume.NewCmdCleanup(f, nil),
		connect.NewCmdConnect(f, nil), connect.NewCmdDisconnect(f, nil),
		volume.NewCmdExtend(f, nil),
		reconcile.NewCmdReconcile(f, nil), reconcile.NewCmdRestore(f, nil),
		dockerplugin.NewCmd(f, nil),
		csiCommand(a, f),
	}
}
