package policy

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// fileCalls are the os, unix and syscall functions that touch the
// filesystem. Outside host they would skip its root (--host-root, fixture
// trees) and its checks (no symlinks followed, private directories).
var fileCalls = map[string]bool{
	"Open": true, "OpenFile": true, "Create": true, "CreateTemp": true, "Mkdir": true, "MkdirAll": true,
	"MkdirTemp": true, "Remove": true, "RemoveAll": true, "ReadFile": true, "WriteFile": true, "ReadDir": true,
	"Stat": true, "Lstat": true, "Chmod": true, "Chown": true, "Lchown": true, "Chtimes": true, "Rename": true,
	"Link": true, "Symlink": true, "Readlink": true, "Truncate": true, "DirFS": true, "Openat": true,
	"Creat": true, "Mkdirat": true, "Unlink": true, "Unlinkat": true, "Rmdir": true, "Fstatat": true,
	"Fchmodat": true, "Renameat": true, "Mount": true, "Unmount": true,
}

// harnessPackage: test support that is not a _test.go file.
func harnessPackage(pkg string) bool {
	return toolPackage(pkg) || pkg == filepath.Join("internal", "testca")
}

// fileCallUses lists f's calls of fileCalls on os, unix or syscall.
func fileCallUses(fset *token.FileSet, f *ast.File) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		name := calleeName(call.Fun)
		pkg, fn, ok := strings.Cut(name, ".")
		if ok && (pkg == "os" || pkg == "unix" || pkg == "syscall") && fileCalls[fn] {
			out = append(out, fset.Position(call.Pos()).String()+": "+name)
		}
		return true
	})
	return out
}

// TestFilesOnlyThroughHost: host is the only door to the machine's files
// too, as it is for commands; tests and harnesses may build fixtures.
func TestFilesOnlyThroughHost(t *testing.T) {
	for _, f := range parseTree(t) {
		if f.test || harnessPackage(f.pkg) || f.pkg == "host" || strings.HasPrefix(f.pkg, "host/") {
			continue
		}
		for _, u := range fileCallUses(f.fset, f.ast) {
			t.Errorf("%s: %s: use host.FS (host paths) or host's Input functions (files the user names)", f.path, u)
		}
	}
}

// TestFilesOnlyThroughHostCatches proves the check finds file calls and
// leaves alone what only looks like one.
func TestFilesOnlyThroughHostCatches(t *testing.T) {
	for _, src := range []string{
		`os.MkdirAll(p, 0o755)`, `f, _ := os.OpenFile(p, os.O_RDONLY, 0)`, `os.Remove(p)`, `os.ReadFile(p)`,
		`os.Stat(p)`, `os.Lstat(p)`, `os.Chmod(p, 0o600)`, `unix.Lstat(p, &st)`, `syscall.Unlink(p)`, `os.RemoveAll(p)`,
	} {
		fset, f, _ := parseSnippet(t, src)
		if len(fileCallUses(fset, f)) == 0 {
			t.Errorf("not caught: %s", src)
		}
	}
	for _, src := range []string{`os.Getenv("X")`, `h.FS.MkdirAll(p, 0o755)`, `os.Geteuid()`, `unix.Major(dev)`, `fs.Stat(p)`} {
		fset, f, _ := parseSnippet(t, src)
		if u := fileCallUses(fset, f); len(u) != 0 {
			t.Errorf("false alarm %v: %s", u, src)
		}
	}
}
