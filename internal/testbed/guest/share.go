package guest

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/brick-storage/brick/host"
	scripts "github.com/brick-storage/brick/test/guest"
)

// ctlDir is the runner's own directory inside the share (the guest sees it
// as /brick/.brick). Names in Options.Files may not start with it.
const ctlDir = ".brick"

// guestShare is where the first stage mounts the share inside the guest.
const guestShare = "/brick"

// Hostname is the guest's host name.
const Hostname = "brick-guest"

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// envScript renders env as bash export lines, sorted so the file is stable.
// Values are single-quoted, so nothing in them is expanded by the guest.
func envScript(env map[string]string) (string, error) {
	keys := make([]string, 0, len(env))
	for k := range env {
		if !envName.MatchString(k) {
			return "", fmt.Errorf("environment variable name %q is not a shell identifier", k)
		}
		if k == "BRICK_SHARE" || k == "BRICK_FIXTURES" {
			return "", fmt.Errorf("environment variable %s is set by the runner", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# written by internal/testbed/guest\n")
	for _, k := range keys {
		if strings.ContainsRune(env[k], 0) {
			return "", fmt.Errorf("environment variable %s contains NUL", k)
		}
		fmt.Fprintf(&b, "export %s=%s\n", k, shellQuote(env[k]))
	}
	return b.String(), nil
}

// shellQuote quotes s for bash. Inside single quotes nothing is special
// except the quote itself, which is written as quote, backslash-quote, quote.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shareName checks a name from Options.Files: a relative, clean path that
// stays inside the share and does not touch the runner's directory.
func shareName(name string) (string, error) {
	clean := path.Clean(name)
	switch {
	case name == "" || strings.ContainsRune(name, 0):
		return "", fmt.Errorf("share name %q is empty or contains NUL", name)
	case path.IsAbs(name) || clean != name || clean == "." || clean == ".." || strings.HasPrefix(clean, "../"):
		return "", fmt.Errorf("share name %q must be a clean relative path inside the share", name)
	case clean == ctlDir || strings.HasPrefix(clean, ctlDir+"/"):
		return "", fmt.Errorf("share name %q is reserved for the runner", name)
	}
	return clean, nil
}

// HiddenDir is a host directory of brick's that the guest must not see
// through its overlay of the host's root, and the mode it is recreated with.
type HiddenDir struct {
	Path string
	Mode fs.FileMode
}

// HiddenDirs are brick's state and config directories and the initiators'
// records brick makes (open-iscsi's nodes, discovery and iface records,
// multipath's wwids and bindings): the first stage hides each behind a
// whiteout and the second recreates it empty (as the packages make them),
// so brick or iscsiadm used by hand on the host, or a change during a
// run, cannot steer a guest. /run, holding RunDir, LockDir and /run/lock,
// is a fresh tmpfs anyway.
var HiddenDirs = []HiddenDir{{host.LibDir, 0o700}, {"/etc/brick", 0o755},
	{"/etc/iscsi/nodes", 0o700}, {"/etc/iscsi/send_targets", 0o700}, {"/etc/iscsi/ifaces", 0o700},
	{"/etc/multipath", 0o755}}

// FreshDirs are the directories the second stage checks are empty when the
// script starts: each hidden one and brick's on the guest's own /run.
func FreshDirs() []string {
	dirs := []string{host.RunDir, host.LockDir, "/run/lock/brick"}
	for _, d := range HiddenDirs {
		dirs = append(dirs, d.Path)
	}
	return dirs
}

// configScript is read by the second stage (test/guest/init.sh).
func configScript(nics int, timeoutSec int) string {
	var hidden []string
	for _, d := range HiddenDirs {
		hidden = append(hidden, fmt.Sprintf("%s:%04o", d.Path, d.Mode))
	}
	return fmt.Sprintf("# written by internal/testbed/guest\nBRICK_NICS=%d\nBRICK_TIMEOUT=%d\nBRICK_HOSTNAME=%s\nBRICK_HIDDEN_DIRS=(%s)\nBRICK_FRESH_DIRS=(%s)\n",
		nics, timeoutSec, Hostname, strings.Join(hidden, " "), strings.Join(FreshDirs(), " "))
}

// hiddenList is the first stage's list of directories to hide, one a line.
func hiddenList() []byte {
	var b strings.Builder
	for _, d := range HiddenDirs {
		b.WriteString(d.Path + "\n")
	}
	return []byte(b.String())
}

// prepareShare fills dir (the host side of the share) with the init, the
// script, its environment, the fixtures and the caller's files.
func prepareShare(dir string, opts Options, timeoutSec int) error {
	env, err := envScript(opts.Env)
	if err != nil {
		return fmt.Errorf("prepare share: %w", err)
	}
	ctl := filepath.Join(dir, ctlDir)
	if err := os.MkdirAll(filepath.Join(ctl, "fixtures"), 0o755); err != nil {
		return fmt.Errorf("prepare share: %w", err)
	}
	files := map[string][]byte{
		"init.sh":   scripts.Init,
		"script.sh": []byte(opts.Script),
		"env.sh":    []byte(env),
		"config":    []byte(configScript(opts.NICs, timeoutSec)),
		"hidden":    hiddenList(),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(ctl, name), data, 0o755); err != nil {
			return fmt.Errorf("prepare share: write %s: %w", name, err)
		}
	}
	if err := copyFixtures(filepath.Join(ctl, "fixtures")); err != nil {
		return fmt.Errorf("prepare share: %w", err)
	}
	if err := copyFiles(dir, opts.Files); err != nil {
		return fmt.Errorf("prepare share: %w", err)
	}
	return nil
}

// copyFiles copies each host path of files to its name inside the share
// dir (Options.Files, Exec.Files).
func copyFiles(dir string, files map[string]string) error {
	names := make([]string, 0, len(files))
	for src := range files {
		names = append(names, src)
	}
	sort.Strings(names)
	taken := map[string]string{}
	for _, src := range names {
		name, err := shareName(files[src])
		if err != nil {
			return fmt.Errorf("file %s: %w", src, err)
		}
		if other, dup := taken[name]; dup {
			return fmt.Errorf("%s and %s both go to %s", other, src, name)
		}
		taken[name] = src
		if err := copyFile(src, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			return err
		}
	}
	return nil
}

func copyFixtures(dst string) error {
	entries, err := fs.ReadDir(scripts.Fixtures, "fixtures")
	if err != nil {
		return fmt.Errorf("list fixtures: %w", err)
	}
	for _, e := range entries {
		data, err := fs.ReadFile(scripts.Fixtures, "fixtures/"+e.Name())
		if err != nil {
			return fmt.Errorf("read fixture %s: %w", e.Name(), err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o755); err != nil {
			return fmt.Errorf("write fixture %s: %w", e.Name(), err)
		}
	}
	return nil
}

// copyFile copies src to dst keeping the permission bits, so binaries stay
// executable in the guest.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("copy %s: not a regular file", src)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}
