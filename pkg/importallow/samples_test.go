package importallow

import (
	"maps"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"
)

func sample(ref string) *imagev1.ImageStream {
	return &imagev1.ImageStream{Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{
		{Name: "1", From: &corev1.ObjectReference{Kind: "DockerImage", Name: ref}},
	}}}
}

// The list's verdict on the samples: a create is refused for a stream on a registry it leaves
// out; an update of an installed stream only when it would name a repository the stream does not
// already name. No list refuses nothing.
func TestSamplesAsTheServerJudgesThem(t *testing.T) {
	wanted := map[string]*imagev1.ImageStream{
		"python": sample("registry.redhat.io/ubi9/python-312:1"),
		"ruby":   sample("registry.access.redhat.com/ubi8/ruby-33:1"),
		"perl":   sample("registry.access.redhat.com/ubi8/perl-532:1"),
	}
	s := ForSamples(New(locations(false, "registry.redhat.io"), ""), wanted)
	if want := map[string]string{"ruby": "registry.access.redhat.com", "perl": "registry.access.redhat.com"}; !maps.Equal(s.RefusedOnCreate, want) {
		t.Errorf("RefusedOnCreate = %v, want %v", s.RefusedOnCreate, want)
	}
	if registry, blocked := s.Blocks("ruby", nil); !blocked || registry != "registry.access.redhat.com" {
		t.Errorf("creating ruby: %q, %v; want refused for registry.access.redhat.com", registry, blocked)
	}
	installed := sample("registry.access.redhat.com/ubi8/ruby-33:0")
	if registry, blocked := s.Blocks("ruby", installed); blocked {
		t.Errorf("updating an installed ruby within its repository is refused for %q", registry)
	}
	if _, blocked := s.Blocks("python", nil); blocked {
		t.Error("creating python, on an allowed registry, is refused")
	}
	if _, blocked := s.Blocks("python", sample("registry.redhat.io/ubi9/python-312:0")); blocked {
		t.Error("updating python, on an allowed registry, is refused")
	}
	live := func(name string) *imagev1.ImageStream {
		if name == "ruby" {
			return installed
		}
		return nil
	}
	if got, want := s.Blocked(live), map[string]string{"perl": "registry.access.redhat.com"}; !maps.Equal(got, want) {
		t.Errorf("Blocked = %v, want %v", got, want)
	}
	if none := ForSamples(nil, wanted); len(none.RefusedOnCreate) != 0 || none.Blocked(live) != nil {
		t.Errorf("no list refuses %v", none.RefusedOnCreate)
	}
}

// BlocksAll: only a list that allows none of the inventory's registries keeps every sample out.
func TestBlocksAll(t *testing.T) {
	image := func(allowed ...string) *configv1.Image {
		return &configv1.Image{Spec: configv1.ImageSpec{AllowedRegistriesForImport: locations(false, allowed...)}}
	}
	registries := []string{"registry.redhat.io", "quay.io"}
	if message, all := BlocksAll(image("example.com"), registries); !all || !strings.Contains(message, "(registry.redhat.io, quay.io)") {
		t.Errorf("a list of another registry: %v, %q", all, message)
	}
	for name, tc := range map[string]struct {
		image      *configv1.Image
		registries []string
	}{
		"one registry allowed":  {image("quay.io"), registries},
		"no image config":       {nil, registries},
		"no list":               {image(), registries},
		"no registry to import": {image("example.com"), nil},
	} {
		if message, all := BlocksAll(tc.image, tc.registries); all || message != "" {
			t.Errorf("%s: blocks all, %q", name, message)
		}
	}
}
