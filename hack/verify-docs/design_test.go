package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// designRepo writes a repository whose pkg/operator runs three controllers (one built in a
// helper function) and whose design.md says what is given.
func designRepo(t *testing.T, design string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"pkg/operator/operator.go": `package operator

import (
	"example.com/m/pkg/controller/alpha"
	betacontrol "example.com/m/pkg/controller/betacontrol"
	"example.com/m/pkg/controller/gamma"
)

func run() {
	g := newGamma()
	first := []runnable{{alpha.New(), 1}}
	later := []runnable{{betacontrol.New(x), opts.Workers}, {g, 4}}
	_, _ = first, later
}
`,
		"pkg/operator/gamma.go": `package operator

import "example.com/m/pkg/controller/gamma"

func newGamma() factory.Controller { return gamma.New() }
`,
		"pkg/controller/doc.go": "package controller\n",
		"pkg/beta/beta.go":      "package beta\n",
		"pkg/shell/shell.go":    "package shell\n",
		"hack/pure-packages":    "# deciding\nbeta\n",
		"docs/design.md":        design,
	}
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const goodDesign = `# Design

| controller | workers | starts | its job |
|---|---|---|---|
| ` + "`alpha`" + ` | 1 | at once | a |
| ` + "`betacontrol`" + ` | 8 (flag) | once the caches are synced | b |
| ` + "`gamma`" + ` | 4 | once the caches are synced | g |

| package | what it holds |
|---|---|
| ` + "`pkg/operator`" + ` | the wiring |
| ` + "`pkg/controller/*`" + ` | the controllers |
| ` + "`pkg/beta`" + ` | pure: b |
| ` + "`pkg/shell`" + ` | s |
`

func TestDesignTablesMatchingTheCodePass(t *testing.T) {
	problems, err := checkDesign(designRepo(t, goodDesign))
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Errorf("problems in a design.md that matches the code: %v", problems)
	}
}

func TestDesignTablesThatDriftAreReported(t *testing.T) {
	cases := map[string]struct{ from, to, want string }{
		"a controller missing":        {"| `gamma` | 4 | once the caches are synced | g |\n", "", "controller gamma: pkg/operator runs it, the controller table lacks it"},
		"a controller not run":        {"| `gamma` |", "| `delta` |", "controller delta: pkg/operator runs no such controller"},
		"workers":                     {"| `gamma` | 4 |", "| `gamma` | 2 |", "controller gamma: pkg/operator runs it with 4 workers"},
		"starts at once":              {"| 1 | at once |", "| 1 | later |", `controller alpha: the table says it starts "later", but pkg/operator starts it at once`},
		"starts later":                {"| 4 | once the caches are synced |", "| 4 | at once |", `controller gamma: the table says it starts "at once", but pkg/operator starts it later`},
		"a package without a row":     {"| `pkg/shell` | s |\n", "", "package map: pkg/shell has no row"},
		"a row without a package":     {"| `pkg/shell` | s |", "| `pkg/shell`, `pkg/gone` | s |", "package map: pkg/gone is not a package"},
		"a pure package not pure":     {"| `pkg/beta` | pure: b |", "| `pkg/beta` | b |", "package map: pkg/beta is in hack/pure-packages"},
		"a shell package called pure": {"| `pkg/shell` | s |", "| `pkg/shell` | pure: s |", "package map: pkg/shell is called pure"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(goodDesign, c.from) {
				t.Fatalf("the case edits %q, which design.md lacks", c.from)
			}
			problems, err := checkDesign(designRepo(t, strings.Replace(goodDesign, c.from, c.to, 1)))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(problems, func(p Problem) bool { return strings.Contains(p.Message, c.want) }) {
				t.Errorf("problems %v, want one saying %q", problems, c.want)
			}
		})
	}
}
