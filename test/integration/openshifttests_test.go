package integration

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
)

// TestMakeTestOpenShiftRunsEveryRealServerTest: `make test-openshift` runs the tests that exist
// for the real OpenShift servers by a name pattern (OPENSHIFT_TESTS in the Makefile); every test
// that requires them (requireReal, called by the test itself or by a helper of this package it
// calls, as newEnvRealMirror or the CVO harness) must match it, or the target silently leaves it
// out. Each alternative of the pattern must match one of them, or it names a test that is gone.
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
	needReal := realServerTests(t)
	if len(needReal) == 0 {
		t.Fatal("found no test that calls requireReal")
	}
	t.Logf("tests that need the real servers: %s", strings.Join(needReal, ", "))
	for _, name := range needReal {
		if !pattern.MatchString(name) {
			t.Errorf("%s requires the real servers but make test-openshift (OPENSHIFT_TESTS) does not run it", name)
		}
	}
	for _, alt := range strings.Split(string(m[1]), "|") {
		re := regexp.MustCompile(alt)
		if !slices.ContainsFunc(needReal, re.MatchString) {
			t.Errorf("OPENSHIFT_TESTS names %s, which matches no test that requires the real servers", alt)
		}
	}
}

// realServerTests are the tests of this package that call requireReal, directly or through the
// package's own functions and methods, sorted. A method is known by its name alone (a call
// x.m() may reach any method m of the package): that errs towards a test too many, never one
// too few.
func realServerTests(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var decls []*ast.FuncDecl
	funcs, methods := map[string]bool{}, map[string]bool{}
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Body != nil {
				decls = append(decls, fn)
				if fn.Recv == nil {
					funcs[fn.Name.Name] = true
				} else {
					methods[fn.Name.Name] = true
				}
			}
		}
	}
	key := func(fn *ast.FuncDecl) string {
		if fn.Recv == nil {
			return "func " + fn.Name.Name
		}
		return "method " + fn.Name.Name
	}
	// uses: what each function or method refers to (calls, or passes on to be called: t.Run's
	// function, a scene's).
	uses := map[string]map[string]bool{}
	for _, fn := range decls {
		refs := map[string]bool{}
		var visit func(n ast.Node) bool
		visit = func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if methods[n.Sel.Name] {
					refs["method "+n.Sel.Name] = true
				}
				ast.Inspect(n.X, visit)
				return false
			case *ast.Ident:
				if funcs[n.Name] {
					refs["func "+n.Name] = true
				}
			}
			return true
		}
		ast.Inspect(fn.Body, visit)
		k := key(fn)
		if uses[k] == nil {
			uses[k] = map[string]bool{}
		}
		for r := range refs {
			uses[k][r] = true
		}
	}
	needs := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for k, refs := range uses {
			if needs[k] {
				continue
			}
			for r := range refs {
				if r == "func requireReal" || needs[r] {
					needs[k], changed = true, true
					break
				}
			}
		}
	}
	var tests []string
	for _, fn := range decls {
		if fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") && fn.Name.Name != "TestMain" && needs[key(fn)] {
			tests = append(tests, fn.Name.Name)
		}
	}
	slices.Sort(tests)
	return tests
}
