package integration

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// TestMakeTestOpenShiftRunsEveryRealServerTest: `make test-openshift` runs the tests that exist
// for the real OpenShift servers by a name pattern (OPENSHIFT_TESTS in the Makefile); every test
// that requires them (requireReal) must match it, or the target silently leaves it out.
func TestMakeTestOpenShiftRunsEveryRealServerTest(t *testing.T) {
	makefile, err := os.ReadFile(filepath.Join(controlplane.RepoRoot(), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^OPENSHIFT_TESTS := (.+)$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile has no OPENSHIFT_TESTS")
	}
	pattern := regexp.MustCompile(string(m[1]))
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var needReal []string
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "requireReal" {
						needReal = append(needReal, fn.Name.Name)
						return false
					}
				}
				return true
			})
		}
	}
	if len(needReal) == 0 {
		t.Fatal("found no test that calls requireReal")
	}
	for _, name := range needReal {
		if !pattern.MatchString(name) {
			t.Errorf("%s requires the real servers but make test-openshift (OPENSHIFT_TESTS) does not run it", name)
		}
	}
}
