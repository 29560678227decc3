//go:build nocsi

package main

import (
	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/internal/cmd/factory"
)

// csiCommand runs brick-csi, installed beside this brick (csiexec.go).
func csiCommand(a *app, _ *factory.Factory) *cobra.Command {
	return newCmdCSIExec(a, host.ExecSibling)
}
