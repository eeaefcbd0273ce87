package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/bundle"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/pin"
)

func runBundle(t *testing.T, args ...string) (stderr string, err error) {
	t.Helper()
	cmd := newBundleCommand()
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	var errOut bytes.Buffer
	cmd.SetOut(&errOut)
	cmd.SetErr(&errOut)
	cmd.SetArgs(append([]string{"--manifests-dir", "../../manifests"}, args...))
	err = cmd.Execute()
	return errOut.String(), err
}

// fakeDigest is a made-up digest, distinct for each i, so that tests need no registry.
func fakeDigest(i int) string { return fmt.Sprintf("sha256:%064x", i+1) }

// writeDigests writes a map file covering refs, less the skipped ones.
func writeDigests(t *testing.T, refs []string, skip ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# reference digest\n")
	for i, ref := range refs {
		if !slices.Contains(skip, ref) {
			fmt.Fprintf(&b, "%s %s\n", ref, fakeDigest(i))
		}
	}
	p := filepath.Join(t.TempDir(), "digests.txt")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPinThenBundle(t *testing.T) {
	t.Setenv(inventoryDirEnv, "")
	inv, err := inventory.Embedded(inventory.ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	refs := inv.ImagesToMirror()
	pinned := t.TempDir()
	_, stderr, err := runInventory(t, "--arch", "x86_64", "pin", "--digests", writeDigests(t, refs), "--out", pinned)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d references pinned, 0 already digests, 0 left as tags", len(refs)); !strings.Contains(stderr, want) {
		t.Errorf("summary %q, want %q", stderr, want)
	}
	// `inventory images` reads the pinned tree as the operator would.
	out, _, err := runInventory(t, "--arch", "x86_64", "--inventory-dir", pinned, "images")
	if err != nil {
		t.Fatal(err)
	}
	images := strings.Fields(out)
	if len(images) != len(refs) {
		t.Errorf("%d images in the pinned tree, want %d", len(images), len(refs))
	}
	for _, ref := range images {
		if !pin.IsPinned(ref) {
			t.Errorf("%s is not pinned", ref)
		}
	}

	// make bundle BUNDLE_INVENTORY_DIR=<pinned>: relatedImages are the digests.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifests", "stale.yaml"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr, err = runBundle(t, "--out", dir, "--inventory-dir", pinned)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d related images", len(refs)+1); !strings.Contains(stderr, want) {
		t.Errorf("summary %q, want %q", stderr, want)
	}
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(bundle.CSVFile)))
	if err != nil {
		t.Fatal(err)
	}
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := yaml.UnmarshalStrict(data, csv); err != nil {
		t.Fatal(err)
	}
	if len(csv.Spec.RelatedImages) != len(refs)+1 {
		t.Errorf("%d related images, want %d", len(csv.Spec.RelatedImages), len(refs)+1)
	}
	for _, ri := range csv.Spec.RelatedImages[1:] {
		if !pin.IsPinned(ri.Image) {
			t.Errorf("related image %s is not pinned", ri.Image)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "manifests", "stale.yaml")); !os.IsNotExist(err) {
		t.Error("a file of an earlier bundle survived")
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
		t.Error("a file the generator does not own was removed")
	}
	for _, f := range []string{bundle.AnnotationsFile, bundle.DockerfileFile} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	// The operator's image is still the tag of image-references: no disconnected claim, and
	// a warning saying how to get one.
	if got := csv.Annotations["features.operators.openshift.io/disconnected"]; got != "false" {
		t.Errorf("disconnected %q with the operator's image a tag", got)
	}
	if !strings.Contains(stderr, "warning: every sample image is a digest but the operator's is not") {
		t.Errorf("no warning about the operator's tag in:\n%s", stderr)
	}

	// The release bundle: pinned inventory and operator, and the release's date.
	op := "quay.io/openshift/origin-cluster-samples-operator@" + fakeDigest(1000)
	stderr, err = runBundle(t, "--out", dir, "--inventory-dir", pinned, "--operator-image", op, "--created-at", "2027-01-31")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr, "warning") {
		t.Errorf("a warning for a fully pinned bundle:\n%s", stderr)
	}
	data, err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(bundle.CSVFile)))
	if err != nil {
		t.Fatal(err)
	}
	csv = &v1alpha1.ClusterServiceVersion{}
	if err := yaml.UnmarshalStrict(data, csv); err != nil {
		t.Fatal(err)
	}
	if got := csv.Annotations["features.operators.openshift.io/disconnected"]; got != "true" {
		t.Errorf("disconnected %q with every image a digest", got)
	}
	if csv.Spec.RelatedImages[0].Image != op || csv.Annotations["containerImage"] != op {
		t.Errorf("operator image %s / %s, want %s", csv.Spec.RelatedImages[0].Image, csv.Annotations["containerImage"], op)
	}
	if got := csv.Annotations["createdAt"]; got != "2027-01-31T00:00:00Z" {
		t.Errorf("createdAt %q", got)
	}
}

func TestPinReportsMissingReferences(t *testing.T) {
	t.Setenv(inventoryDirEnv, "")
	inv, err := inventory.Embedded(inventory.ArchDirOCPAarch64)
	if err != nil {
		t.Fatal(err)
	}
	refs := inv.ImagesToMirror()
	skipped := []string{refs[len(refs)-1], refs[0]}
	digests := writeDigests(t, refs, skipped...)

	out := t.TempDir()
	_, _, err = runInventory(t, "--arch", "arm64", "pin", "--digests", digests, "--out", out)
	if err == nil {
		t.Fatal("no error with references missing from the map")
	}
	msg := err.Error()
	if !strings.Contains(msg, "2 image references have no digest") || strings.Index(msg, refs[0]) > strings.Index(msg, refs[len(refs)-1]) {
		t.Errorf("want both missing references, sorted:\n%s", msg)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a failed pin wrote %d entries", len(entries))
	}

	_, stderr, err := runInventory(t, "--arch", "arm64", "pin", "--digests", digests, "--out", out, "--allow-unpinned")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range skipped {
		if !strings.Contains(stderr, "warning: not pinned, no digest in "+digests+": "+ref) {
			t.Errorf("no warning for %s in:\n%s", ref, stderr)
		}
	}
	if !strings.Contains(stderr, "2 left as tags") {
		t.Errorf("summary: %s", stderr)
	}
}

func TestPinRejects(t *testing.T) {
	t.Setenv(inventoryDirEnv, "")
	bad := filepath.Join(t.TempDir(), "bad.txt")
	if err := os.WriteFile(bad, []byte("registry.redhat.io/ubi9/ruby-33:latest sha256:abc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pin", "--digests", bad, "--out", t.TempDir()}, "line 1: digest \"sha256:abc\" is malformed"},
		{[]string{"--registry", "mirror.example:5000", "pin", "--digests", bad, "--out", t.TempDir()}, "--registry does not apply"},
		{[]string{"pin", "--out", t.TempDir()}, `required flag(s) "digests" not set`},
	} {
		_, _, err := runInventory(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestBundleRejectsUnknownArch(t *testing.T) {
	if _, err := runBundle(t, "--out", t.TempDir(), "--arch", "mips"); err == nil || !strings.Contains(err.Error(), "--arch") {
		t.Errorf("error %v", err)
	}
}
