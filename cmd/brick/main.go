// Command brick attaches OpenStack Cinder volumes to the host it runs on,
// without Nova, and prints the host's connector for Cinder and Ironic.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/settings"
)

func main() {
	ctx, stop := context.Background(), context.CancelFunc(func() {})
	// get-connector and version watch no context: a signal ends them as it
	// ends any process. Not catching signals there spares their start-up
	// the two threads os/signal starts.
	if !lightCommand(os.Args[1:]) {
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	}
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runApp(ctx, newApp(stdout, stderr), args)
}

func runApp(ctx context.Context, a *app, args []string) int {
	args, a.helpAll = helpAllArgs(args)
	root := a.rootCommand(args)
	root.SetArgs(settings.JoinBoolValues(args))
	err := root.ExecuteContext(ctx)
	if a.cancel != nil {
		a.cancel()
	}
	if err == nil {
		return exitOK
	}
	err = a.timeoutError(err)
	factory.PrintError(a.stderr, a.redactor.Redact(err.Error()))
	return exitStatus(err, a.ready)
}
