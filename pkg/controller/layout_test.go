package controller_test

import (
	"bufio"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// clientImports are what reads or writes a cluster: a package that imports one is no longer a
// plain function of its arguments.
var clientImports = []string{
	"k8s.io/client-go/kubernetes",
	"k8s.io/client-go/rest",
	"k8s.io/client-go/dynamic",
	"k8s.io/client-go/discovery",
	"k8s.io/client-go/informers",
	"k8s.io/client-go/listers",
	"k8s.io/client-go/tools/",
	"/clientset/",
	"/informers/",
	"/listers/",
	"github.com/openshift/library-go/pkg/controller",
	"github.com/openshift/library-go/pkg/operator/events",
}

func purePackages(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../../hack/pure-packages")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	for s := bufio.NewScanner(f); s.Scan(); {
		if line := strings.TrimSpace(s.Text()); line != "" && !strings.HasPrefix(line, "#") {
			names = append(names, line)
		}
	}
	return names
}

func TestDecidingPackagesUseNoClient(t *testing.T) {
	pure := purePackages(t)
	if len(pure) == 0 {
		t.Fatal("hack/pure-packages lists no package")
	}
	for _, name := range pure {
		files, err := filepath.Glob(filepath.Join("..", name, "*.go"))
		if err != nil || len(files) == 0 {
			t.Errorf("pkg/%s, listed in hack/pure-packages, has no Go file (%v)", name, err)
			continue
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range parsed.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				for _, client := range clientImports {
					if strings.Contains(path, client) {
						t.Errorf("%s imports %s: pkg/%s decides without clients (hack/pure-packages); read through its controller instead", file, path, name)
					}
				}
			}
		}
	}
}

// A controller named Xcontrol carries out what pkg/X decides: pkg/X must exist and be a deciding
// package, so that the name never promises a pairing that is not there.
func TestEachControlControllerHasADecidingTwin(t *testing.T) {
	pure := map[string]bool{}
	for _, name := range purePackages(t) {
		pure[name] = true
	}
	controllers, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	pairs := 0
	for _, c := range controllers {
		twin, isControl := strings.CutSuffix(c.Name(), "control")
		if !c.IsDir() || !isControl {
			continue
		}
		pairs++
		if !pure[twin] {
			t.Errorf("pkg/controller/%s is named after pkg/%s, which hack/pure-packages does not list as deciding without clients", c.Name(), twin)
		}
	}
	if pairs == 0 {
		t.Error("no pkg/controller/*control package found")
	}
}
