// Package policy holds tests that keep the whole tree to brick's rules:
// no shell, os/exec only in the host layer, no fixed sleeps on connect or
// disconnect paths, and the package import rules of the README's Design table.
package policy

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/brick-storage/brick"

type goFile struct {
	path string // relative to the repository root
	pkg  string // directory relative to the root
	test bool
	ast  *ast.File
	fset *token.FileSet
}

// parseTree returns every .go file of the repository (not testdata),
// parsed once per test binary: the tests only read the trees.
func parseTree(t *testing.T) []goFile {
	t.Helper()
	files, err := parsedTree()
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// parsedTree is parseRepo's result, computed on first use.
var parsedTree = sync.OnceValues(parseRepo)

// parseRepo parses every .go file under the repository root; a file that
// does not parse in full keeps its imports.
func parseRepo() ([]goFile, error) {
	root, err := filepath.Abs("../..")
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return nil, fmt.Errorf("repository root not found: %w", err)
	}
	fset := token.NewFileSet()
	var files []goFile
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if name == "testdata" || (strings.HasPrefix(name, ".") && p != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			if f, err = parser.ParseFile(fset, p, nil, parser.ImportsOnly|parser.ParseComments); err != nil {
				return err
			}
		}
		rel, _ := filepath.Rel(root, p)
		files = append(files, goFile{path: rel, pkg: filepath.Dir(rel), test: strings.HasSuffix(p, "_test.go"), ast: f, fset: fset})
		return nil
	})
	return files, err
}

func imports(f *ast.File) []string {
	var out []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		out = append(out, p)
	}
	return out
}

// toolPackages are programs and test harnesses, not brick: they may run
// commands (qemu, benchmarks) themselves.
func toolPackage(pkg string) bool {
	return strings.HasPrefix(pkg, "bench") || strings.HasPrefix(pkg, "internal/testbed") || strings.HasPrefix(pkg, "test")
}

// TestExecOnlyInHost keeps os/exec (and syscall.Exec/ForkExec) inside the
// host layer, where the runner masks secrets and applies timeouts.
func TestExecOnlyInHost(t *testing.T) {
	for _, f := range parseTree(t) {
		if f.test || toolPackage(f.pkg) || f.pkg == "host" {
			continue
		}
		for _, imp := range imports(f.ast) {
			if imp == "os/exec" {
				t.Errorf("%s imports os/exec: run commands through host.Runner", f.path)
			}
		}
	}
}

// TestNoFixedSleeps: connect and disconnect wait on events or on the host
// layer's bounded poll (host.FS.WaitFor), never on a fixed sleep.
func TestNoFixedSleeps(t *testing.T) {
	for _, f := range parseTree(t) {
		if f.test || toolPackage(f.pkg) || f.path == filepath.Join("host", "wait.go") {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "time" && (sel.Sel.Name == "Sleep" || sel.Sel.Name == "After" || sel.Sel.Name == "Tick") {
				t.Errorf("%s uses time.%s: wait with host.FS.WaitFor (event-driven, bounded)", f.path, sel.Sel.Name)
			}
			return true
		})
	}
}

// allowedImports is the package graph of the README's Design table:
// each brick package and the brick packages it may import. A package not
// listed may import anything but cmd/brick and the test harnesses (tools,
// tests). Keep it in step with the README's table.
var allowedImports = map[string][]string{
	"host":                             {"ident", "secret"},
	"host/hosttest":                    {"host"},
	"ident":                            {},
	"apierr":                           {"ident"},
	"secret":                           {},
	"scsi":                             {"host", "ident"},
	"multipath":                        {"host", "ident"},
	"connector":                        {"host", "ident", "secret"},
	"connector/iscsi":                  {"connector", "scsi", "multipath", "host", "ident", "secret"},
	"connector/fc":                     {"connector", "scsi", "multipath", "host", "ident"},
	"connector/rbd":                    {"connector", "host", "ident", "secret"},
	"connector/nfs":                    {"connector", "host"},
	"connector/nvmeof":                 {"connector", "md", "host", "ident"},
	"md":                               {"host"},
	"osauth":                           {"apierr", "host", "ident", "secret"},
	"cinderapi":                        {"apierr", "connector", "ident", "osauth", "secret"},
	"ironicapi":                        {"apierr", "ident", "osauth", "secret"},
	"ironicattach":                     {"apierr", "ironicapi", "cinderapi", "connector", "rollback", "host", "ident", "internal/output"},
	"attach":                           {"apierr", "cinderapi", "connector", "scsi", "rollback", "host", "ident", "dmcrypt", "keymanager", "secret"},
	"rollback":                         {},
	"dmcrypt":                          {"host", "ident", "secret"},
	"keymanager":                       {"apierr", "ident"},
	"progress":                         {"ident"},
	"cinderapi/cindertest":             {},
	"ironicapi/ironictest":             {},
	"protocols":                        {"connector", "connector/...", "host"},
	"reconcile":                        {"apierr", "attach", "cinderapi", "connector", "connector/iscsi", "connector/nvmeof", "connector/rbd", "scsi", "multipath", "host", "ident"},
	"dockerplugin":                     {"attach", "cinderapi", "connector", "host", "ident"},
	"internal/output":                  {"ident"},
	"internal/settings":                {},
	"internal/completion":              {"attach", "host", "internal/output", "ironicapi"},
	"csi":                              {"apierr", "attach", "cinderapi", "connector", "host", "ident"},
	"internal/view":                    {"attach", "connector", "internal/output", "ironicattach"},
	"internal/cmd/factory":             {"attach", "cinderapi", "host", "internal/output", "progress"},
	"internal/cmd/ironic":              {"attach", "connector", "internal/cmd/connflags", "internal/cmd/factory", "internal/output", "internal/view", "ironicapi", "ironicattach", "protocols"},
	"internal/cmd/factory/factorytest": {"host", "internal/cmd/factory", "internal/output", "progress"},
	"internal/cmd/connflags":           {"attach", "connector", "connector/...", "host", "internal/cmd/factory", "multipath", "protocols"},
	"internal/cmd/csi":                 {"attach", "csi", "internal/cmd/connflags", "internal/cmd/factory", "internal/output"},
	"internal/cmd/dockerplugin":        {"attach", "cinderapi", "dockerplugin", "internal/cmd/connflags", "internal/cmd/factory", "internal/output"},
	"internal/cmd/volume":              {"attach", "cinderapi", "connector", "internal/cmd/connflags", "internal/cmd/factory", "internal/output", "internal/view", "ironicattach", "multipath"},
	"internal/cmd/connect":             {"connector", "host", "internal/cmd/connflags", "internal/cmd/factory", "internal/view"},
	"internal/cmd/reconcile":           {"connector", "host", "internal/cmd/connflags", "internal/cmd/factory", "internal/output", "reconcile"},
}

// allowed reports whether package pkg may import dep under allowedImports.
func allowed(pkg, dep string) (ok, listed bool) {
	deps, listed := allowedImports[pkg]
	if !listed {
		return true, false
	}
	for _, d := range deps {
		if d == dep || (strings.HasSuffix(d, "/...") && strings.HasPrefix(dep, strings.TrimSuffix(d, "..."))) {
			return true, true
		}
	}
	return false, true
}

// TestImportRules enforces the README's package graph.
func TestImportRules(t *testing.T) {
	for _, f := range parseTree(t) {
		if f.test {
			continue
		}
		for _, imp := range imports(f.ast) {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, module+"/")
			ok, _ := allowed(f.pkg, dep)
			switch {
			case dep == "cmd/brick" || strings.HasPrefix(dep, "cmd/brick/"):
				t.Errorf("%s imports %s: nothing imports the command", f.path, dep)
			case !toolPackage(f.pkg) && (strings.HasPrefix(dep, "internal/testbed") || strings.HasPrefix(dep, "test")):
				t.Errorf("%s imports %s: test harnesses stay out of brick", f.path, dep)
			case !ok:
				t.Errorf("%s imports %s: %s may import only %v (README, package graph)", f.path, dep, f.pkg, allowedImports[f.pkg])
			}
		}
	}
}

// TestEveryPackageListed makes a new library package take its place in the
// package graph before it lands.
func TestEveryPackageListed(t *testing.T) {
	for _, f := range parseTree(t) {
		if f.test || toolPackage(f.pkg) || f.pkg == "." || strings.HasPrefix(f.pkg, "cmd/") || strings.HasPrefix(f.pkg, "internal/") {
			continue
		}
		if _, listed := allowedImports[f.pkg]; !listed {
			t.Errorf("%s: package %s is not in allowedImports (internal/policy) nor in the README's package graph", f.path, f.pkg)
		}
	}
}
