package release

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	imagev1 "github.com/openshift/api/image/v1"
	"sigs.k8s.io/yaml"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/payload"
	"github.com/samples-operator-dev/cluster-samples-operator/test/controlplane"
	"github.com/samples-operator-dev/cluster-samples-operator/test/payloadcheck"
)

const testImageReferences = `kind: ImageStream
apiVersion: image.openshift.io/v1
spec:
  tags:
  - name: cluster-samples-operator
    from: {kind: DockerImage, name: "quay.io/dev/op:latest"}
  - name: cli
    from: {kind: DockerImage, name: "quay.io/dev/cli:v4.0"}
  - name: cli-artifacts
    from: {kind: DockerImage, name: "quay.io/dev/cli-artifacts:v4.0"}
`

func TestBuildRewritesAsTheReleaseToolingDoes(t *testing.T) {
	fsys := fstest.MapFS{
		"image-references": {Data: []byte(testImageReferences)},
		"01-ns.yaml":       {Data: []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n")},
		"06-operator.yaml": {Data: []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: op, namespace: x}
spec:
  template:
    spec:
      containers:
      - image: quay.io/dev/op:latest
        env:
        - {name: RELEASE_VERSION, value: "0.0.1-snapshot"}
        - {name: CLI, value: "quay.io/dev/cli:v4.0"}
        - {name: CLI_ARTIFACTS, value: "quay.io/dev/cli-artifacts:v4.0"}
        - {name: NOT_AN_IMAGE_OF_OURS, value: "quay.io/dev/cli:v4.01"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: second, namespace: x}
data: {v: "0.0.1-snapshot"}
`)},
		"0000_10_keeps-its-name.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y, namespace: x}\n")},
		"sub/ignored.yaml":            {Data: []byte("not: a manifest\n")},
	}
	dir := t.TempDir()
	p, err := Build(fsys, dir, Options{Version: "4.21.3", Previous: []string{"4.21.2"}})
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{"0000_10_keeps-its-name.yaml", "0000_50_cluster-samples-operator_01-ns.yaml", "0000_50_cluster-samples-operator_06-operator.yaml"}
	if strings.Join(p.Files, " ") != strings.Join(wantFiles, " ") {
		t.Errorf("files %v, want %v", p.Files, wantFiles)
	}
	entries, err := os.ReadDir(filepath.Join(dir, ReleaseManifestsDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(wantFiles)+2 {
		t.Errorf("release-manifests holds %d entries, want the %d manifests, release-metadata and image-references", len(entries), len(wantFiles))
	}
	if entries, err := os.ReadDir(filepath.Join(dir, ManifestsDir)); err != nil || len(entries) != 0 {
		t.Errorf("manifests/ must exist and be empty: %v %v", entries, err)
	}
	if p.ReleaseImage != DefaultRepository+":4.21.3" {
		t.Errorf("release image %s", p.ReleaseImage)
	}

	op, err := os.ReadFile(p.ManifestsPath("0000_50_cluster-samples-operator_06-operator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(op)
	for _, want := range []string{
		"image: " + p.Images["cluster-samples-operator"] + "\n",
		`value: "4.21.3"`,
		`{name: CLI, value: "` + p.Images["cli"] + `"}`,
		`{name: CLI_ARTIFACTS, value: "` + p.Images["cli-artifacts"] + `"}`,
		`value: "quay.io/dev/cli:v4.01"`, // not the image of tag cli
		`data: {v: "4.21.3"}`,            // every document, not only the first
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the operator manifest lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, SnapshotVersion) || strings.Contains(got, "quay.io/dev/op") {
		t.Errorf("a development value is left:\n%s", got)
	}
	for tag, spec := range p.Images {
		if !strings.HasPrefix(spec, DefaultRepository+"@sha256:") || len(spec) != len(DefaultRepository)+len("@sha256:")+64 {
			t.Errorf("tag %s: pull spec %s is not a digest of the release repository", tag, spec)
		}
	}

	var metadata struct {
		Kind     string   `json:"kind"`
		Version  string   `json:"version"`
		Previous []string `json:"previous"`
	}
	data, err := os.ReadFile(filepath.Join(dir, ReleaseManifestsDir, MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &metadata); err != nil {
		t.Fatal(err)
	}
	if metadata.Kind != "cincinnati-metadata-v0" || metadata.Version != "4.21.3" || strings.Join(metadata.Previous, ",") != "4.21.2" {
		t.Errorf("release-metadata %s", data)
	}
	var stream imagev1.ImageStream
	data, err = os.ReadFile(filepath.Join(dir, ReleaseManifestsDir, ImageReferencesFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, &stream); err != nil {
		t.Fatal(err)
	}
	if stream.Kind != "ImageStream" || stream.Name != "4.21.3" || len(stream.Spec.Tags) != 3 {
		t.Fatalf("image-references %s", data)
	}
	for _, tag := range stream.Spec.Tags {
		if tag.From == nil || tag.From.Kind != "DockerImage" || tag.From.Name != p.Images[tag.Name] {
			t.Errorf("image-references tag %s: %+v, want %s", tag.Name, tag.From, p.Images[tag.Name])
		}
	}
}

func TestBuildRefusesAFileWithoutKind(t *testing.T) {
	fsys := fstest.MapFS{
		"image-references":      {Data: []byte(testImageReferences)},
		"01-comment-first.yaml": {Data: []byte("# a comment\nmetadata: {name: x}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n")},
	}
	if _, err := Build(fsys, t.TempDir(), Options{Version: "4.21.3"}); err == nil || !strings.Contains(err.Error(), "01-comment-first.yaml") {
		t.Errorf("Build of a file whose first document has no kind: %v", err)
	}
	if _, err := Build(fstest.MapFS{"image-references": {Data: []byte(testImageReferences)}}, t.TempDir(), Options{}); err == nil {
		t.Error("Build without a version succeeded")
	}
}

// TestBuildOfManifests builds the real manifests/: every object keeps its kind and name, no
// development image or snapshot version is left, and the profiles are the same.
func TestBuildOfManifests(t *testing.T) {
	src := os.DirFS(filepath.Join(controlplane.RepoRoot(), "manifests"))
	objs, err := payload.Read(src)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := payload.ReadImageReferences(src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(src, t.TempDir(), Options{Version: "4.21.3"})
	if err != nil {
		t.Fatal(err)
	}
	built, err := payload.Read(os.DirFS(filepath.Join(p.Dir, ReleaseManifestsDir)))
	if err != nil {
		t.Fatal(err)
	}
	if len(built) != len(objs) {
		t.Fatalf("%d objects in the payload, %d in manifests/", len(built), len(objs))
	}
	for i, o := range built {
		want := objs[i]
		if o.File != "0000_50_cluster-samples-operator_"+want.File || o.Kind != want.Kind || o.Name != want.Name || o.Namespace != want.Namespace {
			t.Errorf("payload object %d is %s, manifests/ has %s", i, o, want)
		}
		if strings.Join(o.Profiles(), ",") != strings.Join(want.Profiles(), ",") {
			t.Errorf("%s: profiles %v, want %v", o, o.Profiles(), want.Profiles())
		}
		doc := string(o.JSON)
		if strings.Contains(doc, SnapshotVersion) {
			t.Errorf("%s still holds %s", o, SnapshotVersion)
		}
		for _, r := range refs {
			if strings.Contains(doc, `"`+r.Image+`"`) {
				t.Errorf("%s still holds the development image %s", o, r.Image)
			}
		}
	}
	// The payload still passes the payload rules, with the release's images.
	var released []payload.ImageReference
	for _, r := range refs {
		released = append(released, payload.ImageReference{Tag: r.Tag, Image: p.Images[r.Tag]})
	}
	for _, err := range payloadcheck.CheckImages(built, released) {
		t.Error(err)
	}
}
