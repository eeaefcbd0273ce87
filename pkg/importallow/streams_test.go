package importallow_test

import (
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/importallow"
)

func TestRefusedRegistry(t *testing.T) {
	allow := importallow.New([]configv1.RegistryLocation{{DomainName: "registry.redhat.io"}}, "")
	// An entry for plain HTTP only: port 80.
	insecureOnly := importallow.New([]configv1.RegistryLocation{{DomainName: "registry.redhat.io", Insecure: true}}, "")
	stream := func(tags ...imagev1.TagReference) *imagev1.ImageStream {
		return &imagev1.ImageStream{Spec: imagev1.ImageStreamSpec{Tags: tags}}
	}
	docker := func(name, ref string, insecure bool) imagev1.TagReference {
		return imagev1.TagReference{Name: name, From: &corev1.ObjectReference{Kind: "DockerImage", Name: ref}, ImportPolicy: imagev1.TagImportPolicy{Insecure: insecure}}
	}
	ist := imagev1.TagReference{Name: "latest", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "1"}}
	for _, tc := range []struct {
		name     string
		is       *imagev1.ImageStream
		allow    *importallow.List
		registry string
	}{
		{"allowed", stream(docker("1", "registry.redhat.io/ubi9/python-312:latest", false), ist), allow, ""},
		{"one tag elsewhere", stream(docker("1", "registry.redhat.io/a/b:1", false), docker("2", "registry.access.redhat.com/a/b:2", false)), allow, "registry.access.redhat.com"},
		{"references to tags are not checked", stream(ist), allow, ""},
		{"a tag elsewhere after a reference to a tag", stream(ist, docker("2", "registry.access.redhat.com/a/b:2", false)), allow, "registry.access.redhat.com"},
		{"an insecure tag may use port 80", stream(docker("1", "registry.redhat.io:80/a/b:1", true)), importallow.New([]configv1.RegistryLocation{{DomainName: "registry.redhat.io", Insecure: true}}, ""), ""},
		{"a secure tag on port 80 is not allowed by a secure entry", stream(docker("1", "registry.redhat.io:80/a/b:1", false)), allow, "registry.redhat.io:80"},
		// The server takes every reference of a stream annotated as an insecure repository with
		// either transport (its validation's isRepositoryInsecure).
		{"a secure tag against an insecure entry", stream(docker("1", "registry.redhat.io/a/b:1", false)), insecureOnly, "registry.redhat.io"},
		{"any tag of a stream marked insecure", insecureRepository(stream(docker("1", "registry.redhat.io/a/b:1", false))), insecureOnly, ""},
		{"a secure repository against an insecure entry", withRepository(stream(), "registry.redhat.io/a/b"), insecureOnly, "registry.redhat.io"},
		{"the repository of a stream marked insecure", insecureRepository(withRepository(stream(), "registry.redhat.io/a/b")), insecureOnly, ""},
		{"no list", stream(docker("1", "anywhere.example/a/b:1", false)), nil, ""},
	} {
		registry, err := importallow.RefusedRegistry(tc.is, tc.allow)
		if registry != tc.registry || (err != nil) != (tc.registry != "") {
			t.Errorf("%s: %q, %v; want %q", tc.name, registry, err, tc.registry)
		}
		if err != nil && !strings.Contains(err.Error(), "not allowed by whitelist") {
			t.Errorf("%s: reason %v does not give the server's words", tc.name, err)
		}
	}
}

func insecureRepository(is *imagev1.ImageStream) *imagev1.ImageStream {
	is.Annotations = map[string]string{importallow.InsecureRepositoryAnnotation: "true"}
	return is
}

func withRepository(is *imagev1.ImageStream, repo string) *imagev1.ImageStream {
	is.Spec.DockerImageRepository = repo
	return is
}
