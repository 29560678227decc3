package policy

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxMethods bounds the methods (exported or not) declared on one named
// type: past it a type does several jobs, and its users see one interface
// of everything. Split it along its seams into small types sharing deps.
const maxMethods = 30

// maxFuncLines bounds a function or method, from its signature's line to
// its closing brace, so each reads at once.
const maxFuncLines = 60

// receiverName returns the named type of a method's receiver.
func receiverName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// productionFiles are the files brick ships: not tests, tools or harnesses.
func productionFiles(t *testing.T) []goFile {
	var out []goFile
	for _, f := range parseTree(t) {
		if !f.test && !harnessPackage(f.pkg) {
			out = append(out, f)
		}
	}
	return out
}

// methodCounts counts the methods declared on each named type, keyed
// "pkg.Type".
func methodCounts(files []goFile) map[string]int {
	n := map[string]int{}
	for _, f := range files {
		for _, d := range f.ast.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				if r := receiverName(fd); r != "" {
					n[filepath.ToSlash(f.pkg)+"."+r]++
				}
			}
		}
	}
	return n
}

// TestTypesStaySmall: no type declares more than maxMethods methods.
func TestTypesStaySmall(t *testing.T) {
	for typ, n := range methodCounts(productionFiles(t)) {
		if n > maxMethods {
			t.Errorf("%s has %d methods (limit %d): split it along its seams into small types sharing deps", typ, n, maxMethods)
		}
	}
}

// longFuncs lists the functions of f over maxFuncLines, as
// "path:line: name (n lines)".
func longFuncs(f goFile) []string {
	var out []string
	for _, d := range f.ast.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start, end := f.fset.Position(fd.Pos()), f.fset.Position(fd.End())
		if n := end.Line - start.Line + 1; n > maxFuncLines {
			name := fd.Name.Name
			if r := receiverName(fd); r != "" {
				name = r + "." + name
			}
			out = append(out, fmt.Sprintf("%s:%d: %s (%d lines)", f.path, start.Line, name, n))
		}
	}
	return out
}

// TestFunctionsStayShort: no production function is over maxFuncLines.
func TestFunctionsStayShort(t *testing.T) {
	var long []string
	for _, f := range productionFiles(t) {
		long = append(long, longFuncs(f)...)
	}
	sort.Strings(long)
	for _, l := range long {
		t.Errorf("%s: over %d lines: split it into steps that read at once", l, maxFuncLines)
	}
}

// TestShapeChecksCatch proves both counters see what they should.
func TestShapeChecksCatch(t *testing.T) {
	var b strings.Builder
	b.WriteString("type T struct{}\n")
	for i := range maxMethods + 1 {
		fmt.Fprintf(&b, "func (t *T) m%d() {}\n", i)
	}
	b.WriteString("func (g G[K]) one() {}\nfunc long() {\n" + strings.Repeat("_ = 1\n", maxFuncLines) + "}\n")
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", "package p\n"+b.String(), 0)
	if err != nil {
		t.Fatal(err)
	}
	n := methodCounts([]goFile{{pkg: "p", ast: f, fset: fset}})
	if n["p.T"] != maxMethods+1 || n["p.G"] != 1 {
		t.Errorf("method counts %v", n)
	}
	if l := longFuncs(goFile{path: "p/x.go", ast: f, fset: fset}); len(l) != 1 || !strings.Contains(l[0], "long (62 lines)") {
		t.Errorf("long functions %v", l)
	}
}
