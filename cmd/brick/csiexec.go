package main

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/internal/cmd/factory"
)

// csiBinary is the CSI driver's binary, installed beside brick: brick
// built with its gRPC server. make builds brick itself without it (-tags
// nocsi): gRPC's and the CSI spec's package initialisers would otherwise
// run at the start of every command, get-connector's included.
const csiBinary = "brick-csi"

const csiShort = "Serve the Container Storage Interface: Cinder volumes for Kubernetes, without Nova"

// csiOwnFlags are the flags of brick csi that no other command has: a
// brick.yaml key naming one is no typo, in a brick without the driver too.
func csiOwnFlags() []string {
	return []string{"availability-zone", "driver-name", "endpoint", "kubelet-dir", "max-volumes", "mode", "node-id"}
}

// newCmdCSIExec is brick csi in a brick built without the CSI driver: it
// runs brick-csi with the same arguments (execF: host.ExecSibling), so the
// server, its flags, help and completion are brick-csi's own.
func newCmdCSIExec(a *app, execF func(name string, args []string) error) *cobra.Command {
	run := func(args ...string) error {
		err := execF(csiBinary, args)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("csi: %w: the CSI driver is the %s binary; install it beside brick (the package and the image ship it, make build writes bin/%s)", err, csiBinary, csiBinary)
		}
		return err
	}
	cmd := &cobra.Command{
		Use:                "csi",
		Short:              csiShort,
		DisableFlagParsing: true,
		// brick-csi reads the settings and judges the command line; a
		// failure to start it is no usage error.
		PersistentPreRunE: func(*cobra.Command, []string) error {
			a.ready = true
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			return run(append([]string{"csi"}, helpAllBack(args, a.helpAll)...)...)
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			_ = run(append(append([]string{cobra.ShellCompRequestCmd, "csi"}, args...), toComplete)...)
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
	}
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) {
		if err := run("csi", helpFlag(a.helpAll)); err != nil {
			factory.PrintError(c.ErrOrStderr(), err.Error())
		}
	})
	for _, name := range csiOwnFlags() {
		cmd.Flags().String(name, "", "")
		_ = cmd.Flags().MarkHidden(name)
	}
	return cmd
}

// helpAllBack undoes helpAllArgs for brick-csi, which reads --help-all
// itself.
func helpAllBack(args []string, all bool) []string {
	if i := slices.Index(args, "--help"); all && i >= 0 {
		args = slices.Clone(args)
		args[i] = helpAllFlag
	}
	return args
}

func helpFlag(all bool) string {
	if all {
		return helpAllFlag
	}
	return "--help"
}
