package main

import (
	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/internal/cmd/csi"
	"github.com/brick-storage/brick/internal/cmd/dockerplugin"
	"github.com/brick-storage/brick/internal/cmd/ironic"
)

// extraCommands lists the command groups beyond the foundation; each
// feature adds its constructor here.
func extraCommands(a *app) []*cobra.Command {
	f := a.factory()
	return []*cobra.Command{
		ironic.NewCmd(f, newCmdIronicRegister(a, nil), newCmdBootVolume(a, nil)),
		newCmdLocalAttach(a, nil), newCmdLocalDetach(a, nil), newCmdGetVolumePaths(a, nil), newCmdGetAllVolumePaths(a, nil), newCmdList(a, nil), newCmdCleanup(a, nil),
		newCmdConnect(a, nil), newCmdDisconnect(a, nil),
		newCmdExtend(a, nil),
		newCmdReconcile(a, nil), newCmdRestore(a, nil),
		dockerplugin.NewCmd(f, nil),
		csi.NewCmd(f, nil),
	}
}
