// Command brick attaches OpenStack Cinder volumes to the host it runs on,
// without Nova, and prints the host's connector for Cinder and Ironic.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/brick-storage/brick/internal/output"
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
	printError(a.stderr, a.redactor.Redact(err.Error()))
	return exitStatus(err, a.ready)
}

// suggestionsHeader is how cobra introduces its "did you mean" list.
const suggestionsHeader = "\n\nDid you mean this?\n"

// printError prints an error on one line, except that cobra's suggestions
// for a mistyped command keep a line each, as cobra lays them out.
func printError(w io.Writer, msg string) {
	first, rest, ok := strings.Cut(msg, suggestionsHeader)
	fmt.Fprintf(w, "brick: %s\n", output.OneLine(first))
	if !ok {
		return
	}
	fmt.Fprintf(w, "%s", strings.TrimPrefix(suggestionsHeader, "\n"))
	for _, s := range strings.Split(strings.TrimSpace(rest), "\n") {
		if s = strings.TrimSpace(s); s != "" {
			fmt.Fprintf(w, "\t%s\n", output.OneLine(s))
		}
	}
}
