package mirrorsets

import (
	"reflect"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"
)

// streams are three imagestreams on three registries, one of them on two, and one pinned by digest.
var streams = map[string][]string{
	"python": {"registry.redhat.io/ubi9/python-311:1", "registry.redhat.io/ubi10/python-312-minimal:latest"},
	"ruby":   {"registry.access.redhat.com/ubi8/ruby-30:1", "registry.redhat.io/ubi9/ruby-33:1"},
	"golang": {"quay.io/fedora/golang" + digest},
}

func TestCoverage(t *testing.T) {
	rh := itms("rh", tagEntry("registry.redhat.io", "127.0.0.1:5000/rh"))
	access := itms("access", tagEntry("registry.access.redhat.com", "127.0.0.1:5000/access"))
	quayTags := itms("quay", tagEntry("quay.io", "127.0.0.1:5000/quay"))
	quayDigests := idms("quay", digestEntry("quay.io", "127.0.0.1:6000/quay"))
	all := Sets{Tag: []*configv1.ImageTagMirrorSet{rh, access}, Digest: []*configv1.ImageDigestMirrorSet{quayDigests}}
	for _, tc := range []struct {
		name        string
		sets        Sets
		any, all    bool
		by          []string
		unmirrored  map[string][]string
		targets     []string
		answered    []string
		unimporting map[string][]string
	}{
		{name: "no mirror sets: every registry is probed itself", sets: Sets{},
			unmirrored:  map[string][]string{"python": {"registry.redhat.io"}, "ruby": {"registry.access.redhat.com", "registry.redhat.io"}, "golang": {"quay.io"}},
			targets:     []string{"quay.io:443", "registry.access.redhat.com:443", "registry.redhat.io:443"},
			answered:    []string{"registry.redhat.io:443"},
			unimporting: map[string][]string{"ruby": {"registry.access.redhat.com"}, "golang": {"quay.io"}}},
		{name: "every registry mirrored: only the mirrors are probed", sets: all, any: true, all: true,
			by:          []string{"ImageDigestMirrorSet/quay", "ImageTagMirrorSet/access", "ImageTagMirrorSet/rh"},
			unmirrored:  map[string][]string{},
			targets:     []string{"127.0.0.1:5000", "127.0.0.1:6000"},
			answered:    []string{"127.0.0.1:5000", "127.0.0.1:6000"},
			unimporting: map[string][]string{}},
		{name: "a mirror that does not answer fails every image it serves", sets: all, any: true, all: true,
			by:          []string{"ImageDigestMirrorSet/quay", "ImageTagMirrorSet/access", "ImageTagMirrorSet/rh"},
			unmirrored:  map[string][]string{},
			targets:     []string{"127.0.0.1:5000", "127.0.0.1:6000"},
			answered:    []string{"127.0.0.1:5000"},
			unimporting: map[string][]string{"golang": {"quay.io"}}},
		{name: "a tag mirror set leaves the pinned image unmirrored", sets: Sets{Tag: []*configv1.ImageTagMirrorSet{rh, access, quayTags}}, any: true,
			by:          []string{"ImageTagMirrorSet/access", "ImageTagMirrorSet/rh"},
			unmirrored:  map[string][]string{"golang": {"quay.io"}},
			targets:     []string{"127.0.0.1:5000", "quay.io:443"},
			answered:    []string{"127.0.0.1:5000"},
			unimporting: map[string][]string{"golang": {"quay.io"}}},
		{name: "some registries mirrored: the others are probed themselves", sets: Sets{Tag: []*configv1.ImageTagMirrorSet{rh}}, any: true,
			by:          []string{"ImageTagMirrorSet/rh"},
			unmirrored:  map[string][]string{"ruby": {"registry.access.redhat.com"}, "golang": {"quay.io"}},
			targets:     []string{"127.0.0.1:5000", "quay.io:443", "registry.access.redhat.com:443"},
			answered:    []string{"127.0.0.1:5000", "quay.io:443"},
			unimporting: map[string][]string{"ruby": {"registry.access.redhat.com"}}},
		{name: "ImageContentSourcePolicies serve the pinned image only", sets: Sets{ContentPolicy: []*operatorv1alpha1.ImageContentSourcePolicy{
			icsp("a", "registry.redhat.io", "m.example:5000/rh"), icsp("b", "registry.access.redhat.com", "m.example:5000/a"), icsp("c", "quay.io", "m.example:5000/q")}},
			any:         true,
			by:          []string{"ImageContentSourcePolicy/c"},
			unmirrored:  map[string][]string{"python": {"registry.redhat.io"}, "ruby": {"registry.access.redhat.com", "registry.redhat.io"}},
			targets:     []string{"m.example:5000", "registry.access.redhat.com:443", "registry.redhat.io:443"},
			answered:    []string{"m.example:5000"},
			unimporting: map[string][]string{"python": {"registry.redhat.io"}, "ruby": {"registry.access.redhat.com", "registry.redhat.io"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Cover(tc.sets, streams)
			if c.Any() != tc.any || c.All() != tc.all {
				t.Errorf("Any %t All %t, want %t %t", c.Any(), c.All(), tc.any, tc.all)
			}
			if got := c.By(); !reflect.DeepEqual(got, tc.by) && (len(got) != 0 || len(tc.by) != 0) {
				t.Errorf("By = %v, want %v", got, tc.by)
			}
			if got := c.Unmirrored(); !reflect.DeepEqual(got, tc.unmirrored) {
				t.Errorf("Unmirrored = %v, want %v", got, tc.unmirrored)
			}
			if got := c.ProbeTargets(); !reflect.DeepEqual(got, tc.targets) {
				t.Errorf("ProbeTargets = %v, want %v", got, tc.targets)
			}
			answered := func(a string) bool {
				for _, x := range tc.answered {
					if x == a {
						return true
					}
				}
				return false
			}
			if got := c.Unimportable(answered); !reflect.DeepEqual(got, tc.unimporting) {
				t.Errorf("Unimportable = %v, want %v", got, tc.unimporting)
			}
		})
	}
	if (Coverage{}).All() {
		t.Errorf("a coverage of no image says All")
	}
}

func TestStreamsPhrase(t *testing.T) {
	if got, want := StreamsPhrase(map[string][]string{"ruby": {"quay.io"}, "golang": {"quay.io"}}), "2 imagestreams (registry quay.io): golang, ruby"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	many := map[string][]string{}
	for _, n := range strings.Fields("a b c d e f g h i j k l") {
		many[n] = []string{"quay.io", "registry.redhat.io"}
	}
	if got, want := StreamsPhrase(many), "12 imagestreams (registries quay.io, registry.redhat.io): a, b, c, d, e, f, g, h, i, j and 2 more"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// Exactly Named are all named, with no "and 0 more".
	delete(many, "k")
	delete(many, "l")
	if got, want := StreamsPhrase(many), "10 imagestreams (registries quay.io, registry.redhat.io): a, b, c, d, e, f, g, h, i, j"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
