package guest

import (
	"fmt"
	"io"
	"strings"
)

// cpioEntry is one member of a newc ("070701") archive, the format the
// kernel unpacks as an initramfs.
type cpioEntry struct {
	Name string // path without a leading slash
	Mode uint32 // type bits and permissions, as in stat(2)
	Data []byte // file contents or symlink target
	// RdevMajor/RdevMinor describe device nodes. The archive can hold them
	// although the builder never runs mknod.
	RdevMajor, RdevMinor uint32
}

const (
	modeDir  = 0o040000
	modeFile = 0o100000
	modeChar = 0o020000
	modeLink = 0o120000
)

// writeCPIO writes entries in order followed by the trailer. Timestamps and
// owners are zero so the same inputs give the same bytes.
func writeCPIO(w io.Writer, entries []cpioEntry) error {
	for i, e := range entries {
		if e.Name == "" || strings.HasPrefix(e.Name, "/") {
			return fmt.Errorf("cpio entry %d: invalid name %q", i, e.Name)
		}
		if err := writeCPIOMember(w, uint32(i+1), e); err != nil {
			return fmt.Errorf("cpio entry %s: %w", e.Name, err)
		}
	}
	if err := writeCPIOMember(w, 0, cpioEntry{Name: "TRAILER!!!"}); err != nil {
		return fmt.Errorf("cpio trailer: %w", err)
	}
	return nil
}

func writeCPIOMember(w io.Writer, ino uint32, e cpioEntry) error {
	nlink := uint32(1)
	if e.Mode&0o170000 == modeDir {
		nlink = 2
	}
	nameSize := len(e.Name) + 1 // NUL-terminated
	hdr := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		ino, e.Mode, 0, 0, nlink, 0, len(e.Data), 0, 0,
		e.RdevMajor, e.RdevMinor, nameSize, 0)
	// Header (110 bytes) plus name is padded to a multiple of 4, and so is
	// the data.
	buf := make([]byte, 0, len(hdr)+nameSize+3)
	buf = append(buf, hdr...)
	buf = append(buf, e.Name...)
	buf = append(buf, 0)
	buf = append(buf, make([]byte, pad4(len(buf)))...)
	if _, err := w.Write(buf); err != nil {
		return err
	}
	if len(e.Data) == 0 {
		return nil
	}
	if _, err := w.Write(e.Data); err != nil {
		return err
	}
	_, err := w.Write(make([]byte, pad4(len(e.Data))))
	return err
}

func pad4(n int) int { return (4 - n%4) % 4 }
