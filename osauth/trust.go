package osauth

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"syscall"

	"github.com/brick-storage/brick/host"
)

// maxConfigBytes bounds a config file: they are a few KiB.
const maxConfigBytes = 1 << 20

// ErrUntrusted marks a config file or directory that brick, running as
// root, refuses because someone other than root could have written it.
var ErrUntrusted = errors.New("untrusted configuration")

// FileTrust decides whether a file may steer brick. As root, a clouds.yaml
// or brick.yaml another user can write names every server brick talks to
// and every credential it sends, so such files are refused.
type FileTrust struct {
	// Enforce: brick runs as root and the checks apply.
	Enforce bool
	// Owner is the uid trusted files belong to: 0 (tests use another).
	Owner uint32
}

// ProcessTrust is this process's trust: enforced when running as root.
func ProcessTrust() FileTrust {
	return FileTrust{Enforce: os.Geteuid() == 0}
}

// ReadFile reads path through the descriptor it checked (so the file
// cannot be swapped between check and read). readableByOthers reports
// mode o+r, for the caller's warning when the file holds a secret. A
// missing file's error wraps fs.ErrNotExist.
func (t FileTrust) ReadFile(path string) (data []byte, readableByOthers bool, err error) {
	data, err = host.NewFS("").ReadChecked(path, false, maxConfigBytes, func(fi fs.FileInfo) error {
		readableByOthers = fi.Mode().Perm()&0o004 != 0
		if path == os.DevNull { // root's, and always empty
			return nil
		}
		return t.CheckFile(path, fi)
	})
	if err != nil {
		return nil, false, err
	}
	return data, readableByOthers, nil
}

// CheckFile applies the trust rule to an opened file: as root, a regular
// file root owns that group and others cannot write. Every file a trusted
// setting names (clouds.yaml, its cacert, a fixed key file) passes it.
func (t FileTrust) CheckFile(path string, fi fs.FileInfo) error {
	return t.check(path, fi, "file")
}

// CheckDir refuses a directory (--host-root) that root would follow into
// another user's tree: not owned by root, or writable by group or others.
// A symlink is judged by its owner and then by its target.
func (t FileTrust) CheckDir(path string) error {
	if !t.Enforce {
		return nil
	}
	li, err := host.LstatInput(path)
	if err != nil {
		return err
	}
	if li.Mode()&fs.ModeSymlink != 0 {
		if err := t.check(path, li, "symlink"); err != nil {
			return err
		}
	}
	fi, err := host.StatInput(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", path)
	}
	return t.check(path, fi, "directory")
}

// check applies the owner and mode rules to one file, directory or link.
func (t FileTrust) check(path string, fi fs.FileInfo, kind string) error {
	if !t.Enforce {
		return nil
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case kind == "file" && !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %s is not a regular file (mode %s): brick runs as root and reads configuration only from root's files", ErrUntrusted, path, fi.Mode())
	case !ok:
		return fmt.Errorf("%w: %s: owner unknown", ErrUntrusted, path)
	case st.Uid != t.Owner:
		return fmt.Errorf("%w: %s %s is owned by uid %d, not uid %d (root): brick runs as root and would obey whoever can change it; fix: chown root %s, or use one root owns",
			ErrUntrusted, kind, path, st.Uid, t.Owner, path)
	case kind != "symlink" && fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%w: %s %s is writable by group or others (mode %04o): brick runs as root and would obey whoever can change it; fix: chmod go-w %s",
			ErrUntrusted, kind, path, fi.Mode().Perm(), path)
	}
	return nil
}

// WarnReadable warns that path, holding a secret, is readable by every
// local user.
func WarnReadable(log *slog.Logger, path, what string) {
	if log != nil {
		log.Warn(fmt.Sprintf("%s holds %s and every local user can read it; fix: chmod o-r %s (0600 is usual)", path, what, path))
	}
}
