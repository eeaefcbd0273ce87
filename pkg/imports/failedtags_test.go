package imports

import (
	"reflect"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestFailedTags reads the status shapes openshift-apiserver writes (written out here by hand,
// not produced by the code under test): a failed import leaves an ImportSuccess=False condition
// on the tag at the stream's generation; a successful one adds a tag event at its generation;
// a tag that points at another tag gets that tag's events but never its conditions.
func TestFailedTags(t *testing.T) {
	notFound := imagev1.TagEventCondition{Type: imagev1.ImportSuccess, Status: corev1.ConditionFalse, Reason: "NotFound",
		Message: `dockerimage.image.openshift.io "registry.example/ubi9/ruby-99:latest" not found`, Generation: 2}
	event := func(gen int64) imagev1.TagEvent {
		return imagev1.TagEvent{DockerImageReference: "registry.example/ubi9/ruby-33@sha256:aa", Image: "sha256:aa", Generation: gen}
	}
	tag := func(name string, items []imagev1.TagEvent, conditions ...imagev1.TagEventCondition) imagev1.NamedTagEventList {
		return imagev1.NamedTagEventList{Tag: name, Items: items, Conditions: conditions}
	}
	cases := []struct {
		name string
		tags []imagev1.NamedTagEventList
		want map[string]string
	}{
		{"no status yet", nil, map[string]string{}},
		{"imported", []imagev1.NamedTagEventList{tag("3.3", []imagev1.TagEvent{event(1)})}, map[string]string{}},
		{"first import failed", []imagev1.NamedTagEventList{tag("3.3", nil, notFound)},
			map[string]string{"3.3": notFound.Message}},
		{"imported once, the re-import failed", []imagev1.NamedTagEventList{tag("3.3", []imagev1.TagEvent{event(1)}, notFound)},
			map[string]string{"3.3": notFound.Message}},
		{"a tag pointing at the failed tag carries its events, not its failure", []imagev1.NamedTagEventList{
			tag("3.3", nil, notFound),
			tag("latest", []imagev1.TagEvent{event(1)}),
		}, map[string]string{"3.3": notFound.Message}},
		{"one of two tags failed", []imagev1.NamedTagEventList{
			tag("3.1", []imagev1.TagEvent{event(1)}),
			tag("3.3", nil, notFound),
		}, map[string]string{"3.3": notFound.Message}},
		{"a failure older than the tag's newest condition is over", []imagev1.NamedTagEventList{
			tag("3.3", nil, notFound, imagev1.TagEventCondition{Type: "Other", Status: corev1.ConditionTrue, Generation: 3}),
		}, map[string]string{}},
		{"a failure as new as another condition counts", []imagev1.NamedTagEventList{
			tag("3.3", nil, imagev1.TagEventCondition{Type: "Other", Status: corev1.ConditionTrue, Generation: 2}, notFound),
		}, map[string]string{"3.3": notFound.Message}},
		{"without a message the reason tells", []imagev1.NamedTagEventList{
			tag("3.3", nil, imagev1.TagEventCondition{Type: imagev1.ImportSuccess, Status: corev1.ConditionFalse, Reason: "InternalError", Generation: 2}),
		}, map[string]string{"3.3": "InternalError"}},
		{"without a generation, the message tells", []imagev1.NamedTagEventList{
			tag("3.3", nil, imagev1.TagEventCondition{Type: imagev1.ImportSuccess, Status: corev1.ConditionFalse, Message: "not found"}),
		}, map[string]string{"3.3": "not found"}},
		{"without a generation, message or reason", []imagev1.NamedTagEventList{
			tag("3.3", nil, imagev1.TagEventCondition{Type: imagev1.ImportSuccess, Status: corev1.ConditionFalse}),
		}, map[string]string{"3.3": "import failed"}},
		{"without a generation, another condition is no failure", []imagev1.NamedTagEventList{
			tag("3.3", nil, imagev1.TagEventCondition{Type: imagev1.ImportSuccess, Status: corev1.ConditionTrue}),
		}, map[string]string{}},
		{"a failure without a generation is old news beside a condition that has one", []imagev1.NamedTagEventList{
			tag("3.3", nil, imagev1.TagEventCondition{Type: imagev1.ImportSuccess, Status: corev1.ConditionFalse, Reason: "NotFound"},
				imagev1.TagEventCondition{Type: imagev1.ImportSuccess, Status: corev1.ConditionTrue, Generation: 2}),
		}, map[string]string{}},
		{"an ImportSuccess=True condition is no failure", []imagev1.NamedTagEventList{
			tag("3.3", nil, imagev1.TagEventCondition{Type: imagev1.ImportSuccess, Status: corev1.ConditionTrue, Generation: 2}),
		}, map[string]string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			is := &imagev1.ImageStream{Status: imagev1.ImageStreamStatus{Tags: tc.tags}}
			if got := FailedTags(is); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("FailedTags = %v, want %v", got, tc.want)
			}
		})
	}
}
