package osauth

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"syscall"
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

// ReadFile reads path after checking the opened file (so it cannot be
// swapped between check and read). readableByOthers reports mode o+r, for
// the caller's warning when the file holds a secret. A missing file's
// error wraps fs.ErrNotExist.
func (t FileTrust) ReadFile(path string) (data []byte, readableByOthers bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if path != os.DevNull { // root's, and always empty
		if err := t.check(path, fi, "file"); err != nil {
			return nil, false, err
		}
	}
	data, err = io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, false, err
	}
	if len(data) > maxConfigBytes {
		return nil, false, fmt.Errorf("%s is larger than %d bytes: not a configuration file", path, maxConfigBytes)
	}
	return data, fi.Mode().Perm()&0o004 != 0, nil
}

// CheckDir refuses a directory (--host-root) that root would follow into
// another user's tree: not owned by root, or writable by group or others.
// A symlink is judged by its owner and then by its target.
func (t FileTrust) CheckDir(path string) error {
	if !t.Enforce {
		return nil
	}
	li, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if li.Mode()&fs.ModeSymlink != 0 {
		if err := t.check(path, li, "symlink"); err != nil {
			return err
		}
	}
	fi, err := os.Stat(path)
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
