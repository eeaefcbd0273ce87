package controller_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"slices"
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

const module = "github.com/samples-operator-dev/cluster-samples-operator"

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

// TestDecidingPackagesUseNoClient follows each deciding package's whole import graph, as `go
// list -deps` gives it: a helper that imports an informer makes every package importing it
// client code too, however deep it sits.
func TestDecidingPackagesUseNoClient(t *testing.T) {
	pure := purePackages(t)
	if len(pure) == 0 {
		t.Fatal("hack/pure-packages lists no package")
	}
	args := []string{"list", "-deps", "-json=ImportPath,Imports"}
	for _, name := range pure {
		args = append(args, "../"+name)
	}
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list of hack/pure-packages: %v\n%s", err, stderr.String())
	}
	imports := map[string][]string{}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		imports[p.ImportPath] = p.Imports
	}
	for _, name := range pure {
		root := module + "/pkg/" + name
		// Breadth first, each package reached remembering its importer, to name the chain.
		importer := map[string]string{root: ""}
		for queue := []string{root}; len(queue) > 0; queue = queue[1:] {
			path := queue[0]
			if slices.ContainsFunc(clientImports, func(c string) bool { return strings.Contains(path, c) }) {
				chain := path
				for p := importer[path]; p != ""; p = importer[p] {
					chain = strings.TrimPrefix(p, module+"/") + " -> " + chain
				}
				t.Errorf("%s: pkg/%s decides without clients (hack/pure-packages); read through its controller instead", chain, name)
				continue
			}
			for _, next := range imports[path] {
				if _, seen := importer[next]; !seen {
					importer[next] = path
					queue = append(queue, next)
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
