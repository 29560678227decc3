package policy

import (
	"strings"
	"testing"
)

// startupCost lists imports whose package initialisers every brick
// command pays, get-connector included, with what to use
// instead. Tests may import them, to compare brick with what it replaced.
var startupCost = map[string]string{
	"gopkg.in/yaml.v2": "go.yaml.in/yaml/v3, which brick links anyway",
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds": "osauth's own clouds.yaml types (the package brings gopkg.in/yaml.v2)",
	"github.com/cpuguy83/go-md2man/v2/md2man":                       "the man pages' test (make man)",
}

// TestNoStartupCost keeps the listed packages out of the binary's own
// files; for the identifier checks, regexp too (ident_test fuzzes them
// against the patterns they replaced).
func TestNoStartupCost(t *testing.T) {
	for _, f := range parseTree(t) {
		if f.test || toolPackage(f.pkg) {
			continue
		}
		for _, imp := range imports(f.ast) {
			if instead, ok := startupCost[imp]; ok {
				t.Errorf("%s imports %s: its initialisers slow every command; use %s", f.path, imp, instead)
			}
			if imp == "regexp" && strings.HasPrefix(f.pkg, "ident") {
				t.Errorf("%s imports regexp: check identifiers byte by byte", f.path)
			}
		}
	}
}
