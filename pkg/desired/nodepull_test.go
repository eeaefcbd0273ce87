package desired

import (
	"slices"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func pullTag(name, kind, from string, policy imagev1.TagReferencePolicyType) imagev1.TagReference {
	return imagev1.TagReference{
		Name:            name,
		From:            &corev1.ObjectReference{Kind: kind, Name: from},
		ReferencePolicy: imagev1.TagReferencePolicy{Type: policy},
	}
}

func TestRefusedNodePulls(t *testing.T) {
	allowed := func(r ...string) configv1.RegistrySources { return configv1.RegistrySources{AllowedRegistries: r} }
	blocked := func(r ...string) configv1.RegistrySources { return configv1.RegistrySources{BlockedRegistries: r} }
	const (
		local  = imagev1.LocalTagReferencePolicy
		source = imagev1.SourceTagReferencePolicy
	)
	cases := []struct {
		name    string
		tags    []imagev1.TagReference
		sources configv1.RegistrySources
		want    []NodePull
	}{
		{
			name:    "no registrySources refuse nothing",
			tags:    []imagev1.TagReference{pullTag("1", "DockerImage", "registry.access.redhat.com/ubi8/ruby-31:1", source)},
			sources: configv1.RegistrySources{InsecureRegistries: []string{"registry.access.redhat.com"}},
		},
		{
			name:    "a Local tag is pulled through the internal registry",
			tags:    []imagev1.TagReference{pullTag("1", "DockerImage", "registry.access.redhat.com/ubi8/ruby-31:1", local)},
			sources: allowed("registry.redhat.io", "quay.io"),
		},
		{
			name:    "a Source tag on a registry allowedRegistries leaves out",
			tags:    []imagev1.TagReference{pullTag("1", "DockerImage", "registry.access.redhat.com/ubi8/ruby-31:1", source)},
			sources: allowed("registry.redhat.io", "quay.io"),
			want:    []NodePull{{Registry: "registry.access.redhat.com"}},
		},
		{
			name:    "an empty policy is Source on the server",
			tags:    []imagev1.TagReference{pullTag("1", "DockerImage", "registry.access.redhat.com/ubi8/ruby-31:1", "")},
			sources: allowed("registry.redhat.io"),
			want:    []NodePull{{Registry: "registry.access.redhat.com"}},
		},
		{
			name:    "a Source tag on an allowed registry",
			tags:    []imagev1.TagReference{pullTag("1", "DockerImage", "registry.redhat.io/ubi9/ruby-33:1", source)},
			sources: allowed("registry.redhat.io", "quay.io"),
		},
		{
			name:    "a Source tag on a blocked registry",
			tags:    []imagev1.TagReference{pullTag("1", "DockerImage", "registry.redhat.io/ubi9/ruby-33:1", source)},
			sources: blocked("registry.redhat.io"),
			want:    []NodePull{{Registry: "registry.redhat.io", Blocked: true}},
		},
		{
			name:    "a Source tag on another registry than the blocked one",
			tags:    []imagev1.TagReference{pullTag("1", "DockerImage", "quay.io/fedora/ruby-33:1", source)},
			sources: blocked("registry.redhat.io"),
		},
		{
			name: "an ImageStreamTag tag pulls what it points at, by its own policy",
			tags: []imagev1.TagReference{
				pullTag("latest", "ImageStreamTag", "7.6", ""),
				pullTag("pinned", "ImageStreamTag", "s:7.6", local),
				pullTag("7.6", "DockerImage", "registry.redhat.io/rh-sso-7/sso76:7.6", local),
			},
			sources: blocked("registry.redhat.io"),
			want:    []NodePull{{Registry: "registry.redhat.io", Blocked: true}},
		},
		{
			name: "an ImageStreamTag tag pointing at the stream's first tag",
			tags: []imagev1.TagReference{
				pullTag("1", "DockerImage", "registry.access.redhat.com/a/b:1", local),
				pullTag("latest", "ImageStreamTag", "1", source),
			},
			sources: allowed("registry.redhat.io"),
			want:    []NodePull{{Registry: "registry.access.redhat.com"}},
		},
		{
			name: "ImageStreamTag chains through the stream's own name",
			tags: []imagev1.TagReference{
				pullTag("latest", "ImageStreamTag", "s:2", source),
				pullTag("2", "ImageStreamTag", "1", local),
				pullTag("1", "DockerImage", "registry.access.redhat.com/a/b:1", local),
			},
			sources: allowed("registry.redhat.io"),
			want:    []NodePull{{Registry: "registry.access.redhat.com"}},
		},
		{
			name: "references that leave the stream, break off or loop name no registry",
			tags: []imagev1.TagReference{
				pullTag("other", "ImageStreamTag", "t:1", source),
				pullTag("missing", "ImageStreamTag", "nope", source),
				pullTag("a", "ImageStreamTag", "b", source),
				pullTag("b", "ImageStreamTag", "a", source),
				{Name: "nofrom"},
			},
			sources: allowed("registry.redhat.io"),
		},
		{
			name: "each registry once, in tag order, from either list",
			tags: []imagev1.TagReference{
				pullTag("3", "DockerImage", "registry.access.redhat.com/a/b:3", source),
				pullTag("2", "DockerImage", "quay.io/a/b:2", source),
				pullTag("1", "DockerImage", "registry.access.redhat.com/a/b:1", source),
			},
			sources: configv1.RegistrySources{AllowedRegistries: []string{"registry.redhat.io", "quay.io"}, BlockedRegistries: []string{"quay.io"}},
			want:    []NodePull{{Registry: "registry.access.redhat.com"}, {Registry: "quay.io", Blocked: true}},
		},
		{
			name:    "a repository scope allows what is under it only",
			tags:    []imagev1.TagReference{pullTag("1", "DockerImage", "mirror.example.com:5000/samples/ubi9/ruby-33@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", source), pullTag("2", "DockerImage", "mirror.example.com:5000/other/ruby:1", source)},
			sources: allowed("mirror.example.com:5000/samples"),
			want:    []NodePull{{Registry: "mirror.example.com:5000"}},
		},
		{
			name:    "a wildcard allows subdomains",
			tags:    []imagev1.TagReference{pullTag("1", "DockerImage", "mirror.example.com/ruby:1", source), pullTag("2", "DockerImage", "example.com/ruby:1", source)},
			sources: allowed("*.example.com"),
			want:    []NodePull{{Registry: "example.com"}},
		},
		{
			name:    "a name without a registry is on docker.io",
			tags:    []imagev1.TagReference{pullTag("1", "DockerImage", "centos/ruby-27-centos7:latest", source), pullTag("2", "DockerImage", "ruby", source)},
			sources: blocked("docker.io/library"),
			want:    []NodePull{{Registry: "docker.io", Blocked: true}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: imagev1.ImageStreamSpec{Tags: tc.tags}}
			if got := RefusedNodePulls(is, tc.sources); !slices.Equal(got, tc.want) {
				t.Errorf("RefusedNodePulls = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRegistrySourcesMatch(t *testing.T) {
	cases := []struct {
		entries []string
		repo    string
		want    bool
	}{
		{[]string{"registry.redhat.io"}, "registry.redhat.io/ubi9/ruby-33", true},
		{[]string{" registry.redhat.io/ "}, "registry.redhat.io/ubi9/ruby-33", true},
		{[]string{"redhat.io"}, "registry.redhat.io/ubi9/ruby-33", false},
		{[]string{"registry.redhat.io/ubi9"}, "registry.redhat.io/ubi9/ruby-33", true},
		{[]string{"registry.redhat.io/ubi9"}, "registry.redhat.io/ubi90/ruby-33", false},
		{[]string{"registry.redhat.io/ubi9/ruby-33"}, "registry.redhat.io/ubi9/ruby-33", true},
		{[]string{"mirror.example.com:5000"}, "mirror.example.com:5000/samples", true},
		{[]string{"mirror.example.com"}, "mirror.example.com:5000/samples", false},
		{[]string{"*.example.com"}, "mirror.example.com/samples", true},
		{[]string{"*.example.com"}, "example.com/samples", false},
		{[]string{""}, "registry.redhat.io", false},
		{nil, "registry.redhat.io", false},
	}
	for _, tc := range cases {
		if got := RegistrySourcesMatch(tc.entries, tc.repo); got != tc.want {
			t.Errorf("RegistrySourcesMatch(%q, %q) = %v, want %v", tc.entries, tc.repo, got, tc.want)
		}
	}
}
