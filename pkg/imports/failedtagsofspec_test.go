package imports

import (
	"reflect"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestFailedTagsOfSpec: the image API gives a spec tag the stream's generation when it is written
// anew, and a failed import its condition at the generation it imported; a failure older than
// the spec tag is of a reference the stream no longer names.
func TestFailedTagsOfSpec(t *testing.T) {
	failure := func(gen int64) imagev1.NamedTagEventList {
		return imagev1.NamedTagEventList{Tag: "3.3", Conditions: []imagev1.TagEventCondition{{
			Type: imagev1.ImportSuccess, Status: corev1.ConditionFalse, Message: "manifest unknown", Generation: gen}}}
	}
	specAt := func(gen int64) []imagev1.TagReference {
		return []imagev1.TagReference{{Name: "3.3", Generation: &gen}}
	}
	failed := map[string]string{"3.3": "manifest unknown"}
	cases := []struct {
		name   string
		spec   []imagev1.TagReference
		status imagev1.NamedTagEventList
		want   map[string]string
	}{
		{"failed at the spec's generation", specAt(2), failure(2), failed},
		{"rewritten since it failed: waiting for the new import", specAt(3), failure(2), map[string]string{}},
		{"failed again after the rewrite", specAt(3), failure(3), failed},
		{"a spec tag without a generation", []imagev1.TagReference{{Name: "3.3"}}, failure(2), failed},
		{"a failure without a generation", specAt(3), failure(0), failed},
		{"no spec tag", nil, failure(2), failed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := &imagev1.ImageStream{Spec: imagev1.ImageStreamSpec{Tags: tc.spec}, Status: imagev1.ImageStreamStatus{Tags: []imagev1.NamedTagEventList{tc.status}}}
			if got := FailedTagsOfSpec(is); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("FailedTagsOfSpec = %v, want %v", got, tc.want)
			}
			// The operator's record keeps the failure until the tag imports.
			if got := FailedTags(is); !reflect.DeepEqual(got, failed) {
				t.Errorf("FailedTags = %v, want %v", got, failed)
			}
		})
	}
}
