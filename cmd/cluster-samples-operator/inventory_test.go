package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runInventory runs `cluster-samples-operator inventory <args>` on a fresh command, so
// flag values never carry over between runs. (It does not go through newRootCommand,
// whose operator flags may only be registered once per process.)
func runInventory(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newInventoryCommand()
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

func TestInventoryList(t *testing.T) {
	t.Setenv(inventoryDirEnv, "")
	out, summary, err := runInventory(t, "--arch", "x86_64", "list")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "KIND") {
		t.Fatalf("no header: %q", lines[0])
	}
	nameCol := strings.Index(lines[0], "NAME")
	tagsCol := strings.Index(lines[0], "TAGS")
	streams, templates := 0, 0
	for _, l := range lines[1:] {
		// Aligned table: every row's columns start where the header's do.
		if l[nameCol-1] != ' ' || l[nameCol] == ' ' || l[tagsCol-1] != ' ' || l[tagsCol] == ' ' {
			t.Errorf("row not aligned with header: %q", l)
		}
		switch f := strings.Fields(l); f[0] {
		case "ImageStream":
			streams++
			if f[1] == "python" && f[2] != "3.6-ubi8,3.9-ubi8,3.12-ubi8,3.9-ubi9,3.12-ubi9,3.12-minimal-ubi9,3.12-minimal-ubi10,latest" {
				t.Errorf("python tags = %q", f[2])
			}
		case "Template":
			templates++
		}
	}
	// openshift/library's ocp-x86_64 at the locked commit (assets/library.lock).
	if streams != 53 || templates != 50 {
		t.Errorf("list shows %d imagestreams and %d templates, want 53 and 50", streams, templates)
	}
	if !strings.Contains(out, "ImageStream  jenkins ") || !strings.Contains(out, "Template     jenkins-ephemeral ") {
		t.Errorf("jenkins samples missing from:\n%s", out)
	}
	if !strings.HasPrefix(summary, "ocp-x86_64: ") {
		t.Errorf("summary on stderr = %q", summary)
	}
}

func TestInventoryArchSelection(t *testing.T) {
	t.Setenv(inventoryDirEnv, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--arch", "amd64"}, "ocp-x86_64: "},
		{[]string{"--arch", "arm64"}, "ocp-aarch64: "},
		{[]string{"--arch", "ppc64le"}, "ocp-ppc64le: "},
		{[]string{"--arch", "s390x"}, "ocp-s390x: "},
		{[]string{"--arch", "x86_64", "--okd"}, "okd-x86_64: "},
		{[]string{"--arch", "okd-x86_64"}, "okd-x86_64: "},
	} {
		_, summary, err := runInventory(t, append(tc.args, "list")...)
		if err != nil || !strings.HasPrefix(summary, tc.want) {
			t.Errorf("%v: summary %q, error %v; want %q", tc.args, summary, err, tc.want)
		}
	}
}

func TestInventoryImages(t *testing.T) {
	t.Setenv(inventoryDirEnv, "")
	plain, _, err := runInventory(t, "--arch", "x86_64", "images")
	if err != nil {
		t.Fatal(err)
	}
	refs := strings.Fields(plain)
	if len(refs) < 200 || !strings.Contains(plain, "registry.redhat.io/ubi10/python-312-minimal:latest\n") {
		t.Fatalf("images output has %d refs:\n%s", len(refs), plain)
	}
	for i := 1; i < len(refs); i++ {
		if refs[i-1] >= refs[i] {
			t.Errorf("not sorted and unique: %q then %q", refs[i-1], refs[i])
		}
	}

	rewritten, _, err := runInventory(t, "--arch", "x86_64", "--registry", "mirror.example:5000", "images")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range strings.Fields(rewritten) {
		if !strings.HasPrefix(ref, "mirror.example:5000/") || strings.Count(ref, "/") != 2 {
			t.Errorf("not rewritten onto the mirror: %q", ref)
		}
	}
	if !strings.Contains(rewritten, "mirror.example:5000/ubi10/python-312-minimal:latest\n") ||
		!strings.Contains(rewritten, "mirror.example:5000/openjdk/openjdk-11-rhel7:1.17\n") {
		t.Errorf("expected rewritten refs missing:\n%s", rewritten)
	}

	okd, _, err := runInventory(t, "--arch", "x86_64", "--okd", "--registry", "m.example/samples", "images")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(okd, "m.example/samples/ubi10/python-312-minimal:latest\n") || !strings.Contains(okd, "m.example/samples/openshift/origin-jenkins:4.13\n") {
		t.Errorf("OKD refs not rewritten:\n%s", okd)
	}
}

func TestInventoryImagesOCMirror(t *testing.T) {
	t.Setenv(inventoryDirEnv, "")
	out, _, err := runInventory(t, "--arch", "x86_64", "images", "--format", "oc-mirror")
	if err != nil {
		t.Fatal(err)
	}
	wantHead := "kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v1alpha2\nmirror:\n  additionalImages:\n  - name: "
	if !strings.HasPrefix(out, wantHead) {
		t.Fatalf("output does not start with an ImageSetConfiguration:\n%s", out)
	}
	plain, _, _ := runInventory(t, "--arch", "x86_64", "images")
	if got, want := strings.Count(out, "  - name: "), len(strings.Fields(plain)); got != want {
		t.Errorf("%d additionalImages, want %d", got, want)
	}
	if !strings.Contains(out, "  - name: registry.access.redhat.com/openjdk/openjdk-11-rhel7:1.17\n") {
		t.Errorf("missing entry:\n%s", out)
	}
	// With --registry the list stays on the sources; a comment names the destination.
	withReg, _, err := runInventory(t, "--arch", "x86_64", "--registry", "mirror.example:5000", "images", "--format", "oc-mirror")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(withReg, "# Mirror these with: oc mirror --config <this file> docker://mirror.example:5000\n") ||
		!strings.HasSuffix(withReg, out) {
		t.Errorf("oc-mirror output with --registry:\n%s", withReg)
	}
}

func writeSample(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, "ocp-x86_64", "demo", "imagestreams", "demo.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	data := `{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","metadata":{"name":"demo"},
	  "spec":{"tags":[{"name":"1","from":{"kind":"DockerImage","name":"quay.io/demo/app:1"}},
	                  {"name":"latest","from":{"kind":"ImageStreamTag","name":"1"}}]}}`
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestInventoryDirFlagAndEnv(t *testing.T) {
	dir := t.TempDir()
	writeSample(t, dir)

	t.Setenv(inventoryDirEnv, "")
	out, _, err := runInventory(t, "--arch", "x86_64", "--inventory-dir", dir, "list")
	if err != nil {
		t.Fatal(err)
	}
	if want := "KIND         NAME  TAGS\nImageStream  demo  1,latest\n"; out != want {
		t.Errorf("list from --inventory-dir:\n%q\nwant\n%q", out, want)
	}

	t.Setenv(inventoryDirEnv, dir)
	out, _, err = runInventory(t, "--arch", "x86_64", "images")
	if err != nil {
		t.Fatal(err)
	}
	if out != "quay.io/demo/app:1\n" {
		t.Errorf("images from $INVENTORY_DIR = %q", out)
	}
	// The flag wins over the environment; an empty flag means the embedded inventory.
	out, _, err = runInventory(t, "--arch", "x86_64", "--inventory-dir", "", "images")
	if err != nil || !strings.Contains(out, "registry.redhat.io/") {
		t.Errorf("--inventory-dir '' did not select the embedded inventory: %v", err)
	}

	// A broken file is reported with its path.
	bad := filepath.Join(dir, "ocp-x86_64", "demo", "templates", "broken.json")
	if err := os.MkdirAll(filepath.Dir(bad), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"kind":"Template"`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = runInventory(t, "--arch", "x86_64", "list")
	if err == nil || !strings.Contains(err.Error(), bad+": invalid JSON") {
		t.Errorf("error = %v, want one naming %s", err, bad)
	}
}

func TestInventoryErrors(t *testing.T) {
	t.Setenv(inventoryDirEnv, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--arch", "mips", "list"}, `--arch: architecture "mips" is not supported`},
		{[]string{"--arch", "arm64", "--okd", "list"}, "no OKD inventory"},
		{[]string{"--arch", "ocp-s390x", "--okd", "list"}, "--okd conflicts with --arch ocp-s390x"},
		{[]string{"--registry", "https://mirror.example.com", "images"}, `--registry: samplesRegistry "https://mirror.example.com": must not start with a scheme`},
		{[]string{"--registry", "mirror.example.com/", "list"}, "must not end with '/'"},
		{[]string{"images", "--format", "json"}, `--format "json" is not supported`},
		{[]string{"--inventory-dir", "/nonexistent/inventory", "list"}, "inventory directory"},
		{[]string{"list", "extra"}, "unknown command"},
	} {
		_, _, err := runInventory(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error = %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestImagesLeaveOutSkippedTags: the images only a skipped tag uses are not listed, an image
// another tag shares still is, and entries that name nothing are said on standard error.
func TestImagesLeaveOutSkippedTags(t *testing.T) {
	t.Setenv(inventoryDirEnv, "")
	all, _, err := runInventory(t, "--arch", "x86_64", "images")
	if err != nil {
		t.Fatal(err)
	}
	out, warnings, err := runInventory(t, "--arch", "x86_64", "--skipped-imagestream-tags", "python:3.6-ubi8, python:nope,bad entry", "images")
	if err != nil {
		t.Fatal(err)
	}
	gone := map[string]bool{}
	kept := map[string]bool{}
	for _, ref := range strings.Fields(out) {
		kept[ref] = true
	}
	for _, ref := range strings.Fields(all) {
		if !kept[ref] {
			gone[ref] = true
		}
	}
	if len(gone) != 1 || !func() bool {
		for ref := range gone {
			return strings.Contains(ref, "python-36")
		}
		return false
	}() {
		t.Errorf("left out %v, want python:3.6-ubi8's image alone", gone)
	}
	for _, part := range []string{`"bad entry" (spaces inside)`, "python:nope"} {
		if !strings.Contains(warnings, part) {
			t.Errorf("standard error %q does not name %s", warnings, part)
		}
	}
}
