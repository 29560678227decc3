//go:build !nocsi

package main

import (
	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/internal/cmd/csi"
	"github.com/brick-storage/brick/internal/cmd/factory"
)

// csiCommand is brick csi with the CSI driver linked in: brick-csi, and
// any brick built without -tags nocsi (csiexec.go has the other).
func csiCommand(_ *app, f *factory.Factory) *cobra.Command { return csi.NewCmd(f, nil) }
