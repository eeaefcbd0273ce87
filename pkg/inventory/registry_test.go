package inventory

import (
	"strings"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"
)

var testSources = []string{"registry.redhat.io", "registry.access.redhat.com", "quay.io", "localhost:5000"}

func TestRewriteRegistry(t *testing.T) {
	const digest = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	cases := []struct {
		ref, registry, want string
	}{
		// No override: nothing changes.
		{"registry.redhat.io/ubi9/python-311:latest", "", "registry.redhat.io/ubi9/python-311:latest"},
		// The spec 6.3 examples.
		{"registry.redhat.io/ubi8/ruby:3.1", "foo.io:1111/bar", "foo.io:1111/bar/ubi8/ruby:3.1"},
		{"centos/ruby", "foo.io:1111/bar", "foo.io:1111/bar/centos/ruby"},
		// Plain host, host:port, nested paths.
		{"registry.redhat.io/ubi9/python-311:latest", "mirror.example.com", "mirror.example.com/ubi9/python-311:latest"},
		{"registry.redhat.io/ubi9/python-311:latest", "mirror.example:5000", "mirror.example:5000/ubi9/python-311:latest"},
		{"registry.redhat.io/ubi9/python-311:latest", "mirror.example:5000/a/b", "mirror.example:5000/a/b/ubi9/python-311:latest"},
		{"quay.io/sclorg/python-311-c9s:c9s", "localhost:5000", "localhost:5000/sclorg/python-311-c9s:c9s"},
		// Weakness 14 fixed: three or more slashes get the host substituted, not prefixed.
		{"registry.redhat.io/a/b/c:1", "mirror.example:5000", "mirror.example:5000/a/b/c:1"},
		{"quay.io/org/team/sub/image:tag", "m.example/p", "m.example/p/org/team/sub/image:tag"},
		// Digests and tags are preserved.
		{"registry.access.redhat.com/ubi8/openjdk-17" + digest, "mirror.example:5000", "mirror.example:5000/ubi8/openjdk-17" + digest},
		{"registry.redhat.io/ubi9/nodejs-20:1-36" + digest, "m.example", "m.example/ubi9/nodejs-20:1-36" + digest},
		// Host comparison ignores case; a source host with a port matches exactly.
		{"Registry.RedHat.io/ubi9/php-82:latest", "m.example", "m.example/ubi9/php-82:latest"},
		{"localhost:5000/team/app:1", "m.example", "m.example/team/app:1"},
		// No registry host: prepend.
		{"ruby", "m.example:5000", "m.example:5000/ruby"},
		{"ruby:3.3", "m.example:5000", "m.example:5000/ruby:3.3"},
		{"library/ruby" + digest, "m.example:5000", "m.example:5000/library/ruby" + digest},
		// Other registries stay as they are.
		{"docker.io/library/ruby:3", "m.example", "docker.io/library/ruby:3"},
		{"icr.io/appcafe/open-liberty:latest", "m.example", "icr.io/appcafe/open-liberty:latest"},
		{"localhost/app:1", "m.example", "localhost/app:1"},
		{"registry.redhat.io.evil.example/ubi9/x:1", "m.example", "registry.redhat.io.evil.example/ubi9/x:1"},
		{"quay.io:443/org/image:1", "m.example", "quay.io:443/org/image:1"},
		// Already rewritten: idempotent, even when the override sits on a source registry.
		{"m.example:5000/ubi9/python-311:latest", "m.example:5000", "m.example:5000/ubi9/python-311:latest"},
		{"quay.io/mirror/ubi9/python-311:latest", "quay.io/mirror", "quay.io/mirror/ubi9/python-311:latest"},
		{"quay.io/sclorg/ruby-33-c9s:c9s", "quay.io/mirror", "quay.io/mirror/sclorg/ruby-33-c9s:c9s"},
		// Empty reference stays empty.
		{"", "m.example", ""},
	}
	for _, tc := range cases {
		got := RewriteRegistry(tc.ref, tc.registry, testSources)
		if got != tc.want {
			t.Errorf("RewriteRegistry(%q, %q) = %q, want %q", tc.ref, tc.registry, got, tc.want)
		}
		if again := RewriteRegistry(got, tc.registry, testSources); again != got {
			t.Errorf("RewriteRegistry is not idempotent for %q, %q: %q then %q", tc.ref, tc.registry, got, again)
		}
	}
}

func TestRegistryHost(t *testing.T) {
	cases := map[string]string{
		"registry.redhat.io/ubi9/x:1": "registry.redhat.io",
		"localhost/x":                 "localhost",
		"localhost:5000/x":            "localhost:5000",
		"myhost:5000/x":               "myhost:5000",
		"MyHost/x":                    "MyHost",
		"centos/ruby":                 "",
		"ruby:3.3":                    "",
		"ruby":                        "",
	}
	for ref, want := range cases {
		if got := RegistryHost(ref); got != want {
			t.Errorf("RegistryHost(%q) = %q, want %q", ref, got, want)
		}
	}
}

func TestValidateRegistry(t *testing.T) {
	valid := []string{
		"", "foo.io", "foo.io:1111", "foo.io/bar", "foo.io:1111/bar", "mirror.example.com:5000/a/b/c",
		"localhost", "localhost:5000/samples", "mirror:5000", "Mirror.Example.COM/samples", "10.0.0.1:5000/x",
		"m.example/a_b/c-d/e.f/g__h/i--j", "m.example:65535", "m.example:1",
		// At the limits: 255 characters in all, 253 in the host name.
		"mirror.example.com/" + strings.Repeat("a", 236),
		strings.Repeat(strings.Repeat("a", 63)+".", 3) + strings.Repeat("a", 61),
	}
	for _, s := range valid {
		if err := ValidateRegistry(s); err != nil {
			t.Errorf("ValidateRegistry(%q) = %v, want nil", s, err)
		}
	}
	invalid := []struct{ in, want string }{
		{"https://mirror.example.com", `remove "https://" and give host[:port][/path], for example "mirror.example.com"`},
		{"docker://mirror.example.com/x/", `remove "docker://"`},
		{"mirror.example.com/", `must not end with '/'; use "mirror.example.com"`},
		{"mirror.example.com/samples//", `must not end with '/'; use "mirror.example.com/samples"`},
		{" mirror.example.com", "white space"},
		{"mirror.example.com /x", "white space"},
		{"/samples", "registry host is empty"},
		{":5000/samples", "host name before the port is empty"},
		{"mirror.example.com:", `port "" is not a number between 1 and 65535`},
		{"mirror.example.com:0", `port "0"`},
		{"mirror.example.com:65536", `port "65536"`},
		{"mirror.example.com:50a0", `port "50a0"`},
		{"mirror.example.com:+500", `port "+500"`},
		{"mirror.example.com:05000", `port "05000"`},
		{"[::1]:5000", "IPv6 address literals are not supported"},
		{"fe80::1", "IPv6 address literals are not supported"},
		{"mirror", `host "mirror" has neither a '.' nor a port`},
		{"-bad.example.com", "is not valid; use letters, digits and '-'"},
		{"bad_host.example.com", "is not valid"},
		{"bad..example.com", "is not valid"},
		{"mirror.example.com/Samples", `path component "Samples" has upper-case letters; repository paths must be lower case (use "samples")`},
		{"mirror.example.com/a//b", "empty component"},
		{"mirror.example.com/a/b:1", `path component "b:1" contains ':'; a tag is not allowed`},
		{"mirror.example.com/a@sha256:abc", "must not contain a digest"},
		{"mirror.example.com/-a", `path component "-a" is not valid`},
		{"mirror.example.com/a..b", `path component "a..b" is not valid`},
		{"m.example/" + strings.Repeat("a", 300), "at most 255"},
		{strings.Repeat("a", 64) + ".example.com", "is not valid"},
	}
	for _, tc := range invalid {
		err := ValidateRegistry(tc.in)
		if err == nil {
			t.Errorf("ValidateRegistry(%q) = nil, want an error containing %q", tc.in, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "samplesRegistry") {
			t.Errorf("ValidateRegistry(%q) = %q, want it to contain %q", tc.in, err, tc.want)
		}
	}
}

func TestRewriteImageStream(t *testing.T) {
	is := &imagev1.ImageStream{
		Spec: imagev1.ImageStreamSpec{
			DockerImageRepository: "registry.redhat.io/ubi9/ruby-33",
			Tags: []imagev1.TagReference{
				{Name: "3.3", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ubi9/ruby-33:latest"}},
				{Name: "other", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "docker.io/library/ruby:3"}},
				{Name: "latest", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "3.3"}},
				{Name: "nofrom"},
			},
		},
	}
	out := RewriteImageStream(is, "m.example:5000/samples", []string{"registry.redhat.io"})
	want := []string{"m.example:5000/samples/ubi9/ruby-33:latest", "docker.io/library/ruby:3", "3.3"}
	for i, w := range want {
		if got := out.Spec.Tags[i].From.Name; got != w {
			t.Errorf("tag %s: from.name = %q, want %q", out.Spec.Tags[i].Name, got, w)
		}
	}
	if out.Spec.DockerImageRepository != "m.example:5000/samples/ubi9/ruby-33" {
		t.Errorf("dockerImageRepository = %q", out.Spec.DockerImageRepository)
	}
	if is.Spec.Tags[0].From.Name != "registry.redhat.io/ubi9/ruby-33:latest" || is.Spec.DockerImageRepository != "registry.redhat.io/ubi9/ruby-33" {
		t.Error("RewriteImageStream modified its input")
	}
	if same := RewriteImageStream(is, "", []string{"registry.redhat.io"}); same == is || same.Spec.Tags[0].From.Name != is.Spec.Tags[0].From.Name {
		t.Error("empty registry must return an unchanged copy")
	}
}

func TestInventoryRegistryOverride(t *testing.T) {
	inv, err := Embedded(ArchDirOCPX86_64)
	if err != nil {
		t.Fatal(err)
	}
	is, ok := inv.ImageStreamForRegistry("java-runtime", "mirror.example:5000")
	if !ok {
		t.Fatal("java-runtime missing")
	}
	for _, tag := range is.Spec.Tags {
		if tag.From.Kind == "DockerImage" && !strings.HasPrefix(tag.From.Name, "mirror.example:5000/ubi") {
			t.Errorf("tag %s not rewritten: %q", tag.Name, tag.From.Name)
		}
		if tag.From.Kind == "ImageStreamTag" && strings.Contains(tag.From.Name, "mirror") {
			t.Errorf("ImageStreamTag %s rewritten: %q", tag.Name, tag.From.Name)
		}
	}
	orig, _ := inv.ImageStream("java-runtime")
	if strings.HasPrefix(orig.Spec.Tags[0].From.Name, "mirror") {
		t.Error("the inventory itself was modified")
	}
	if _, ok := inv.ImageStreamForRegistry("nope", "m.example"); ok {
		t.Error("unknown stream found")
	}
	// Every image to mirror is rewritten onto the mirror, for both source registries.
	for _, ref := range inv.ImagesToMirror() {
		got := RewriteRegistry(ref, "mirror.example:5000", inv.SourceRegistries())
		if !strings.HasPrefix(got, "mirror.example:5000/") || strings.Count(got, "/") != strings.Count(ref, "/") {
			t.Errorf("%q rewritten to %q", ref, got)
		}
	}
}
