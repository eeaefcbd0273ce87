package main

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestSlugIsGitHubsAnchor(t *testing.T) {
	cases := map[string]string{
		"Design":                  "design",
		"The `oc samples` plugin": "the-oc-samples-plugin",
		"`oc samples`: what each sample is doing, and who uses it": "oc-samples-what-each-sample-is-doing-and-who-uses-it",
		"Adding a Config setting: checklist":                       "adding-a-config-setting-checklist",
		"What on a managed sample is the admin's":                  "what-on-a-managed-sample-is-the-admins",
		"Links [in](x.md) and *emphasis*":                          "links-in-and-emphasis",
		"snake_case and two  spaces":                               "snake_case-and-two--spaces",
		"Stand-ins vs. the real server (OPENSHIFT_BIN_DIR)":        "stand-ins-vs-the-real-server-openshift_bin_dir",
	}
	for heading, want := range cases {
		if got := Slug(heading); got != want {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

func TestParseDocFindsAnchorsLinksAndCode(t *testing.T) {
	doc := ParseDoc("# Title\n" +
		"\n" +
		"See [the guide](docs/guide.md#setup) and ![a picture](img.png \"title\").\n" +
		"A span `make build` and a link in code `[not](a-link.md)`, then\n" +
		"a span over two lines `pkg/foo\n" +
		"bar` and [ref]: not-a-definition.\n" +
		"\n" +
		"## Title\n" +
		"\n" +
		"Setext heading\n" +
		"--------------\n" +
		"\n" +
		"```sh\n" +
		"make test   # [not](a-link-either.md)\n" +
		"## not a heading\n" +
		"```\n" +
		"\n" +
		"[def]: ./target.md\n" +
		"<a name=\"explicit\"></a>\n")
	var anchors []string
	for a := range doc.Anchors {
		anchors = append(anchors, a)
	}
	sort.Strings(anchors)
	if want := []string{"explicit", "setext-heading", "title", "title-1"}; !slices.Equal(anchors, want) {
		t.Errorf("anchors %v, want %v", anchors, want)
	}
	var links []string
	for _, l := range doc.Links {
		links = append(links, l.Text)
	}
	if want := []string{"docs/guide.md#setup", "img.png", "./target.md"}; !slices.Equal(links, want) {
		t.Errorf("links %v, want %v", links, want)
	}
	if doc.Links[0].Line != 3 || doc.Links[2].Line != 18 {
		t.Errorf("link lines %d and %d, want 3 and 18", doc.Links[0].Line, doc.Links[2].Line)
	}
	var spans []string
	for _, s := range doc.Spans {
		spans = append(spans, s.Text)
	}
	if want := []string{"make build", "[not](a-link.md)", "pkg/foo bar"}; !slices.Equal(spans, want) {
		t.Errorf("spans %v, want %v", spans, want)
	}
	if doc.Spans[2].Line != 5 {
		t.Errorf("the span over two lines is on line %d, want 5", doc.Spans[2].Line)
	}
	var code []string
	for _, c := range doc.Code {
		code = append(code, c.Text)
	}
	if !slices.Contains(code, "make test   # [not](a-link-either.md)") || !slices.Contains(code, "## not a heading") {
		t.Errorf("the fenced lines are not code: %v", code)
	}
}

func TestMakeTargetsExpandVariablesAndReadPhony(t *testing.T) {
	targets := MakeTargets("BIN := _output/bin\n" +
		"GO ?= go\n" +
		".PHONY: all test \\\n" +
		"\tphony-only\n" +
		"all: build\n" +
		"build: $(BIN)/tool\n" +
		"$(BIN)/tool: FORCE\n" +
		"\t$(GO) build -o $@ ./cmd/tool\n" +
		"%.o: %.c\n" +
		"FORCE:\n" +
		"VAR = a:b\n" +
		"# commented: out\n" +
		"test: all\n")
	for _, want := range []string{"all", "test", "phony-only", "build", "_output/bin/tool", "FORCE"} {
		if !targets[want] {
			t.Errorf("no target %q in %v", want, targets)
		}
	}
	for _, not := range []string{"VAR", "%.o", "$(BIN)/tool", "commented", ".PHONY", "\t$(GO) build -o $@ ./cmd/tool"} {
		if targets[not] {
			t.Errorf("%q taken for a target", not)
		}
	}
}

func TestMakeInvocationsNameTheTargetsOnly(t *testing.T) {
	cases := map[string][]string{
		"make test": {"test"},
		"make test OPENSHIFT_BIN_DIR=/work/shared/x":     {"test"},
		"make verify test   # make nothing":              {"verify", "test"},
		"$ make bench":                                   {"bench"},
		"make bundle BUNDLE_DIR=_output/bundle \\":       {"bundle"},
		"cd x && make build; make -j4 test":              {"build", "test"},
		"what `make run-local` runs":                     {"run-local"},
		"make _output/bin/registry":                      {"_output/bin/registry"},
		"make -C hack/tools build":                       nil,
		"builds promtool (make verify, alert tests)":     nil,
		"(cd x && make build)":                           {"build"},
		"make <target>":                                  nil,
		"we make a point":                                nil,
		"make":                                           nil,
		"GOFLAGS=-mod=vendor make build":                 {"build"},
		"echo make test":                                 nil,
		"x=$(make -s print-target)":                      {"print-target"},
		"# make test is in a comment":                    nil,
		"oc samples skip python --force --dry-run; make": nil,
	}
	for code, want := range cases {
		if got := MakeInvocations(code); !slices.Equal(got, want) {
			t.Errorf("MakeInvocations(%q) = %q, want %q", code, got, want)
		}
	}
}

func TestRepoPathsAndPathExists(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"pkg/a/a.go", "test/controlplane/cp.go", "manifests/06-operator.yaml", "assets/operator/ocp/x.json"} {
		write(t, filepath.Join(root, f), "x")
	}
	if got, want := RepoPaths(`go test pkg/... ./cmd/elsewhere "manifests/x.yaml", (hack/y) https://e.org/pkg/z osa/pkg/w`), []string{"pkg/...", "manifests/x.yaml", "hack/y"}; !slices.Equal(got, want) {
		t.Errorf("RepoPaths = %q, want %q", got, want)
	}
	for p, want := range map[string]bool{
		"pkg/a/a.go":                    true,
		"pkg/a":                         true,
		"pkg/a/":                        true,
		"pkg/...":                       true,
		"pkg/a/...":                     true,
		"manifests/06-operator*.yaml":   true,
		"manifests/07-*.yaml":           false,
		"assets/operator/<arch>/x.json": true,
		"assets/nothing/<arch>/x.json":  false,
		"test/controlplane.ApplyDir":    true,
		"test/controlplane.Options.X":   true,
		"test/nothing.ApplyDir":         false,
		"pkg/a/b.go":                    false,
		"pkg/a.go":                      false,
	} {
		if got := PathExists(root, p); got != want {
			t.Errorf("PathExists(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestVerifyReportsEachKindOfProblem runs the whole check on a small repository.
func TestVerifyReportsEachKindOfProblem(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "Makefile"), ".PHONY: test\ntest:\n\tgo test ./...\nverify:\n")
	write(t, filepath.Join(root, "pkg/a/a.go"), "package a\n")
	write(t, filepath.Join(root, "README.md"), "# Repo\n\n"+
		"Run `make test` and `make verify`, never `make deploy`.\n"+
		"Read [the guide](docs/guide.md), [its setup](docs/guide.md#setup),\n"+
		"[a missing part](docs/guide.md#teardown), [nothing](docs/none.md),\n"+
		"[here](#repo), [not here](#elsewhere), [the web](https://example.org/x.md),\n"+
		"[a directory](pkg/) and [outside](../x.md).\n"+
		"Code in `pkg/a/a.go` and `pkg/b/b.go`.\n")
	write(t, filepath.Join(root, "docs/guide.md"), "# Guide\n\n## Setup\n\nBack to the [README](../README.md#repo).\n\n```sh\nmake tset\n```\n")
	write(t, filepath.Join(root, "test/integration/README.md"), "# Integration\n\nSee [the harness](harness_test.go).\n")
	problems, err := verify(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		`README.md:3: ` + "`make deploy`" + `: the Makefile has no target "deploy"`,
		`README.md:5: link "docs/guide.md#teardown": docs/guide.md has no heading with the anchor #teardown`,
		`README.md:5: link "docs/none.md": docs/none.md does not exist`,
		`README.md:6: link "#elsewhere": README.md has no heading with the anchor #elsewhere`,
		`README.md:7: link "../x.md" points outside the repository`,
		"README.md:8: `pkg/b/b.go`: no such file or directory in the repository",
		"docs/guide.md:8: `make tset`: the Makefile has no target \"tset\"",
		`test/integration/README.md:3: link "harness_test.go": test/integration/harness_test.go does not exist`,
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func write(t *testing.T, file, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
