package metrics

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// runbookSections are the sections every runbook has, in this order, as OpenShift's runbooks do.
var runbookSections = []string{"## Meaning", "## Impact", "## Diagnosis", "## Mitigation"}

// TestEveryAlertHasARunbook: each alert links, in its runbook_url annotation, to
// docs/runbooks/<alert>.md of this repository on GitHub; that file exists and has the sections
// an admin looks for; and no runbook is left without its alert.
func TestEveryAlertHasARunbook(t *testing.T) {
	root := filepath.Join("..", "..")
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var module string
	for _, l := range strings.Split(string(goMod), "\n") {
		if m, ok := strings.CutPrefix(l, "module "); ok {
			module = strings.TrimSpace(m)
		}
	}
	if !strings.HasPrefix(module, "github.com/") {
		t.Fatalf("module %q is not on GitHub; the runbook URLs assume it is", module)
	}
	base := "https://" + module + "/blob/main/docs/runbooks/"

	data, err := os.ReadFile(filepath.Join(root, "manifests", "010-prometheus-rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rule prometheusRule
	if err := yaml.Unmarshal(data, &rule); err != nil {
		t.Fatal(err)
	}
	var alerts []string
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			url, ok := r.Annotations["runbook_url"]
			switch {
			case !ok:
				t.Errorf("%s has no runbook_url annotation", r.Alert)
				continue
			case url != base+r.Alert+".md":
				t.Errorf("%s: runbook_url is %q, want %q", r.Alert, url, base+r.Alert+".md")
			}
			checkRunbook(t, root, "docs/runbooks/"+r.Alert+".md", r.Alert)
		}
	}
	if len(alerts) == 0 {
		t.Fatal("no alerts in manifests/010-prometheus-rules.yaml")
	}

	files, err := filepath.Glob(filepath.Join(root, "docs", "runbooks", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		if alert, ok := strings.CutSuffix(name, ".md"); !ok || !slices.Contains(alerts, alert) {
			t.Errorf("docs/runbooks/%s is the runbook of no alert in manifests/010-prometheus-rules.yaml", name)
		}
	}
}

// localLink is a Markdown link to another file of the same directory.
var localLink = regexp.MustCompile(`\]\(([A-Za-z0-9_.-]+\.md)\)`)

// checkRunbook checks the runbook at path, relative to the repository root.
func checkRunbook(t *testing.T, root, path, alert string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Errorf("%s has no runbook: %v", alert, err)
		return
	}
	text := string(data)
	if first, _, _ := strings.Cut(text, "\n"); first != "# "+alert {
		t.Errorf("%s: the runbook starts with %q, want the title %q", path, first, "# "+alert)
	}
	lines := strings.Split(text, "\n")
	var sections []string
	for _, l := range lines {
		if strings.HasPrefix(l, "## ") {
			sections = append(sections, strings.TrimSpace(l))
		}
	}
	if !slices.Equal(sections, runbookSections) {
		t.Errorf("%s: sections %q, want %q", path, sections, runbookSections)
	}
	for _, m := range localLink.FindAllStringSubmatch(text, -1) {
		if _, err := os.Stat(filepath.Join(root, filepath.Dir(path), m[1])); err != nil {
			t.Errorf("%s links to %s, which does not exist", path, m[1])
		}
	}
}
