package usability

import (
	"reflect"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestArchitecturesOfAListOrAnImage(t *testing.T) {
	list := &imagev1.Image{DockerImageManifests: []imagev1.ImageManifest{
		{Architecture: "s390x"}, {Architecture: "arm64", Variant: "v8"}, {Architecture: "amd64"}, {Architecture: "amd64"}, {Architecture: ""},
	}}
	single := &imagev1.Image{DockerImageMetadata: runtime.RawExtension{Raw: []byte(`{"architecture":"ppc64le"}`)}}
	for _, tc := range []struct {
		name string
		img  *imagev1.Image
		want []string
	}{
		{"a manifest list, sorted, once each", list, []string{"amd64", "arm64/v8", "s390x"}},
		{"a single image", single, []string{"ppc64le"}},
		{"a manifest list's own metadata adds nothing", &imagev1.Image{DockerImageManifests: list.DockerImageManifests, DockerImageMetadata: single.DockerImageMetadata},
			[]string{"amd64", "arm64/v8", "s390x"}},
		{"metadata without architecture", &imagev1.Image{DockerImageMetadata: runtime.RawExtension{Raw: []byte(`{}`)}}, nil},
		{"metadata that is not JSON", &imagev1.Image{DockerImageMetadata: runtime.RawExtension{Raw: []byte(`{`)}}, nil},
		{"nothing", &imagev1.Image{}, nil},
	} {
		if got := ArchitecturesOf(tc.img); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
