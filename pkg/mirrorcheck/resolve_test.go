package mirrorcheck

import (
	"slices"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func itms(name string, entries ...configv1.ImageTagMirrors) configv1.ImageTagMirrorSet {
	return configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configv1.ImageTagMirrorSetSpec{ImageTagMirrors: entries}}
}

func idms(name string, entries ...configv1.ImageDigestMirrors) configv1.ImageDigestMirrorSet {
	return configv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configv1.ImageDigestMirrorSetSpec{ImageDigestMirrors: entries}}
}

func mirrors(m ...string) []configv1.ImageMirror {
	out := make([]configv1.ImageMirror, len(m))
	for i := range m {
		out[i] = configv1.ImageMirror(m[i])
	}
	return out
}

const dgst = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestMirrorsResolveAsOpenShiftAPIServer(t *testing.T) {
	icsp := operatorv1alpha1.ImageContentSourcePolicy{ObjectMeta: metav1.ObjectMeta{Name: "old"}, Spec: operatorv1alpha1.ImageContentSourcePolicySpec{
		RepositoryDigestMirrors: []operatorv1alpha1.RepositoryDigestMirrors{{Source: "registry.access.redhat.com", Mirrors: []string{"mirror.example:5000/access"}}},
	}}
	for _, tc := range []struct {
		name string
		sets Sets
		ref  string
		want []string
	}{
		{"a tag through an ImageTagMirrorSet of the registry",
			Sets{TagMirrorSets: []configv1.ImageTagMirrorSet{itms("a", configv1.ImageTagMirrors{Source: "registry.redhat.io", Mirrors: mirrors("mirror.example:5000/rh")})}},
			"registry.redhat.io/ubi9/python-311:latest", []string{"mirror.example:5000/rh/ubi9/python-311:latest"}},
		{"a digest is not mirrored by an ImageTagMirrorSet",
			Sets{TagMirrorSets: []configv1.ImageTagMirrorSet{itms("a", configv1.ImageTagMirrors{Source: "registry.redhat.io", Mirrors: mirrors("mirror.example:5000/rh")})}},
			"registry.redhat.io/ubi9/python-311" + dgst, nil},
		{"a digest through an ImageDigestMirrorSet",
			Sets{DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("d", configv1.ImageDigestMirrors{Source: "registry.redhat.io/ubi9", Mirrors: mirrors("mirror.example:5000/ubi9")})}},
			"registry.redhat.io/ubi9/python-311" + dgst, []string{"mirror.example:5000/ubi9/python-311" + dgst}},
		{"a tag is not mirrored by an ImageDigestMirrorSet",
			Sets{DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("d", configv1.ImageDigestMirrors{Source: "registry.redhat.io", Mirrors: mirrors("mirror.example:5000")})}},
			"registry.redhat.io/ubi9/python-311:latest", nil},
		{"an ImageContentSourcePolicy mirrors digests",
			Sets{ContentSourcePolicies: []operatorv1alpha1.ImageContentSourcePolicy{icsp}},
			"registry.access.redhat.com/ubi8/nodejs-20" + dgst, []string{"mirror.example:5000/access/ubi8/nodejs-20" + dgst}},
		{"an ImageContentSourcePolicy does not mirror tags",
			Sets{ContentSourcePolicies: []operatorv1alpha1.ImageContentSourcePolicy{icsp}},
			"registry.access.redhat.com/ubi8/nodejs-20:latest", nil},
		{"a repository prefix matches on a path-component boundary only",
			Sets{TagMirrorSets: []configv1.ImageTagMirrorSet{itms("a", configv1.ImageTagMirrors{Source: "registry.redhat.io/ubi9", Mirrors: mirrors("m.example/ubi9")})}},
			"registry.redhat.io/ubi9-minimal/python:1", nil},
		{"a repository that is the source itself",
			Sets{TagMirrorSets: []configv1.ImageTagMirrorSet{itms("a", configv1.ImageTagMirrors{Source: "registry.redhat.io/ubi9/python-311", Mirrors: mirrors("m.example/py")})}},
			"registry.redhat.io/ubi9/python-311:1", []string{"m.example/py:1"}},
		{"the longest source wins, even when it only mirrors digests",
			Sets{
				TagMirrorSets:    []configv1.ImageTagMirrorSet{itms("a", configv1.ImageTagMirrors{Source: "registry.redhat.io", Mirrors: mirrors("m.example/rh")})},
				DigestMirrorSets: []configv1.ImageDigestMirrorSet{idms("d", configv1.ImageDigestMirrors{Source: "registry.redhat.io/ubi9", Mirrors: mirrors("m.example/ubi9")})},
			},
			"registry.redhat.io/ubi9/python-311:1", nil},
		{"several mirrors, merged across objects in order, each once, the source left out",
			Sets{TagMirrorSets: []configv1.ImageTagMirrorSet{
				itms("a", configv1.ImageTagMirrors{Source: "registry.redhat.io", Mirrors: mirrors("one.example", "registry.redhat.io", "two.example")}),
				itms("b", configv1.ImageTagMirrors{Source: "registry.redhat.io", Mirrors: mirrors("two.example", "three.example")}),
			}},
			"registry.redhat.io/ubi9/python-311:1", []string{"one.example/ubi9/python-311:1", "two.example/ubi9/python-311:1", "three.example/ubi9/python-311:1"}},
		{"an entry whose only mirror is its source is no mirror set",
			Sets{TagMirrorSets: []configv1.ImageTagMirrorSet{itms("a", configv1.ImageTagMirrors{Source: "registry.redhat.io", Mirrors: mirrors("registry.redhat.io")})}},
			"registry.redhat.io/ubi9/python-311:1", nil},
		{"another registry is not covered",
			Sets{TagMirrorSets: []configv1.ImageTagMirrorSet{itms("a", configv1.ImageTagMirrors{Source: "registry.redhat.io", Mirrors: mirrors("m.example")})}},
			"quay.io/org/app:1", nil},
		{"a registry with a port is a host of its own",
			Sets{TagMirrorSets: []configv1.ImageTagMirrorSet{itms("a", configv1.ImageTagMirrors{Source: "registry.redhat.io", Mirrors: mirrors("m.example")})}},
			"registry.redhat.io:443/ubi9/python-311:1", nil},
		{"a wildcard source mirrors nothing",
			Sets{TagMirrorSets: []configv1.ImageTagMirrorSet{itms("a", configv1.ImageTagMirrors{Source: "*.example.org", Mirrors: mirrors("m.example/wild")})}},
			"registry.example.org/team/app:1", nil},
		{"docker.io names are normalized as the server does",
			Sets{TagMirrorSets: []configv1.ImageTagMirrorSet{itms("a", configv1.ImageTagMirrors{Source: "docker.io/library", Mirrors: mirrors("m.example/hub")})}},
			"busybox:1", []string{"m.example/hub/busybox:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewResolver(tc.sets)
			if got := r.Mirrors(tc.ref); !slices.Equal(got, tc.want) {
				t.Errorf("Mirrors(%s) = %q, want %q", tc.ref, got, tc.want)
			}
			if got := r.PullSources(tc.ref); got[len(got)-1] != normalize(tc.ref) || len(got) != len(tc.want)+1 {
				t.Errorf("PullSources(%s) = %q, want the mirrors and then the image itself", tc.ref, got)
			}
		})
	}
}

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
	if len(s.DigestMirrorSets) != 1 || len(s.TagMirrorSets) != 1 || len(s.ContentSourcePolicies) != 1 {
		t.Fatalf("parsed %d IDMS, %d ITMS, %d ICSP; want one each", len(s.DigestMirrorSets), len(s.TagMirrorSets), len(s.ContentSourcePolicies))
	}
	r := NewResolver(s)
	if got := r.Mirrors("registry.redhat.io/ubi9/ruby-33:1"); !slices.Equal(got, []string{"mirror.example:5000/ubi9/ruby-33:1"}) {
		t.Errorf("tag mirrors %q", got)
	}
	if got := r.Mirrors("registry.access.redhat.com/ubi8/ruby" + dgst); !slices.Equal(got, []string{"mirror.example:5000/access/ubi8/ruby" + dgst}) {
		t.Errorf("ICSP mirrors %q", got)
	}
	if _, err := ParseSets([]byte("kind: ImageTagMirrorSet\napiVersion: config.openshift.io/v1\nspec: {imageTagMirrors: 3}\n")); err == nil {
		t.Error("a malformed mirror set parsed")
	}
}
