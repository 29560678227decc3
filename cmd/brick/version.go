package main

import (
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/internal/output"
)

// version is stamped by the build from the git tag (scripts/version.sh,
// make build: -ldflags "-X main.version=..."); empty in a plain go build.
var version string

// buildInfo is what brick knows about its own build.
type buildInfo struct {
	Version  string
	Commit   string
	Modified bool
}

// readBuildInfo returns the stamped version, else the module version the Go
// toolchain recorded (go install ...@v1.2.0, or a VCS-stamped build), else
// "dev"; the commit comes from the toolchain's VCS stamp when there is one.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Commit: "unknown"}
	info, ok := debug.ReadBuildInfo()
	if ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.Version == "" && ok {
		b.Version = moduleVersion(info.Main.Version)
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	return b
}

// moduleVersion turns a Go module version into brick's form (no leading v);
// "(devel)" and the empty version mean unknown.
func moduleVersion(v string) string {
	if v == "" || v == "(devel)" {
		return ""
	}
	return strings.TrimPrefix(v, "v")
}

func newCmdVersion(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print brick's version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := readBuildInfo()
			return a.out.PrintRecord(cmd.OutOrStdout(), output.Record{
				{Name: "version", Value: b.Version},
				{Name: "commit", Value: b.Commit},
				{Name: "modified", Value: b.Modified},
				{Name: "go", Value: runtime.Version()},
				{Name: "platform", Value: runtime.GOOS + "/" + runtime.GOARCH},
			})
		},
	}
}
