package desired

import (
	"slices"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestALabelOfTheSampleWithAnotherValueIsSetBack: a label the inventory's copy has is set back
// when an admin changed its value, as an annotation is.
func TestALabelOfTheSampleWithAnotherValueIsSetBack(t *testing.T) {
	want := wantStream(t, samplesv1.ConfigSpec{})
	want.Labels["app.openshift.io/runtime"] = "python"
	cur := live(want)
	cur.Labels["app.openshift.io/runtime"] = "ruby"
	got := ForImageStream(Managed, want, false, cur)
	if got.Verb != Update || got.Object.Labels["app.openshift.io/runtime"] != "python" || !slices.Contains(got.Drift, "metadata.labels[app.openshift.io/runtime]") {
		t.Errorf("%s, labels %v, drift %v; want the label set back", got.Verb, got.Object.Labels, got.Drift)
	}
}

// TestEveryStaleAnnotationGoes: a stream that still skips tags loses a cause that went, though
// the skip comes first of the annotations checked.
func TestEveryStaleAnnotationGoes(t *testing.T) {
	want := wantStream(t, samplesv1.ConfigSpec{})
	want.Annotations[StreamSkippedTagsAnnotation] = "3.11"
	cur := live(want)
	cur.Annotations[UnusableAnnotation] = "KindNotServed"
	got := ForImageStream(Managed, want, false, cur)
	if _, stale := got.Object.Annotations[UnusableAnnotation]; got.Verb != Update || stale || got.Object.Annotations[StreamSkippedTagsAnnotation] != "3.11" {
		t.Errorf("%s, annotations %v; want the cause gone and the skip kept", got.Verb, got.Object.Annotations)
	}
}

// TestATemplateBackInTheInventoryIsShownAsItWas: the "hidden" that retiring added goes, what an
// admin had in the tags of a template whose inventory copy has none stays, and a template back
// but hidden for a cause of its own stays hidden.
func TestATemplateBackInTheInventoryIsShownAsItWas(t *testing.T) {
	back, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v3"}, fakeSource{}, "httpd-example")
	adminTagged, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
	adminTagged.Annotations["tags"] = "quickstart"
	retired := RetireTemplate(adminTagged, "v2").Object
	if got := ForTemplate(Managed, back, false, retired); got.Verb != Update || got.Object.Annotations["tags"] != "quickstart" {
		t.Errorf("back in v3: %s, tags %q; want the admin's quickstart without hidden", got.Verb, got.Object.Annotations["tags"])
	}

	unusable := back.DeepCopy()
	unusable.Annotations[UnusableAnnotation] = "KindNotServed"
	unusable.Annotations["tags"] = "quickstart,hidden"
	if got := ForTemplate(Managed, unusable, false, retired); got.Object.Annotations["tags"] != "quickstart,hidden" || got.Object.Annotations[RetiredAnnotation] != "" {
		t.Errorf("back in v3 but unusable here: annotations %v; want hidden, not retired", got.Object.Annotations)
	}
}

// TestOnlyAManagedTemplateInPlaceIsRetired: not one an admin took over, not one being deleted.
func TestOnlyAManagedTemplateInPlaceIsRetired(t *testing.T) {
	tp, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
	foreign := tp.DeepCopy()
	foreign.Labels[ManagedLabel] = "false"
	deleting := tp.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	for name, live := range map[string]*templatev1.Template{"unmanaged": foreign, "being deleted": deleting, "gone": nil} {
		if got := RetireTemplate(live, "v2"); got.Verb != None {
			t.Errorf("%s: %s, want none", name, got.Verb)
		}
	}
}

// TestNoAnswerMeansNotSettled: without the server's answer to a write, a template that differs
// from what is wanted is not settled.
func TestNoAnswerMeansNotSettled(t *testing.T) {
	tp, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
	if TemplateSettled(tp, tp, nil) {
		t.Error("settled without an answer")
	}
}

// TestIsTrimmedOnlyWithoutContent: the digest annotation and none of the content.
func TestIsTrimmedOnlyWithoutContent(t *testing.T) {
	digested := func(edit func(*templatev1.Template)) *templatev1.Template {
		t := &templatev1.Template{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{ContentDigestAnnotation: "d"}}}
		edit(t)
		return t
	}
	for _, tc := range []struct {
		name string
		t    *templatev1.Template
		want bool
	}{
		{"the digest alone", digested(func(*templatev1.Template) {}), true},
		{"no digest", &templatev1.Template{}, false},
		{"objects", digested(func(t *templatev1.Template) { t.Objects = []runtime.RawExtension{{Raw: []byte(`{}`)}} }), false},
		{"a message", digested(func(t *templatev1.Template) { t.Message = "m" }), false},
		{"parameters", digested(func(t *templatev1.Template) { t.Parameters = []templatev1.Parameter{{Name: "P"}} }), false},
		{"object labels", digested(func(t *templatev1.Template) { t.ObjectLabels = map[string]string{"a": "b"} }), false},
		{"nil", nil, false},
	} {
		if got := IsTrimmed(tc.t); got != tc.want {
			t.Errorf("%s: IsTrimmed = %t, want %t", tc.name, got, tc.want)
		}
	}
}

// TestATagWithoutAnImageDoesNotEndTheNodePullCheck: the tags after one that resolves to no image
// are checked too.
func TestATagWithoutAnImageDoesNotEndTheNodePullCheck(t *testing.T) {
	is := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{
		pullTag("dangling", "ImageStreamTag", "missing", imagev1.SourceTagReferencePolicy),
		pullTag("1", "DockerImage", "quay.io/a/b:1", imagev1.SourceTagReferencePolicy),
	}}}
	got := RefusedNodePulls(is, configv1.RegistrySources{BlockedRegistries: []string{"quay.io"}})
	if want := []NodePull{{Registry: "quay.io", Blocked: true}}; !slices.Equal(got, want) {
		t.Errorf("RefusedNodePulls = %v, want %v", got, want)
	}
}

// TestMarksAreReadPastALineWithoutOne and written on every tag that has one.
func TestMarksAreReadPastALineWithoutOne(t *testing.T) {
	marks := ParseMarks("not a mark\nb=hidden:KindNotServed")
	if want := (Marks{"b": {Reason: "KindNotServed", Hide: true}}); len(marks) != 1 || marks["b"] != want["b"] {
		t.Errorf("ParseMarks = %v, want %v", marks, want)
	}
	is := &imagev1.ImageStream{Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{{Name: "a"}, {Name: "b"}}}}
	MarkImageStream(is, marks)
	if is.Spec.Tags[1].Annotations[UnusableAnnotation] != "KindNotServed" || is.Spec.Tags[0].Annotations[UnusableAnnotation] != "" {
		t.Errorf("marked tags: %v, %v; want b only", is.Spec.Tags[0].Annotations, is.Spec.Tags[1].Annotations)
	}
}

// TestANewReasonReplacesTheOldOnAHiddenSample: a retired template, hidden and marked for one
// cause, gets the reason of the next; hidden already, it is not hidden twice.
func TestANewReasonReplacesTheOldOnAHiddenSample(t *testing.T) {
	tp, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
	retired := RetireTemplate(tp, "v2").Object
	first := MarkRetiredTemplate(TemplateAction{}, retired, Marks{"": {Reason: "KindNotServed", Hide: true}}).Object
	if first == nil || first.Annotations[UnusableAnnotation] != "KindNotServed" {
		t.Fatalf("the first mark: %v", first)
	}
	for _, hide := range []bool{true, false} {
		got := MarkRetiredTemplate(TemplateAction{}, first, Marks{"": {Reason: "ImageStreamTagMissing", Hide: hide}})
		if got.Object == nil || got.Object.Annotations[UnusableAnnotation] != "ImageStreamTagMissing" || got.Object.Annotations["tags"] != "hidden" {
			t.Errorf("hide %t: %s %v; want the new reason, hidden once", hide, got.Verb, got.Object)
		}
	}
}
