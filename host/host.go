// Package host is brick's only door to the machine: it runs external
// commands (argv lists only, each with a timeout, stderr in errors, secrets
// masked), reads and writes /etc, /sys, /dev, /proc and /run under a
// configurable root (FS), takes cross-process locks (Locks), checks and
// flushes block devices (BlockDevices) and reads mounts, addresses and
// processes (System).
// Everything else in brick receives a *Host, so tests run on a fixture tree
// in t.TempDir() with a scripted Runner.
package host

import (
	"io"
	"log/slog"
)

// Host bundles what the rest of brick may use of the machine.
type Host struct {
	FS       FS           // files under the root
	Locks    Locks        // cross-process locks
	Block    BlockDevices // in-use checks, flush, read-only
	Sys      System       // mounts, addresses, processes, sockets
	Runner   Runner
	Log      *slog.Logger
	Redactor *Redactor
}

// New returns a Host rooted at root that runs real commands and logs
// through logger (nil: discard). The redactor masks secrets in both.
func New(root string, logger *slog.Logger, redactor *Redactor) *Host {
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if redactor == nil {
		redactor = NewRedactor()
	}
	fs := NewFS(root)
	return &Host{
		FS:       fs,
		Locks:    NewLocks(fs),
		Block:    NewBlockDevices(fs),
		Sys:      NewSystem(fs),
		Runner:   &ExecRunner{Logger: logger, Redactor: redactor},
		Log:      logger,
		Redactor: redactor,
	}
}
