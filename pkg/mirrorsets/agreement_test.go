package mirrorsets

import (
	"slices"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorcheck"
)

// TestAgreesWithTheMirrorCheck: the install decision and `inventory check-mirror`
// (pkg/mirrorcheck, whose resolution is compared with the real openshift-apiserver) must send an
// image to the same mirrors, in the same order. Objects are listed in name order, the order this
// package merges them in.
func TestAgreesWithTheMirrorCheck(t *testing.T) {
	sets := Sets{
		Tag: []*configv1.ImageTagMirrorSet{
			itms("a", tagEntry("registry.redhat.io", "m1.example/rh", "m2.example/rh"), tagEntry("registry.redhat.io/ubi9", "m3.example/u9"),
				tagEntry("quay.io/fedora", "quay.io/fedora")),
			itms("b", tagEntry("registry.redhat.io", "m2.example/rh", "m4.example:5000/rh"), tagEntry("*.example.org", "m5.example/wild")),
		},
		Digest: []*configv1.ImageDigestMirrorSet{
			idms("c", digestEntry("registry.redhat.io", "d1.example/rh"), digestEntry("registry.access.redhat.com/ubi8", "d2.example/u8")),
		},
		ContentPolicy: []*operatorv1alpha1.ImageContentSourcePolicy{
			icsp("d", "registry.redhat.io", "d3.example/rh", "d1.example/rh"),
			icsp("e", "registry.access.redhat.com", "d4.example/access"),
		},
	}
	var check mirrorcheck.Sets
	for _, o := range sets.Tag {
		check.TagMirrorSets = append(check.TagMirrorSets, *o)
	}
	for _, o := range sets.Digest {
		check.DigestMirrorSets = append(check.DigestMirrorSets, *o)
	}
	for _, o := range sets.ContentPolicy {
		check.ContentSourcePolicies = append(check.ContentSourcePolicies, *o)
	}
	resolver := mirrorcheck.NewResolver(check)
	for _, ref := range []string{
		"registry.redhat.io/ubi10/python-312-minimal:latest",
		"registry.redhat.io/ubi10/python-312-minimal" + digest,
		"registry.redhat.io/ubi9/ruby-33:1",
		"registry.redhat.io/ubi9/ruby-33" + digest,
		"registry.redhat.io/ubi9-minimal/ruby:1",
		"registry.redhat.io:5000/ubi9/ruby:1",
		"registry.access.redhat.com/ubi8/openjdk-17:1.20",
		"registry.access.redhat.com/ubi8/openjdk-17" + digest,
		"registry.access.redhat.com/ubi7/go-toolset" + digest,
		"quay.io/fedora/ruby-33:1",
		"quay.io/centos7/ruby-27-centos7:latest",
		"registry.example.org/team/app:1",
	} {
		mine, theirs := sets.Resolve(ref).Mirrors, resolver.Mirrors(ref)
		if !slices.Equal(mine, theirs) {
			t.Errorf("%s: the install decision tries %v, check-mirror %v", ref, mine, theirs)
		}
	}
}
