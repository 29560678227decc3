package policy

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"regexp"
	"strconv"
	"testing"
)

// shellAllowed lists the files that may start a shell, and why. Anything
// else that does fails TestNoShell.
var shellAllowed = map[string]string{
	// Checks that the guest harness quotes environment values the way the
	// guest's bash reads them back: it needs the real bash.
	"internal/testbed/guest/guest_test.go": "tests the harness's quoting for bash",
	// Runs test/guest-slot.sh, a bash library, against the Go side of the
	// guest slot's queue.
	"internal/testbed/guest/slot_test.go": "tests test/guest-slot.sh's queue",
	// This check's own examples of what it catches.
	"internal/policy/shell_test.go": "examples for TestNoShellCatches",
}

var shellNames = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true, "csh": true, "tcsh": true, "fish": true}

func isShell(s string) bool { return s != "" && shellNames[path.Base(s)] }

// shellFlagC is a short-option cluster holding c: -c, -ec, -xc, -lc...
var shellFlagC = regexp.MustCompile(`^-[a-zA-Z]*c[a-zA-Z]*$`)

// shellLine is a shell command line written as one string ("sh -c ...").
var shellLine = regexp.MustCompile(`(^|[\s;|&(/"'])(sh|bash|dash|zsh|ksh|ash)\s+-[a-zA-Z]*c\b`)

// resolve returns the string an expression certainly evaluates to, when it
// can tell: literals, constants, variables initialised once from one,
// concatenations and exec.LookPath of one.
func resolve(e ast.Expr, depth int) (string, bool) {
	if depth > 8 {
		return "", false
	}
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			s, err := strconv.Unquote(x.Value)
			return s, err == nil
		}
	case *ast.ParenExpr:
		return resolve(x.X, depth+1)
	case *ast.BinaryExpr:
		if x.Op == token.ADD {
			a, ok1 := resolve(x.X, depth+1)
			b, ok2 := resolve(x.Y, depth+1)
			return a + b, ok1 && ok2
		}
	case *ast.CallExpr:
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "LookPath" && len(x.Args) == 1 {
			return resolve(x.Args[0], depth+1)
		}
	case *ast.Ident:
		if x.Obj == nil {
			return "", false
		}
		switch d := x.Obj.Decl.(type) {
		case *ast.ValueSpec:
			for i, n := range d.Names {
				if n.Name == x.Name && i < len(d.Values) {
					return resolve(d.Values[i], depth+1)
				}
			}
		case *ast.AssignStmt:
			for i, l := range d.Lhs {
				if id, ok := l.(*ast.Ident); ok && id.Name == x.Name {
					if len(d.Rhs) == len(d.Lhs) {
						return resolve(d.Rhs[i], depth+1)
					}
					if len(d.Rhs) == 1 && i == 0 {
						return resolve(d.Rhs[0], depth+1) // bash, err := exec.LookPath("bash")
					}
				}
			}
		}
	}
	return "", false
}

func calleeName(fun ast.Expr) string {
	switch f := fun.(type) {
	case *ast.SelectorExpr:
		if id, ok := f.X.(*ast.Ident); ok {
			return id.Name + "." + f.Sel.Name
		}
		return f.Sel.Name
	case *ast.Ident:
		return f.Name
	}
	return ""
}

func typeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.SelectorExpr:
		return t.Sel.Name
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// shellUses reports every way f starts a shell: a shell followed by a -c
// option anywhere in an argument or element list, a shell as the program
// of exec.Command/CommandContext, syscall.Exec, os.StartProcess, exec.Cmd
// or host.Command (a script file or stdin is user data through a shell
// too), and, with strict, a "sh -c" command line inside any string.
func shellUses(fset *token.FileSet, f *ast.File, strict bool) []string {
	var out []string
	report := func(n ast.Node, format string, args ...any) {
		out = append(out, fset.Position(n.Pos()).String()+": "+fmt.Sprintf(format, args...))
	}
	list := func(n ast.Node, exprs []ast.Expr) {
		for i, e := range exprs {
			s, ok := resolve(e, 0)
			if !ok || !isShell(s) {
				continue
			}
			for _, next := range exprs[i+1:] {
				if flag, ok := resolve(next, 0); ok && shellFlagC.MatchString(flag) {
					report(n, "runs %s %s", s, flag)
					break
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			list(x, x.Args)
			prog := -1
			switch calleeName(x.Fun) {
			case "exec.Command", "syscall.Exec", "os.StartProcess", "unix.Exec":
				prog = 0
			case "exec.CommandContext":
				prog = 1
			}
			if prog >= 0 && prog < len(x.Args) {
				if s, ok := resolve(x.Args[prog], 0); ok && isShell(s) {
					report(x, "%s runs the shell %s", calleeName(x.Fun), s)
				}
			}
		case *ast.CompositeLit:
			var elts []ast.Expr
			for _, e := range x.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					elts = append(elts, e)
					continue
				}
				key, _ := kv.Key.(*ast.Ident)
				if key != nil && ((key.Name == "Name" && typeName(x.Type) == "Command") || (key.Name == "Path" && typeName(x.Type) == "Cmd")) {
					if s, ok := resolve(kv.Value, 0); ok && isShell(s) {
						report(x, "%s{%s: %q} runs a shell", typeName(x.Type), key.Name, s)
					}
				}
			}
			list(x, elts)
		case *ast.BasicLit:
			if strict && x.Kind == token.STRING {
				if s, err := strconv.Unquote(x.Value); err == nil && shellLine.MatchString(s) {
					report(x, "string holds a shell command line %q", shellLine.FindString(s))
				}
			}
		}
		return true
	})
	return out
}

// TestNoShell fails if any Go file starts a shell: brick runs every command
// as an argv list, so no user data is ever parsed by a shell. Brick's own
// packages are also refused any "sh -c" command line inside a string.
func TestNoShell(t *testing.T) {
	for _, f := range parseTree(t) {
		if _, ok := shellAllowed[f.path]; ok {
			continue
		}
		for _, u := range shellUses(f.fset, f.ast, !toolPackage(f.pkg)) {
			t.Errorf("%s: %s: run the program as an argv list instead", f.path, u)
		}
	}
}

// TestNoShellCatches proves the check finds each way of starting a shell,
// and leaves alone what only looks like one.
func TestNoShellCatches(t *testing.T) {
	bad := map[string]string{
		"sh -c":             `exec.Command("sh", "-c", userData)`,
		"bash -c":           `exec.CommandContext(ctx, "bash", "-c", "iscsiadm "+iqn)`,
		"bash -ec":          `exec.Command("/bin/bash", "-ec", x)`,
		"split flags":       `exec.Command("sh", "-e", "-c", x)`,
		"/bin/sh script":    `exec.Command("/bin/sh", "/tmp/script.sh")`,
		"sh on stdin":       `c := exec.Command("sh"); c.Stdin = strings.NewReader(userData)`,
		"usr bin env":       `exec.Command("/usr/bin/env", "sh", "-c", x)`,
		"const shell":       "const shell = \"bash\"\nexec.Command(shell, \"-c\", x)",
		"var shell":         "shell := \"/bin/sh\"\nexec.Command(shell, x)",
		"lookpath":          "bash, _ := exec.LookPath(\"bash\")\nexec.Command(bash, x)",
		"host.Command":      `r.Run(ctx, host.Command{Name: "sh", Args: []string{"-c", x}})`,
		"host.Command bash": `r.Run(ctx, host.Command{Name: "/usr/bin/bash", Args: []string{script}})`,
		"args list":         `args := []string{"nsenter", "-t", "1", "sh", "-c", x}`,
		"exec.Cmd":          `c := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", x}}`,
		"syscall.Exec":      `syscall.Exec("/bin/sh", []string{"sh", "-c", x}, nil)`,
		"command line":      `args := strings.Fields("sh -c " + x)`,
		"concat":            `exec.Command("/bin/" + "sh", "-c", x)`,
	}
	for name, src := range bad {
		uses := shellUses(parseSnippet(t, src))
		if len(uses) == 0 {
			t.Errorf("%s: not caught: %s", name, src)
		}
	}
	good := map[string]string{
		"columns":     `run("brick", "list", "-c", "volume")`,
		"completion":  `for _, sh := range []string{"bash", "zsh", "fish"} { completion(sh) }`,
		"argv":        `exec.Command("iscsiadm", "-m", "node", "-T", iqn)`,
		"host.Cmd":    `r.Run(ctx, host.Command{Name: "multipath", Args: []string{"-c", dev}})`,
		"shell word":  `log("the shell is not used")`,
		"bash script": `x := "#!/bin/bash\necho hi"`,
	}
	for name, src := range good {
		if uses := shellUses(parseSnippet(t, src)); len(uses) != 0 {
			t.Errorf("%s: false alarm %v: %s", name, uses, src)
		}
	}
}

func parseSnippet(t *testing.T, body string) (*token.FileSet, *ast.File, bool) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "snippet.go", "package p\nfunc f() {\n"+body+"\n}\n", 0)
	if err != nil {
		t.Fatalf("parse %q: %v", body, err)
	}
	return fset, f, true
}
