package host

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ChildPath is the only PATH a child of brick sees, and where brick looks
// programs up: root's PATH or the caller's environment cannot point brick
// at another iscsiadm.
const ChildPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// ChildEnv is the environment of every command brick runs: a fixed PATH
// and the C locale (output the parsers understand), plus extra. Nothing of
// brick's own environment (OS_PASSWORD, OS_TOKEN, CEPH_ARGS...) is passed on.
func ChildEnv(extra ...string) []string {
	return append([]string{"PATH=" + ChildPath, "LC_ALL=C"}, extra...)
}

// lookPath finds program in ChildPath; a name with a slash is used as given.
func lookPath(program string) (string, error) {
	if strings.Contains(program, "/") {
		return program, nil
	}
	for _, dir := range filepath.SplitList(ChildPath) {
		p := filepath.Join(dir, program)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in %s: %w", program, ChildPath, exec.ErrNotFound)
}

// FindProgram says whether h's runner can start program, before a step
// that would need it: the real runner looks it up in ChildPath; another
// runner (a test's scripted one) is trusted to have it.
func (h *Host) FindProgram(program string) error {
	if _, real := h.Runner.(*ExecRunner); !real {
		return nil
	}
	_, err := lookPath(program)
	return err
}
