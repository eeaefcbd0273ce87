package mirrorcheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const dgst = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParseSetsReadsWhatOcMirrorWrites(t *testing.T) {
	// oc-mirror v2's cluster-resources: an IDMS and an ITMS, next to a CatalogSource; v1 wrote
	// ICSPs, here in a List.
	data := []byte(`apiVersion: config.openshift.io/v1
kind: ImageDigestMirrorSet
metadata:
  name: idms-release-0
spec:
  imageDigestMirrors:
  - mirrors:
    - mirror.example:5000/ubi9
    source: registry.redhat.io/ubi9
---
apiVersion: config.openshift.io/v1
kind: ImageTagMirrorSet
metadata:
  name: itms-generic-0
spec:
  imageTagMirrors:
  - mirrors:
    - mirror.example:5000/ubi9
    source: registry.redhat.io/ubi9
---
apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: cs-redhat-operator-index
spec:
  image: mirror.example:5000/redhat/redhat-operator-index:v4.20
---
apiVersion: v1
kind: List
items:
- apiVersion: operator.openshift.io/v1alpha1
  kind: ImageContentSourcePolicy
  metadata:
    name: generic-0
  spec:
    repositoryDigestMirrors:
    - mirrors:
      - mirror.example:5000/access
      source: registry.access.redhat.com
`)
	s, err := ParseSets(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Digest) != 1 || len(s.Tag) != 1 || len(s.ContentPolicy) != 1 {
		t.Fatalf("parsed %d IDMS, %d ITMS, %d ICSP; want one each", len(s.Digest), len(s.Tag), len(s.ContentPolicy))
	}
	target := MirrorSets(s)
	if got := target("registry.redhat.io/ubi9/ruby-33:1"); !slices.Equal(got, []string{"mirror.example:5000/ubi9/ruby-33:1"}) {
		t.Errorf("tag mirrors %q", got)
	}
	if got := target("registry.access.redhat.com/ubi8/ruby" + dgst); !slices.Equal(got, []string{"mirror.example:5000/access/ubi8/ruby" + dgst}) {
		t.Errorf("ICSP mirrors %q", got)
	}
	if _, err := ParseSets([]byte("kind: ImageTagMirrorSet\napiVersion: config.openshift.io/v1\nspec: {imageTagMirrors: 3}\n")); err == nil {
		t.Error("a malformed mirror set parsed")
	}
}

// An admin may keep the cluster's image config next to the mirror sets, or an operator's own
// resource: a document is a mirror set only by its group and its kind together.
func TestParseSetsSkipsDocumentsThatShareOnlyAGroupOrAKindWithAMirrorSet(t *testing.T) {
	data := []byte(`apiVersion: config.openshift.io/v1
kind: Image
metadata:
  name: cluster
spec:
  additionalTrustedCA:
    name: mirror-ca
---
apiVersion: operator.openshift.io/v1
kind: OpenShiftControllerManager
metadata:
  name: cluster
spec:
  managementState: Managed
---
apiVersion: example.com/v1
kind: ImageTagMirrorSet
metadata:
  name: not-openshifts
`)
	s, err := ParseSets(data)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Empty() {
		t.Errorf("parsed %d IDMS, %d ITMS, %d ICSP from documents that are no mirror sets", len(s.Digest), len(s.Tag), len(s.ContentPolicy))
	}
}

// oc-mirror leaves its mirror sets in a folder among other files; check-mirror is given that
// folder, or files, or both.
func TestLoadSetsReadsTheMirrorSetsOfFilesAndOfTheFilesDirectlyInAFolder(t *testing.T) {
	write := func(path, text string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const idms = "apiVersion: config.openshift.io/v1\nkind: ImageDigestMirrorSet\nmetadata: {name: idms}\n" +
		"spec: {imageDigestMirrors: [{source: registry.redhat.io/ubi9, mirrors: [mirror.example:5000/ubi9]}]}\n"
	const itms = "apiVersion: config.openshift.io/v1\nkind: ImageTagMirrorSet\nmetadata: {name: itms}\n" +
		"spec: {imageTagMirrors: [{source: registry.redhat.io/ubi9, mirrors: [mirror.example:5000/ubi9]}]}\n"
	const icsp = `{"apiVersion": "operator.openshift.io/v1alpha1", "kind": "ImageContentSourcePolicy", "metadata": {"name": "icsp"},
 "spec": {"repositoryDigestMirrors": [{"source": "registry.access.redhat.com", "mirrors": ["mirror.example:5000/access"]}]}}`
	dir := t.TempDir()
	folder := filepath.Join(dir, "cluster-resources")
	// A document of comments alone decodes to nothing; the one after it counts.
	write(filepath.Join(folder, "idms.yaml"), "# written by oc-mirror\n---\n"+idms)
	write(filepath.Join(folder, "itms.YML"), itms)
	write(filepath.Join(folder, "icsp.json"), icsp)
	// Neither is read: a file of another extension, and a folder below (even one named like a file).
	write(filepath.Join(folder, "notes.txt"), "{ not: [a mirror set")
	write(filepath.Join(folder, "older.yaml", "idms.yaml"), idms)
	file := write(filepath.Join(dir, "extra-itms.yaml"), itms)

	s, err := LoadSets([]string{folder, file})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Digest) != 1 || len(s.Tag) != 2 || len(s.ContentPolicy) != 1 {
		t.Errorf("loaded %d IDMS, %d ITMS, %d ICSP; want 1, 2 and 1", len(s.Digest), len(s.Tag), len(s.ContentPolicy))
	}

	others := write(filepath.Join(dir, "others", "catalog.yaml"), "apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata: {name: cs}\n")
	broken := write(filepath.Join(dir, "broken.yaml"), "apiVersion: config.openshift.io/v1\nkind: ImageTagMirrorSet\nspec: {imageTagMirrors: 3}\n")
	for _, c := range []struct {
		paths   []string
		wantErr string
	}{
		{[]string{filepath.Dir(others)}, "no ImageTagMirrorSet, ImageDigestMirrorSet or ImageContentSourcePolicy in " + filepath.Dir(others)},
		{[]string{file, broken}, broken + ": "},
		{[]string{file, filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
	} {
		if _, err := LoadSets(c.paths); err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("LoadSets(%q): %v, want an error containing %q", c.paths, err, c.wantErr)
		}
	}
}
