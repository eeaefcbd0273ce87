package controlplane

import (
	"os"
	"path/filepath"
	"testing"
)

// Under -trimpath RepoRoot knows the module's path, not its directory: the checkout is found
// from the working directory, past a nested module of another name (hack/tools is one).
func TestCheckoutDeclaringFindsTheModuleAboveANestedOne(t *testing.T) {
	root := t.TempDir()
	writeFile := func(rel, content string) {
		t.Helper()
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile("go.mod", "// the checkout\nmodule \"example.com/operator\"\n\ngo 1.25.0\n")
	writeFile("hack/tools/go.mod", "module example.com/operator/hack/tools\n")
	writeFile("hack/tools/cmd/x.go", "package main\n")
	t.Chdir(filepath.Join(root, "hack", "tools", "cmd"))

	got, err := checkoutDeclaring("example.com/operator")
	if err != nil || got != root {
		t.Errorf("checkoutDeclaring(example.com/operator) = %q, %v; want %q", got, err, root)
	}
	if got, err := checkoutDeclaring("example.com/elsewhere"); err == nil {
		t.Errorf("checkoutDeclaring(example.com/elsewhere) = %q, want an error: no go.mod declares it", got)
	}
}

// The test binary of make test is built with -trimpath, so this is the path RepoRoot takes
// there; under a plain go test it takes the caller's absolute file name. Either way it names
// this checkout.
func TestRepoRootIsTheCheckoutOfThisPackage(t *testing.T) {
	t.Setenv("CSO_REPO_ROOT", "")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Dir(filepath.Dir(wd)); RepoRoot() != want {
		t.Errorf("RepoRoot() = %q, want %q (two levels above the package's directory)", RepoRoot(), want)
	}
}
