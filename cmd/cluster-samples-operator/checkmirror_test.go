package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorcheck"
	"github.com/samples-operator-dev/cluster-samples-operator/test/mirrortest"
)

// mirrorSetsFor writes the ImageTagMirrorSet oc-mirror would write for a mirror at host (each
// source registry under a path named after it) and returns its path and the mirror's reference of
// every image of inv.
func mirrorSetsFor(t *testing.T, inv *inventory.Inventory, host string) (path string, onMirror map[string]string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: config.openshift.io/v1\nkind: ImageTagMirrorSet\nmetadata:\n  name: itms-generic-0\nspec:\n  imageTagMirrors:\n")
	for _, source := range inv.SourceRegistries() {
		fmt.Fprintf(&b, "  - source: %s\n    mirrors:\n    - %s/%s\n", source, host, strings.ReplaceAll(source, ".", "-"))
	}
	path = filepath.Join(t.TempDir(), "itms-oc-mirror.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// Where each image is on the mirror, written out here rather than asked of the code under
	// test: the source registry's name, dots made dashes, as a path under the mirror's host.
	onMirror = map[string]string{}
	for _, image := range inv.ImagesToMirror() {
		registry, rest, _ := strings.Cut(image, "/")
		onMirror[image] = host + "/" + strings.ReplaceAll(registry, ".", "-") + "/" + rest
	}
	return path, onMirror
}

// TestCheckMirrorNamesTheImageAMirrorLacks: every image of the x86_64 inventory mirrored through
// mirror sets but one; check-mirror reads the mirror sets and the pull secret, names the missing
// image in its table and its JSON, and fails.
func TestCheckMirrorNamesTheImageAMirrorLacks(t *testing.T) {
	t.Setenv(inventoryDirEnv, "")
	inv, err := inventory.Embedded(inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	m := mirrortest.Start(t)
	sets, onMirror := mirrorSetsFor(t, inv, m.Host)
	images := inv.ImagesToMirror()
	const missing = "registry.redhat.io/ubi9/python-312:latest"
	if got, want := onMirror[missing], m.Host+"/registry-redhat-io/ubi9/python-312:latest"; got != want {
		t.Fatalf("python-312 is at %q on the mirror, want %q", got, want)
	}
	var push []string
	for _, image := range images {
		if image != missing {
			push = append(push, onMirror[image])
		}
	}
	if len(push) != len(images)-1 {
		t.Fatalf("%s is not an image of the inventory", missing)
	}
	m.Push(t, push...)
	args := []string{"--arch", "x86_64", "check-mirror", "--mirror-sets", filepath.Dir(sets), "--authfile", m.PullSecret(t, mirrortest.User, mirrortest.Password), "--ca-file", m.CAFile}

	out, _, err := runInventory(t, args...)
	t.Logf("check-mirror printed:\n%s", out)
	if err == nil || err.Error() != fmt.Sprintf("1 of %d images are not on the mirror", len(images)) {
		t.Errorf("error %v, want one image not on the mirror", err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(images)+2 || !strings.HasPrefix(lines[0], "IMAGE") {
		t.Fatalf("%d lines, want a header, %d rows and a summary", len(lines), len(images))
	}
	if want := fmt.Sprintf("%d images: %d present, 1 missing", len(images), len(images)-1); lines[len(lines)-1] != want {
		t.Errorf("summary %q, want %q", lines[len(lines)-1], want)
	}
	for _, l := range lines[1 : len(lines)-1] {
		f := strings.Fields(l)
		wantStatus := "present"
		if f[0] == missing {
			wantStatus = "missing"
			if strings.Join(f[3:], " ") != "not found (HTTP 404)" {
				t.Errorf("the missing image's reason: %q", l)
			}
		}
		if f[1] != onMirror[f[0]] || f[2] != wantStatus {
			t.Errorf("row %q, want %s %s", l, onMirror[f[0]], wantStatus)
		}
	}

	out, _, err = runInventory(t, append(args, "-o", "json")...)
	if err == nil {
		t.Error("-o json: no error for a missing image")
	}
	var report mirrorcheck.Report
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	if report.Summary != (mirrorcheck.Summary{Images: len(images), Present: len(images) - 1, Missing: 1}) {
		t.Errorf("-o json summary %+v", report.Summary)
	}
	for _, row := range report.Rows {
		if (row.Status == mirrorcheck.Missing) != (row.Image == missing) {
			t.Errorf("-o json row %+v", row)
		}
	}
}

// TestCheckMirrorWithASamplesRegistry: a mirror that keeps the repository paths under one
// registry path, given as the samplesRegistry value; every image present passes.
func TestCheckMirrorWithASamplesRegistry(t *testing.T) {
	t.Setenv(inventoryDirEnv, "")
	inv, err := inventory.Embedded(inventory.ArchDirOKDX86_64)
	if err != nil {
		t.Fatal(err)
	}
	m := mirrortest.Start(t)
	var push []string
	for _, image := range inv.ImagesToMirror() {
		push = append(push, inventory.RewriteRegistry(image, m.Host+"/samples", inv.SourceRegistries()))
	}
	m.Push(t, push...)
	out, _, err := runInventory(t, "--okd", "--registry", m.Host+"/samples", "check-mirror", "--authfile", m.PullSecret(t, mirrortest.User, mirrortest.Password), "--ca-file", m.CAFile, "-o", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var report mirrorcheck.Report
	if err := json.Unmarshal([]byte(out), &report); err != nil || !report.Summary.OK() || report.Summary.Images != len(push) {
		t.Errorf("%v %+v", err, report.Summary)
	}
}

// TestCheckMirrorOnAPinnedInventory: the inventory pinned to the digests of what the mirror
// holds (inventory pin) is checked by digest: through an ImageDigestMirrorSet every image is
// present; through an ImageTagMirrorSet alone none has a mirror, since tag mirrors serve no
// digest.
func TestCheckMirrorOnAPinnedInventory(t *testing.T) {
	t.Setenv(inventoryDirEnv, "")
	inv, err := inventory.Embedded(inventory.ArchDirOKDX86_64)
	if err != nil {
		t.Fatal(err)
	}
	m := mirrortest.Start(t)
	tagSets, onMirror := mirrorSetsFor(t, inv, m.Host)
	digests := m.Push(t, slices.Collect(maps.Values(onMirror))...)
	var lines strings.Builder
	for image, ref := range onMirror {
		fmt.Fprintf(&lines, "%s %s\n", image, digests[ref])
	}
	dir := t.TempDir()
	digestsFile, pinned := filepath.Join(dir, "digests.txt"), filepath.Join(dir, "pinned")
	if err := os.WriteFile(digestsFile, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := runInventory(t, "--okd", "pin", "--digests", digestsFile, "--out", pinned); err != nil {
		t.Fatalf("pin: %v\n%s", err, stderr)
	}
	digestSets, err := os.ReadFile(tagSets)
	if err != nil {
		t.Fatal(err)
	}
	idms := filepath.Join(dir, "idms-oc-mirror.yaml")
	doc := strings.NewReplacer("ImageTagMirrorSet", "ImageDigestMirrorSet", "imageTagMirrors", "imageDigestMirrors").Replace(string(digestSets))
	if err := os.WriteFile(idms, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(sets string) (mirrorcheck.Report, error) {
		out, _, err := runInventory(t, "--okd", "--inventory-dir", pinned, "check-mirror", "--mirror-sets", sets,
			"--authfile", m.PullSecret(t, mirrortest.User, mirrortest.Password), "--ca-file", m.CAFile, "-o", "json")
		var report mirrorcheck.Report
		if jerr := json.Unmarshal([]byte(out), &report); jerr != nil {
			t.Fatalf("%v\n%s", jerr, out)
		}
		return report, err
	}
	report, err := check(idms)
	if err != nil || !report.Summary.OK() || report.Summary.Images != len(onMirror) {
		t.Errorf("pinned, through digest mirrors: %v %+v", err, report.Summary)
	}
	for _, row := range report.Rows {
		if !strings.Contains(row.Image, "@sha256:") || !strings.Contains(row.Mirror, "@sha256:") {
			t.Errorf("not checked by digest: %+v", row)
			break
		}
	}
	report, err = check(tagSets)
	if err == nil || report.Summary.NoMirror != len(onMirror) {
		t.Errorf("pinned, through tag mirrors only: %v %+v", err, report.Summary)
	}
}

func TestCheckMirrorRefusesUnclearRequests(t *testing.T) {
	t.Setenv(inventoryDirEnv, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check-mirror"}, "either as --mirror-sets or as --registry"},
		{[]string{"--registry", "mirror.example:5000", "check-mirror", "--mirror-sets", "x.yaml"}, "either as --mirror-sets or as --registry"},
		{[]string{"check-mirror", "--mirror-sets", "/nonexistent/itms.yaml"}, "no such file"},
		{[]string{"--registry", "mirror.example:5000", "check-mirror", "-o", "yaml"}, "--output"},
		{[]string{"--registry", "mirror.example:5000", "check-mirror", "--authfile", "/nonexistent/auth.json"}, "--authfile"},
	} {
		if _, _, err := runInventory(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
}
