package mirrorsets

import (
	"reflect"
	"slices"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func itms(name string, entries ...configv1.ImageTagMirrors) *configv1.ImageTagMirrorSet {
	return &configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configv1.ImageTagMirrorSetSpec{ImageTagMirrors: entries}}
}

func tagEntry(source string, mirrors ...configv1.ImageMirror) configv1.ImageTagMirrors {
	return configv1.ImageTagMirrors{Source: source, Mirrors: mirrors}
}

func idms(name string, entries ...configv1.ImageDigestMirrors) *configv1.ImageDigestMirrorSet {
	return &configv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: configv1.ImageDigestMirrorSetSpec{ImageDigestMirrors: entries}}
}

func digestEntry(source string, mirrors ...configv1.ImageMirror) configv1.ImageDigestMirrors {
	return configv1.ImageDigestMirrors{Source: source, Mirrors: mirrors}
}

func icsp(name, source string, mirrors ...string) *operatorv1alpha1.ImageContentSourcePolicy {
	return &operatorv1alpha1.ImageContentSourcePolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: operatorv1alpha1.ImageContentSourcePolicySpec{RepositoryDigestMirrors: []operatorv1alpha1.RepositoryDigestMirrors{{Source: source, Mirrors: mirrors}}}}
}

const digest = "@sha256:0123456789012345678901234567890123456789012345678901234567890123"

func TestResolve(t *testing.T) {
	never := tagEntry("registry.redhat.io", "m.example/rh")
	never.MirrorSourcePolicy = configv1.NeverContactSource
	for _, tc := range []struct {
		name string
		sets Sets
		ref  string
		want Route
	}{
		{"no mirror sets", Sets{}, "registry.redhat.io/ubi9/python-311:1",
			Route{}},
		{"a host source keeps the whole path below it", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("registry.redhat.io", "127.0.0.1:5000/rh"))}},
			"registry.redhat.io/ubi9/python-311:1",
			Route{Source: "registry.redhat.io", Mirrors: []string{"127.0.0.1:5000/rh/ubi9/python-311:1"}, By: []string{"ImageTagMirrorSet/a"}}},
		{"another host does not match", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("registry.redhat.io", "m.example"))}},
			"registry.access.redhat.com/ubi8/ruby:1", Route{}},
		{"a host is not a prefix of a longer host", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("registry.redhat", "m.example"))}},
			"registry.redhat.io/ubi9/ruby:1", Route{}},
		{"a host with a port is another registry", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("registry.redhat.io", "m.example"))}},
			"registry.redhat.io:5000/ubi9/ruby:1", Route{}},
		{"a repository prefix matches at a path boundary", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("registry.redhat.io/ubi9", "m.example/u9"))}},
			"registry.redhat.io/ubi9/ruby-33:1",
			Route{Source: "registry.redhat.io/ubi9", Mirrors: []string{"m.example/u9/ruby-33:1"}, By: []string{"ImageTagMirrorSet/a"}}},
		{"a repository prefix does not match inside a component", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("registry.redhat.io/ubi9", "m.example/u9"))}},
			"registry.redhat.io/ubi9-minimal/ruby:1", Route{}},
		{"a whole repository matches its tags", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("quay.io/fedora/ruby", "m.example/ruby"))}},
			"quay.io/fedora/ruby:3.3",
			Route{Source: "quay.io/fedora/ruby", Mirrors: []string{"m.example/ruby:3.3"}, By: []string{"ImageTagMirrorSet/a"}}},
		{"the longest prefix wins", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("registry.redhat.io", "m.example/all"), tagEntry("registry.redhat.io/ubi9", "m.example/u9"))}},
			"registry.redhat.io/ubi9/ruby:1",
			Route{Source: "registry.redhat.io/ubi9", Mirrors: []string{"m.example/u9/ruby:1"}, By: []string{"ImageTagMirrorSet/a"}}},
		{"the longest prefix wins even when its mirrors serve only digests", Sets{
			Tag:    []*configv1.ImageTagMirrorSet{itms("a", tagEntry("registry.redhat.io", "m.example/all"))},
			Digest: []*configv1.ImageDigestMirrorSet{idms("b", digestEntry("registry.redhat.io/ubi9", "m.example/u9"))}},
			"registry.redhat.io/ubi9/ruby:1",
			Route{Source: "registry.redhat.io/ubi9"}},
		{"an exact prefix applies beside a wildcard", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("*.redhat.io", "m.example/wild"), tagEntry("registry.redhat.io", "m.example/rh"))}},
			"registry.redhat.io/ubi9/ruby:1",
			Route{Source: "registry.redhat.io", Mirrors: []string{"m.example/rh/ubi9/ruby:1"}, By: []string{"ImageTagMirrorSet/a"}}},
		{"a wildcard source mirrors no import", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("*.redhat.io", "m.example/wild"))}},
			"registry.redhat.io/ubi9/ruby:1", Route{}},
		{"a tag mirror set does not serve a digest", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("registry.redhat.io", "m.example"))}},
			"registry.redhat.io/ubi9/ruby" + digest, Route{Source: "registry.redhat.io"}},
		{"a digest mirror set serves a digest", Sets{Digest: []*configv1.ImageDigestMirrorSet{idms("d", digestEntry("registry.redhat.io", "m.example"))}},
			"registry.redhat.io/ubi9/ruby" + digest,
			Route{Source: "registry.redhat.io", Mirrors: []string{"m.example/ubi9/ruby" + digest}, By: []string{"ImageDigestMirrorSet/d"}}},
		{"a digest mirror set does not serve a tag", Sets{Digest: []*configv1.ImageDigestMirrorSet{idms("d", digestEntry("registry.redhat.io", "m.example"))}},
			"registry.redhat.io/ubi9/ruby:1", Route{Source: "registry.redhat.io"}},
		{"an ImageContentSourcePolicy does not serve a tag", Sets{ContentPolicy: []*operatorv1alpha1.ImageContentSourcePolicy{icsp("p", "registry.redhat.io", "m.example")}},
			"registry.redhat.io/ubi9/ruby:1", Route{Source: "registry.redhat.io"}},
		{"an ImageContentSourcePolicy serves a digest", Sets{ContentPolicy: []*operatorv1alpha1.ImageContentSourcePolicy{icsp("p", "registry.redhat.io", "m.example")}},
			"registry.redhat.io/ubi9/ruby" + digest,
			Route{Source: "registry.redhat.io", Mirrors: []string{"m.example/ubi9/ruby" + digest}, By: []string{"ImageContentSourcePolicy/p"}}},
		{"entries of several objects merge in name order, without duplicates", Sets{
			Tag: []*configv1.ImageTagMirrorSet{
				itms("z", tagEntry("registry.redhat.io", "m2.example", "m1.example")),
				itms("a", tagEntry("registry.redhat.io", "m1.example"))},
			ContentPolicy: []*operatorv1alpha1.ImageContentSourcePolicy{icsp("p", "registry.redhat.io", "m3.example")}},
			"registry.redhat.io/ubi9/ruby:1",
			Route{Source: "registry.redhat.io", Mirrors: []string{"m1.example/ubi9/ruby:1", "m2.example/ubi9/ruby:1"},
				By: []string{"ImageTagMirrorSet/a", "ImageTagMirrorSet/z"}}},
		{"digest mirrors of both kinds merge, IDMS first", Sets{
			Digest:        []*configv1.ImageDigestMirrorSet{idms("d", digestEntry("registry.redhat.io", "m1.example"))},
			ContentPolicy: []*operatorv1alpha1.ImageContentSourcePolicy{icsp("p", "registry.redhat.io", "m2.example", "m1.example")}},
			"registry.redhat.io/ubi9/ruby" + digest,
			Route{Source: "registry.redhat.io", Mirrors: []string{"m1.example/ubi9/ruby" + digest, "m2.example/ubi9/ruby" + digest},
				By: []string{"ImageContentSourcePolicy/p", "ImageDigestMirrorSet/d"}}},
		{"a mirror equal to its source is no mirror", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("registry.redhat.io", "one.example", "registry.redhat.io", "two.example"))}},
			"registry.redhat.io/ubi9/ruby:1",
			Route{Source: "registry.redhat.io", Mirrors: []string{"one.example/ubi9/ruby:1", "two.example/ubi9/ruby:1"}, By: []string{"ImageTagMirrorSet/a"}}},
		{"an entry whose only mirror is its source is no entry", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("registry.redhat.io", "registry.redhat.io"))}},
			"registry.redhat.io/ubi9/ruby:1", Route{}},
		{"an entry whose only mirror is its source hides no shorter source", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a",
			tagEntry("registry.redhat.io", "m.example/rh"), tagEntry("registry.redhat.io/ubi9", "registry.redhat.io/ubi9"))}},
			"registry.redhat.io/ubi9/ruby:1",
			Route{Source: "registry.redhat.io", Mirrors: []string{"m.example/rh/ubi9/ruby:1"}, By: []string{"ImageTagMirrorSet/a"}}},
		{"NeverContactSource changes no mirror", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", never), itms("b", tagEntry("registry.redhat.io", "m2.example"))}},
			"registry.redhat.io/ubi9/ruby:1",
			Route{Source: "registry.redhat.io", Mirrors: []string{"m.example/rh/ubi9/ruby:1", "m2.example/ubi9/ruby:1"}, By: []string{"ImageTagMirrorSet/a", "ImageTagMirrorSet/b"}}},
		{"an entry without mirrors is no entry", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("registry.redhat.io"))}},
			"registry.redhat.io/ubi9/ruby:1", Route{}},
		{"several mirrors merge across objects in order, each once", Sets{Tag: []*configv1.ImageTagMirrorSet{
			itms("a", tagEntry("registry.redhat.io", "one.example", "two.example")),
			itms("b", tagEntry("registry.redhat.io", "two.example", "three.example"))}},
			"registry.redhat.io/ubi9/python-311:1",
			Route{Source: "registry.redhat.io", Mirrors: []string{"one.example/ubi9/python-311:1", "two.example/ubi9/python-311:1", "three.example/ubi9/python-311:1"},
				By: []string{"ImageTagMirrorSet/a", "ImageTagMirrorSet/b"}}},
		{"a digest under a repository source", Sets{Digest: []*configv1.ImageDigestMirrorSet{idms("d", digestEntry("registry.redhat.io/ubi9", "m.example:5000/ubi9"))}},
			"registry.redhat.io/ubi9/python-311" + digest,
			Route{Source: "registry.redhat.io/ubi9", Mirrors: []string{"m.example:5000/ubi9/python-311" + digest}, By: []string{"ImageDigestMirrorSet/d"}}},
		{"a name without a registry is on docker.io, as the server names it", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("docker.io/library", "m.example/hub"))}},
			"busybox:1",
			Route{Source: "docker.io/library", Mirrors: []string{"m.example/hub/busybox:1"}, By: []string{"ImageTagMirrorSet/a"}}},
		{"a name with a namespace and no registry is on docker.io", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("docker.io", "m.example/hub"))}},
			"centos/ruby-27:latest",
			Route{Source: "docker.io", Mirrors: []string{"m.example/hub/centos/ruby-27:latest"}, By: []string{"ImageTagMirrorSet/a"}}},
		{"an empty source matches nothing", Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("", "m.example"))}},
			"registry.redhat.io/ubi9/ruby:1", Route{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.sets.Resolve(tc.ref)
			if len(got.By) == 0 {
				got.By = nil
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Resolve(%q)\n got %+v\nwant %+v", tc.ref, got, tc.want)
			}
		})
	}
}

func TestAddressAndHost(t *testing.T) {
	for spec, want := range map[string][2]string{
		"registry.redhat.io/ubi9/ruby:1": {"registry.redhat.io:443", "registry.redhat.io"},
		"127.0.0.1:5000/rh/ubi9/ruby:1":  {"127.0.0.1:5000", "127.0.0.1:5000"},
		"127.0.0.1:5000/rh":              {"127.0.0.1:5000", "127.0.0.1:5000"},
		"mirror.example":                 {"mirror.example:443", "mirror.example"},
	} {
		if got := Address(spec); got != want[0] {
			t.Errorf("Address(%q) = %q, want %q", spec, got, want[0])
		}
		if got := Host(spec); got != want[1] {
			t.Errorf("Host(%q) = %q, want %q", spec, got, want[1])
		}
	}
}

func TestPullSpecs(t *testing.T) {
	is := &imagev1.ImageStream{Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{
		{Name: "1", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/a:1"}},
		{Name: "latest", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "1"}},
		{Name: "again", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/a:1"}},
		{Name: "2", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "quay.io/b:2"}},
		{Name: "none"},
	}}}
	if got, want := PullSpecs(is), []string{"registry.redhat.io/a:1", "quay.io/b:2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("PullSpecs = %v, want %v", got, want)
	}
}

func TestFingerprint(t *testing.T) {
	a := Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("registry.redhat.io", "m.example")), itms("b", tagEntry("quay.io", "m.example/q"))}}
	b := Sets{Tag: []*configv1.ImageTagMirrorSet{itms("b", tagEntry("quay.io", "m.example/q")), itms("a", tagEntry("registry.redhat.io", "m.example"))}}
	b.Tag[0].ResourceVersion = "42"
	if a.Fingerprint() != b.Fingerprint() {
		t.Errorf("the same rules in another order or resourceVersion give another fingerprint")
	}
	c := Sets{Tag: []*configv1.ImageTagMirrorSet{itms("a", tagEntry("registry.redhat.io", "m2.example")), itms("b", tagEntry("quay.io", "m.example/q"))}}
	if a.Fingerprint() == c.Fingerprint() {
		t.Errorf("another mirror gives the same fingerprint")
	}
	if (Sets{}).Fingerprint() != "" || !(Sets{}).Empty() || a.Empty() {
		t.Errorf("empty sets: fingerprint %q, Empty %t; a.Empty %t", (Sets{}).Fingerprint(), (Sets{}).Empty(), a.Empty())
	}
}

// TestResolveThroughEveryKindAtOnce: the three kinds together, as `inventory check-mirror`, the
// install decision and the import emulator see them; objects are listed in name order.
func TestResolveThroughEveryKindAtOnce(t *testing.T) {
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
	const (
		itmsA, itmsB = "ImageTagMirrorSet/a", "ImageTagMirrorSet/b"
		idmsC        = "ImageDigestMirrorSet/c"
		icspD, icspE = "ImageContentSourcePolicy/d", "ImageContentSourcePolicy/e"
	)
	r := NewResolver(sets)
	for _, tc := range []struct {
		ref     string
		mirrors []string
		by      []string
	}{
		{"registry.redhat.io/ubi10/python-312-minimal:latest", []string{"m1.example/rh/ubi10/python-312-minimal:latest",
			"m2.example/rh/ubi10/python-312-minimal:latest", "m4.example:5000/rh/ubi10/python-312-minimal:latest"}, []string{itmsA, itmsB}},
		{"registry.redhat.io/ubi10/python-312-minimal" + digest, []string{"d1.example/rh/ubi10/python-312-minimal" + digest,
			"d3.example/rh/ubi10/python-312-minimal" + digest}, []string{icspD, idmsC}},
		{"registry.redhat.io/ubi9/ruby-33:1", []string{"m3.example/u9/ruby-33:1"}, []string{itmsA}},
		{"registry.redhat.io/ubi9/ruby-33" + digest, nil, nil},
		{"registry.redhat.io/ubi9-minimal/ruby:1", []string{"m1.example/rh/ubi9-minimal/ruby:1", "m2.example/rh/ubi9-minimal/ruby:1",
			"m4.example:5000/rh/ubi9-minimal/ruby:1"}, []string{itmsA, itmsB}},
		{"registry.redhat.io:5000/ubi9/ruby:1", nil, nil},
		{"registry.access.redhat.com/ubi8/openjdk-17:1.20", nil, nil},
		{"registry.access.redhat.com/ubi8/openjdk-17" + digest, []string{"d2.example/u8/openjdk-17" + digest}, []string{idmsC}},
		{"registry.access.redhat.com/ubi7/go-toolset" + digest, []string{"d4.example/access/ubi7/go-toolset" + digest}, []string{icspE}},
		{"quay.io/fedora/ruby-33:1", nil, nil},
		{"quay.io/centos7/ruby-27-centos7:latest", nil, nil},
		{"registry.example.org/team/app:1", nil, nil},
	} {
		got := r.Resolve(tc.ref)
		if !slices.Equal(got.Mirrors, tc.mirrors) || !slices.Equal(got.By, tc.by) {
			t.Errorf("%s: mirrors %q by %q, want %q by %q", tc.ref, got.Mirrors, got.By, tc.mirrors, tc.by)
		}
		if got.Mirrored() != (len(tc.mirrors) > 0) {
			t.Errorf("%s: Mirrored %t", tc.ref, got.Mirrored())
		}
	}
}
