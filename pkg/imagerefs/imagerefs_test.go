package imagerefs

import (
	"reflect"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	"github.com/openshift/library-go/pkg/image/trigger"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The tags are followed wherever they stand in the stream, the first one included.
func TestFollowedTagsFromTheStreamsFirstTag(t *testing.T) {
	is := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "ruby"}, Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{
		{Name: "latest", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "3.3"}},
		{Name: "3.3", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ubi9/ruby-33:latest"}},
	}}}
	if got := FollowedTags(is, "latest"); !reflect.DeepEqual(got, []string{"3.3"}) {
		t.Errorf("FollowedTags(latest) = %q, want [3.3]", got)
	}
}

// A chain of tags that loops ends before it comes back; a tag of another stream, or of another
// namespace, is no tag of this one.
func TestFollowedTagsStopAtLoopsAndOtherStreams(t *testing.T) {
	tag := func(name, kind, from string) imagev1.TagReference {
		return imagev1.TagReference{Name: name, From: &corev1.ObjectReference{Kind: kind, Name: from}}
	}
	is := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "ruby", Namespace: "openshift"}, Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{
		tag("a", "ImageStreamTag", "ruby:b"), tag("b", "ImageStreamTag", "c"), tag("c", "ImageStreamTag", "a"),
		tag("other", "ImageStreamTag", "python:3.9"), tag("image", "DockerImage", "ruby:a"),
		{Name: "elsewhere", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Namespace: "team", Name: "ruby:a"}},
		{Name: "here", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Namespace: "openshift", Name: "ruby:a"}},
	}}}
	for tagName, want := range map[string][]string{
		"a": {"b", "c"}, "other": nil, "image": nil, "elsewhere": nil, "here": {"a", "b", "c"}, "missing": nil,
	} {
		if got := FollowedTags(is, tagName); !reflect.DeepEqual(got, want) {
			t.Errorf("FollowedTags(%s) = %q, want %q", tagName, got, want)
		}
	}
}

// Triggers reads an annotation as the trigger controller (library-go's
// CalculateAnnotationTriggers) does: the same references, and nothing where it refuses.
func TestTriggersReadAsTheTriggerControllerReadsThem(t *testing.T) {
	for _, value := range []string{
		`[{"from":{"kind":"ImageStreamTag","name":"ruby:3.3","namespace":"openshift"},"fieldPath":"spec.template.spec.containers[?(@.name==\"web\")].image"}]`,
		`[{"from":{"kind":"ImageStreamTag","name":"a:1"},"fieldPath":"x"},{"from":{"kind":"DockerImage","name":"quay.io/b"},"fieldPath":"y","paused":true}]`,
		`[{"from":{"kind":"ImageStreamTag","name":"a:1"},"fieldPath":"x"},{"from":{"kind":"ImageStreamTag","name":"b:1"},"fieldPath":"x"}]`,
		`[]`,
		`not json`,
		`{"from":{"kind":"ImageStreamTag","name":"a:1"}}`,
	} {
		meta := &metav1.ObjectMeta{Annotations: map[string]string{TriggersAnnotation: value}}
		_, _, theirs, err := trigger.CalculateAnnotationTriggers(meta, "")
		var want []corev1.ObjectReference
		for _, tr := range theirs {
			want = append(want, corev1.ObjectReference{Kind: tr.From.Kind, Name: tr.From.Name, Namespace: tr.From.Namespace, APIVersion: tr.From.APIVersion})
		}
		got, ok := Triggers(value)
		if ok != (err == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("Triggers(%s) = %v, %v; the trigger controller reads %v (err %v)", value, got, ok, want, err)
		}
	}
	if TriggersAnnotation != trigger.TriggerAnnotationKey {
		t.Errorf("TriggersAnnotation = %q, the trigger controller reads %q", TriggersAnnotation, trigger.TriggerAnnotationKey)
	}
}
