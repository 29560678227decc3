package policy

import (
	"fmt"
	"go/ast"
	"go/token"
	"testing"
)

// fakeArgsAllowed lists the test files that may index a command's Args
// directly, and why.
var fakeArgsAllowed = map[string]string{
	// An Example has no *testing.T for hosttest.Arg: its fake checks the
	// length and returns an error naming the argv, which the example prints.
	"protocols/example_test.go": "an Example's fake, length checked",
	// go/ast's CallExpr.Args, indexed after length checks.
	"internal/policy/shell_test.go": "go/ast call arguments",
	// This check's own examples.
	"internal/policy/fakeargs_test.go": "examples for TestFakeArgsCatches",
}

// argsIndexes lists where f indexes a field named Args (cmd.Args[2])
// other than os.Args.
func argsIndexes(fset *token.FileSet, f *ast.File) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		ix, ok := n.(*ast.IndexExpr)
		if !ok {
			return true
		}
		sel, ok := ix.X.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Args" {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == "os" {
			return true
		}
		out = append(out, fmt.Sprintf("line %d", fset.Position(ix.Pos()).Line))
		return true
	})
	return out
}

// TestFakesReadArgsSafely: a fake command runner reads a command's
// arguments through hosttest.Arg, which fails the test showing the argv,
// so a changed command line cannot panic the whole test binary.
func TestFakesReadArgsSafely(t *testing.T) {
	for _, f := range parseTree(t) {
		if !f.test || fakeArgsAllowed[f.path] != "" {
			continue
		}
		for _, at := range argsIndexes(f.fset, f.ast) {
			t.Errorf("%s %s indexes a command's Args unchecked: use hosttest.Arg(t, cmd, i)", f.path, at)
		}
	}
}

func TestFakeArgsCatches(t *testing.T) {
	for body, want := range map[string]int{
		`_ = cmd.Args[0]`:                      1,
		`_ = c.cmd.Args[len(c.cmd.Args)-1]`:    1,
		`_ = os.Args[0]`:                       0,
		`_ = hosttest.Arg(t, cmd, 0)`:          0,
		`for _, a := range cmd.Args { _ = a }`: 0,
	} {
		fset, f, ok := parseSnippet(t, body)
		if !ok {
			t.Fatalf("snippet does not parse: %s", body)
		}
		if got := argsIndexes(fset, f); len(got) != want {
			t.Errorf("%s: %d found, want %d", body, len(got), want)
		}
	}
}
