// Package progress shows what a long command is doing: one live status
// line on a terminal's stderr (step, volume, elapsed time), redrawn in
// place and erased at the end, and nothing at all when the stream is not
// a terminal. It also tells the command layer how wide the terminal is.
package progress

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Width returns the terminal width of w in columns, or 0 when w is not a
// terminal (a pipe, a file, a buffer in a test).
func Width(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return 0
	}
	return int(ws.Col)
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
