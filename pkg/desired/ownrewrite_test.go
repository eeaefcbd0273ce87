package desired

import (
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
)

func TestWrittenForRegistry(t *testing.T) {
	at := func(registry string) *imagev1.ImageStream {
		return live(wantStream(t, samplesv1.ConfigSpec{SamplesRegistry: registry}))
	}
	edited := func(is *imagev1.ImageStream, edit func(*imagev1.ImageStream)) *imagev1.ImageStream {
		edit(is)
		return is
	}
	cases := []struct {
		name         string
		live         *imagev1.ImageStream
		specRegistry string
		wantRegistry string
		wantOwn      bool
	}{
		{"written for the inventory's registry, Config now names a mirror", at(""), "mirror.example:5000", "", true},
		{"written for a mirror, Config back to the inventory's", at("mirror.example:5000"), "", "mirror.example:5000", true},
		{"written for one mirror, Config names another with a path", at("mirror.example:5000"), "other.example/samples", "mirror.example:5000", true},
		{"in sync with the Config: nothing of the operator's to explain", at("mirror.example:5000"), "mirror.example:5000", "", false},
		{"an admin pointed a tag at another image", edited(at(""), func(is *imagev1.ImageStream) {
			is.Spec.Tags[0].From.Name = "quay.io/someone/python:3.11"
		}), "", "", false},
		{"an admin changed a tag's image on the old registry too", edited(at(""), func(is *imagev1.ImageStream) {
			is.Spec.Tags[0].From.Name = "registry.redhat.io/ubi9/python-312:latest"
		}), "mirror.example:5000", "", false},
		{"written for another registry, then an admin removed a tag", edited(at(""), func(is *imagev1.ImageStream) {
			is.Spec.Tags = is.Spec.Tags[:1]
		}), "mirror.example:5000", "", false},
		{"written for another registry, then an admin changed an owned annotation", edited(at(""), func(is *imagev1.ImageStream) {
			is.Annotations["openshift.io/display-name"] = "Snake"
		}), "mirror.example:5000", "", false},
		{"an older version's stream is an upgrade, not a registry move", edited(at(""), func(is *imagev1.ImageStream) {
			is.Annotations[VersionAnnotation] = "v0"
		}), "mirror.example:5000", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			registry, own := WrittenForRegistry(tc.live, &samplesv1.ConfigSpec{SamplesRegistry: tc.specRegistry}, fakeSource{}, "v1", "python")
			if own != tc.wantOwn || registry != tc.wantRegistry {
				t.Errorf("WrittenForRegistry = %q, %v; want %q, %v", registry, own, tc.wantRegistry, tc.wantOwn)
			}
		})
	}
	if _, own := WrittenForRegistry(nil, &samplesv1.ConfigSpec{}, fakeSource{}, "v1", "python"); own {
		t.Error("a missing stream was taken for one the operator wrote")
	}
	if _, own := WrittenForRegistry(at(""), &samplesv1.ConfigSpec{SamplesRegistry: "m.example"}, fakeSource{}, "v1", "admin-app"); own {
		t.Error("a stream outside the inventory was taken for one the operator wrote")
	}
}
