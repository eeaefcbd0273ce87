package importallow

import (
	"slices"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	"github.com/openshift/library-go/pkg/image/reference"
	corev1 "k8s.io/api/core/v1"
)

func locations(insecure bool, domains ...string) []configv1.RegistryLocation {
	out := []configv1.RegistryLocation{}
	for _, d := range domains {
		out = append(out, configv1.RegistryLocation{DomainName: d, Insecure: insecure})
	}
	return out
}

// The oracle: the inputs and answers of openshift-apiserver's own table for its registry
// allow-list (whitelister_test.go TestRegistryWhitelister); "" means allowed.
func TestTheServersTable(t *testing.T) {
	const five = `"localhost:5000", "docker.io:80", "example.com:*", "registry.com:80", and 2 more ...`
	const fiveSecure = `"localhost:5000", "docker.io:443", "example.com:*", "registry.com:80", and 2 more ...`
	for _, tc := range []struct {
		name      string
		transport Transport
		allowed   []configv1.RegistryLocation
		hosts     map[string]string
		refs      map[reference.DockerImageReference]string
		pullSpecs map[string]string
	}{
		{name: "empty whitelist", transport: Secure, allowed: locations(true),
			hosts: map[string]string{
				"example.com":    `registry "example.com" not allowed by empty whitelist`,
				"localhost:5000": `registry "localhost:5000" not allowed by empty whitelist`,
			},
			refs: map[reference.DockerImageReference]string{
				{Registry: "docker.io", Namespace: "library", Name: "busybox"}: `registry "docker.io" not allowed by empty whitelist`,
				{Name: "busybox"}: `registry "docker.io:443" not allowed by empty whitelist`,
			}},
		{name: "any host, secure", transport: Secure, allowed: locations(false, "*"),
			hosts: map[string]string{
				"docker.io": "", "example.com": "", "localhost:443": "", "localhost": "",
				"localhost:5000": `registry "localhost:5000" not allowed by whitelist: "*:443"`,
				"localhost:80":   `registry "localhost:80" not allowed by whitelist: "*:443"`,
			}},
		{name: "any host, insecure", transport: Insecure, allowed: locations(true, "*"),
			hosts: map[string]string{
				"docker.io": "", "example.com": "", "localhost:80": "", "localhost": "",
				"localhost:443":  `registry "localhost:443" not allowed by whitelist: "*:80"`,
				"localhost:5000": `registry "localhost:5000" not allowed by whitelist: "*:80"`,
			}},
		{name: "any host, any transport", transport: Any, allowed: locations(true, "*"),
			hosts: map[string]string{
				"docker.io": "", "example.com": "", "localhost:80": "", "localhost": "",
				"localhost:443":  `registry "localhost:443" not allowed by whitelist: "*:80"`,
				"localhost:5000": `registry "localhost:5000" not allowed by whitelist: "*:80"`,
			}},
		{name: "any host:port, secure", transport: Secure, allowed: locations(false, "*:*"),
			hosts: map[string]string{"localhost:5000": "", "docker.io": "", "localhost:443": "", "localhost:80": "", "example.com": ""},
			refs: map[reference.DockerImageReference]string{
				{Registry: "docker.io", Namespace: "library", Name: "busybox"}: "",
				{Registry: "localhost:5000", Namespace: "my", Name: "app"}:     "",
			}},
		{name: "listed, secure", transport: Secure, allowed: locations(false, "localhost:5000", "docker.io", "example.com:*", "registry.com:80"),
			hosts: map[string]string{
				"example.com:5000": "", "example.com:80": "", "example.com": "", "localhost:5000": "", "registry-1.docker.io:443": "", "registry.com:80": "",
				"localhost:443":    `registry "localhost:443" not allowed by whitelist: "localhost:5000", "docker.io:443", "example.com:*", "registry.com:80"`,
				"registry.com:443": `registry "registry.com:443" not allowed by whitelist: "localhost:5000", "docker.io:443", "example.com:*", "registry.com:80"`,
				"registry.com":     `registry "registry.com" not allowed by whitelist: "localhost:5000", "docker.io:443", "example.com:*", "registry.com:80"`,
			},
			refs: map[reference.DockerImageReference]string{
				{Registry: "docker.io"}: "", {Registry: "index.docker.io"}: "", {Registry: "example.com"}: "", {Registry: "localhost:5000"}: "", {Name: "busybox"}: "",
				{Registry: "registry.example.com"}: `registry "registry.example.com" not allowed by whitelist: "localhost:5000", "docker.io:443", "example.com:*", "registry.com:80"`,
			}},
		// Five entries are all named; from six on, the first four and a count.
		{name: "five listed, secure", transport: Secure, allowed: locations(false, "localhost:5000", "docker.io", "example.com:*", "registry.com:80", "quay.io"),
			hosts: map[string]string{
				"registry.example.com": `registry "registry.example.com" not allowed by whitelist: "localhost:5000", "docker.io:443", "example.com:*", "registry.com:80", "quay.io:443"`,
			}},
		{name: "listed with globs, insecure", transport: Insecure, allowed: locations(true, "localhost:5000", "docker.io", "example.com:*", "registry.com:80", "*.foo.com", "*domain.ltd"),
			hosts: map[string]string{
				"a.b.c.d.foo.com:80": "", "domain.ltd": "", "example.com": "", "index.docker.io": "", "localhost:5000": "",
				"my.domain.ltd:80": "", "my.domain.ltd": "", "mydomain.ltd": "", "registry.com": "", "registry.foo.com": "",
				"foo.com":           `registry "foo.com" not allowed by whitelist: ` + five,
				"my.domain.ltd:443": `registry "my.domain.ltd:443" not allowed by whitelist: ` + five,
			},
			refs: map[reference.DockerImageReference]string{
				{Registry: "docker.io", Namespace: "library", Name: "busybox"}: "",
				{Registry: "foo.com", Namespace: "library", Name: "busybox"}:   `registry "foo.com" not allowed by whitelist: ` + five,
				{Registry: "ffoo.com", Namespace: "library", Name: "busybox"}:  `registry "ffoo.com" not allowed by whitelist: ` + five,
			}},
		{name: "listed with globs, any transport", transport: Any, allowed: locations(false, "localhost:5000", "docker.io", "example.com:*", "registry.com:80", "*.foo.com", "*domain.ltd"),
			hosts: map[string]string{
				"domain.ltd": "", "example.com": "", "index.docker.io": "", "localhost:5000": "", "my.domain.ltd:443": "",
				"my.domain.ltd": "", "mydomain.ltd": "", "registry.com": "", "registry.foo.com": "",
				"a.b.c.d.foo.com:80": `registry "a.b.c.d.foo.com:80" not allowed by whitelist: ` + fiveSecure,
				"foo.com":            `registry "foo.com" not allowed by whitelist: ` + fiveSecure,
				"my.domain.ltd:80":   `registry "my.domain.ltd:80" not allowed by whitelist: ` + fiveSecure,
				"registry.com:443":   `registry "registry.com:443" not allowed by whitelist: ` + fiveSecure,
			}},
		{name: "listed pull specs, any transport", transport: Any, allowed: locations(true, "localhost:5000", "docker.io", "example.com:*", "registry.com:80", "*.foo.com", "*domain.ltd"),
			pullSpecs: map[string]string{
				"a.b.c.d.foo.com:80/repo": "", "domain.ltd/a/b": "", "example.com/c/d": "", "index.docker.io/bar": "", "localhost:5000/repo": "",
				"my.domain.ltd:80/foo:latest": "", "my.domain.ltd/bar:1.3.4": "", "mydomain.ltd/my/repo/sitory": "", "registry.com/repo": "",
				"registry.foo.com/123": "", "repository:latest": "", "nm/repo:latest": "",
				"foo.com/foo":             `registry "foo.com" not allowed by whitelist: ` + five,
				"my.domain.ltd:443/a/b":   `registry "my.domain.ltd:443" not allowed by whitelist: ` + five,
				"registry.com:443/ab:tag": `registry "registry.com:443" not allowed by whitelist: ` + five,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newList(tc.allowed, "")
			check := func(what string, err error, want string) {
				t.Helper()
				got := ""
				if err != nil {
					got = err.Error()
				}
				if got != want {
					t.Errorf("%s: %q, the server answers %q", what, got, want)
				}
			}
			for h, want := range tc.hosts {
				check("host "+h, l.AdmitHost(h, tc.transport), want)
			}
			for r, want := range tc.refs {
				check("reference "+r.String(), l.AdmitReference(r, tc.transport), want)
			}
			for p, want := range tc.pullSpecs {
				check("pull spec "+p, l.AdmitPullSpec(p, tc.transport), want)
			}
		})
	}
}

// What the issue found: a suffix is no match, and a port the reference implies is one.
func TestSampleRegistries(t *testing.T) {
	for _, tc := range []struct {
		entries []string
		ref     string
		allowed bool
	}{
		{[]string{"redhat.io"}, "registry.redhat.io/ubi9/python-312:latest", false},
		{[]string{"registry.redhat.io:443"}, "registry.redhat.io/ubi9/python-312:latest", true},
		{[]string{"*.redhat.io"}, "registry.redhat.io/ubi9/python-312:latest", true},
		{[]string{"*.redhat.io"}, "registry.access.redhat.com/ubi8/openjdk-17:1.20", false},
		{[]string{"registry.redhat.io", "quay.io"}, "registry.access.redhat.com/ubi8/openjdk-17:1.20", false},
		{[]string{"registry.redhat.io", "quay.io"}, "quay.io/openshift/origin-jenkins:4.13", true},
		{[]string{"mirror.example:5000"}, "mirror.example:5000/ubi9/python-312:latest", true},
		{[]string{"mirror.example"}, "mirror.example:5000/ubi9/python-312:latest", false},
	} {
		err := New(locations(false, tc.entries...), "").AdmitPullSpec(tc.ref, Secure)
		if (err == nil) != tc.allowed {
			t.Errorf("%v admits %s: %v, want allowed=%v", tc.entries, tc.ref, err, tc.allowed)
		}
	}
	if err := New(nil, "").AdmitPullSpec("anything.example/a/b:1", Secure); err != nil {
		t.Errorf("no list: %v", err)
	}
	if err := New(locations(false, "quay.io"), "image-registry.openshift-image-registry.svc:5000").AdmitPullSpec("image-registry.openshift-image-registry.svc:5000/openshift/python:latest", Secure); err != nil {
		t.Errorf("the internal registry: %v", err)
	}
	if l := New(locations(false, "0:1:2:3", "quay.io"), ""); !slices.Equal(l.Invalid(), []string{"0:1:2:3"}) || l.AdmitHost("quay.io", Secure) != nil {
		t.Errorf("an unparsable entry: invalid %v", l.Invalid())
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true}, {"*", "a.b", true}, {"a?c", "abc", true}, {"a?c", "ac", false},
		{"*.foo.com", "a.b.foo.com", true}, {"*.foo.com", "foo.com", false}, {"*domain.ltd", "domain.ltd", true},
		{"先生，先生！", "先生，先生！", true}, {"a*b*c", "axxbyyc", true}, {"a*b*c", "axxbyy", false},
	} {
		if got := glob(tc.pattern, tc.s); got != tc.want {
			t.Errorf("glob(%q, %q) = %v", tc.pattern, tc.s, got)
		}
	}
}

// TestForUpdateOf: openshift-apiserver admits on an update every reference to a repository the
// stored stream names in spec.dockerImageRepository, a DockerImage tag or a status event, compared
// as its canonicalRepository compares them; nothing else changes.
func TestForUpdateOf(t *testing.T) {
	allow := New(locations(false, "quay.io"), "")
	old := &imagev1.ImageStream{
		Spec: imagev1.ImageStreamSpec{
			DockerImageRepository: "registry.example.com/team/base",
			Tags: []imagev1.TagReference{
				{Name: "1", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ubi9/ruby-33:1"}},
				{Name: "2", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "other.example.com/ns/not-a-reference:1"}},
				{Name: "3", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "busybox"}},
			},
		},
		Status: imagev1.ImageStreamStatus{Tags: []imagev1.NamedTagEventList{{Tag: "1", Items: []imagev1.TagEvent{
			{DockerImageReference: "registry.access.redhat.com/ubi8/openjdk-17@sha256:" + strings.Repeat("ab", 32)},
		}}}},
	}
	wider := allow.ForUpdateOf(old)
	for ref, admitted := range map[string]bool{
		"registry.redhat.io/ubi9/ruby-33:2":                                  true, // another tag of a spec repository
		"registry.redhat.io/ubi9/ruby-33@sha256:" + strings.Repeat("cd", 32): true,
		"registry.access.redhat.com/ubi8/openjdk-17:1.20":                    true,  // a repository only the status names
		"registry.example.com/team/base:7":                                   true,  // spec.dockerImageRepository
		"docker.io/library/busybox:1.36":                                     true,  // "busybox" with docker.io's defaults
		"registry.redhat.io/ubi9/python-312:1":                               false, // another repository of the registry
		"registry.redhat.io:443/ubi9/ruby-33:1":                              false, // the port is part of the name compared
		"other.example.com/ns/not-a-reference:1":                             false, // an ImageStreamTag names no repository
		"quay.io/anyone/anything:1":                                          true,  // the list itself
	} {
		if err := wider.AdmitPullSpec(ref, Secure); (err == nil) != admitted {
			t.Errorf("update admits %s: %v, want %v", ref, err, admitted)
		}
	}
	if err := allow.AdmitPullSpec("registry.redhat.io/ubi9/ruby-33:2", Secure); err == nil {
		t.Error("ForUpdateOf widened the list it was called on")
	}
	if allow.ForUpdateOf(nil) != allow {
		t.Error("a create (no stored stream) is judged by another list")
	}
	var none *List
	if err := none.ForUpdateOf(old).AdmitPullSpec("anywhere.example/a/b:1", Secure); err != nil {
		t.Errorf("no list: %v", err)
	}
}

// An entry given twice, or the internal registry listed too, is one entry: the server's message
// names it once.
func TestAnEntryGivenTwiceIsNamedOnce(t *testing.T) {
	l := New(locations(false, "quay.io", "image-registry.svc:5000", "quay.io:443"), "image-registry.svc:5000")
	const want = `registry "example.com" not allowed by whitelist: "image-registry.svc:5000", "quay.io:443"`
	if err := l.AdmitHost("example.com", Secure); err == nil || err.Error() != want {
		t.Errorf("%v, want %s", err, want)
	}
}

// A reference without a port, pulled with either transport, is judged against every entry of its
// host, not only the first: one on another port does not hide one on 443.
func TestAPortlessReferenceIsJudgedByEveryEntryOfItsHost(t *testing.T) {
	l := New(locations(false, "quay.io:5000", "quay.io"), "")
	if err := l.AdmitPullSpec("quay.io/a/b:1", Any); err != nil {
		t.Error(err)
	}
	if err := l.AdmitPullSpec("quay.io:8443/a/b:1", Any); err == nil {
		t.Error("quay.io:8443 is admitted")
	}
}
