package mirrorcheck

import (
	"slices"
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
