package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/output"
	"github.com/brick-storage/brick/internal/settings"
	"github.com/brick-storage/brick/ironicattach"
)

// The exit statuses every command uses; exitStatuses says what each means
// (help exit-status and the man pages' EXIT STATUS print it).
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// exitStatuses is the one table of exit statuses.
var exitStatuses = []struct {
	code    int
	meaning string
}{
	{exitOK, "success, also when there was nothing to do (detaching or disconnecting a volume that is not attached here)"},
	{exitError, "the operation failed (cloud, storage or host error), or reconcile found something not healthy; what the failed run changed is undone unless the message says to run brick cleanup"},
	{exitUsage, "usage error: an unknown command, help topic, flag, column or format, or a bad flag, BRICK_* or brick.yaml value; nothing was asked of a cloud and nothing changed"},
}

// exitStatusText is the table as help and man pages print it.
func exitStatusText() string {
	var b strings.Builder
	for _, s := range exitStatuses {
		fmt.Fprintf(&b, "  %d  %s\n", s.code, s.meaning)
	}
	return b.String()
}

// usageError marks a mistake in the command line (exit status 2).
type usageError = factory.UsageError

// usagef is a usage error naming the flag and what it takes.
func usagef(format string, args ...any) error { return factory.Usagef(format, args...) }

// exitStatus is the status for a command's error; ready says whether
// flags and config were applied (an error before that is a usage error).
func exitStatus(err error, ready bool) int {
	var ue usageError
	var fe ironicattach.FlagError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue) || errors.As(err, &fe) || !ready || errors.Is(err, output.ErrNoColumn):
		return exitUsage
	}
	return exitError
}

// flagError turns cobra's and pflag's flag errors into usage errors that
// name the flag and what it takes, without Go's parser text
// (strconv.ParseInt: parsing "x").
func flagError(_ *cobra.Command, err error) error {
	var inv *pflag.InvalidValueError
	if errors.As(err, &inv) {
		return usagef("--%s %q: want %s", inv.GetFlag().Name, inv.GetValue(), settings.Accepted(inv.GetFlag()))
	}
	return usageError{Err: err}
}

// checkCloudFlags checks the cloud flags' values that need no cloud: a
// Cinder microversion is 3.N.
func checkCloudFlags(cmd *cobra.Command) error {
	f := cmd.Flags().Lookup("os-volume-api-version")
	if f == nil || f.Value.String() == "" {
		return nil
	}
	if _, err := cinderapi.ParseMicroversion(f.Value.String()); err != nil {
		return usagef("--os-volume-api-version %s: want 3.N, e.g. 3.44 (attachments) or 3.0 (the legacy flow)", connector.Quote(f.Value.String()))
	}
	return nil
}
