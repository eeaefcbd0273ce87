package desired

import (
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// tagOf is the tag of is by name.
func tagOf(t *testing.T, is *imagev1.ImageStream, name string) imagev1.TagReference {
	t.Helper()
	for _, tag := range is.Spec.Tags {
		if tag.Name == name {
			return tag
		}
	}
	t.Fatalf("%s has no tag %s", is.Name, name)
	return imagev1.TagReference{}
}

// TestAnUnshippedTagIsMarkedAndUnmarked (issue 56 item 7): a tag the inventory does not ship, an
// admin's own or a retired one, gets the verdict's mark written on it by a marks-only update,
// which changes nothing else of the stream; a second look writes nothing; when the cause goes
// the mark goes, the retired tag staying hidden and the admin's losing only the "hidden" the
// mark brought.
func TestAnUnshippedTagIsMarkedAndUnmarked(t *testing.T) {
	want, _, _ := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v2"}, fakeSource{}, "python")
	live := want.DeepCopy()
	retired := imagev1.TagReference{Name: "3.6", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example.com/python:3.6"}}
	retireTag(&retired, "v2")
	live.Spec.Tags = append(live.Spec.Tags, retired, imagev1.TagReference{Name: "mine",
		Annotations: map[string]string{"tags": "builder"}, From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example.com/mine:1"}})
	marks := Marks{
		"3.6":  {Reason: "no image for node architecture arm64 (image for amd64)", Hide: true},
		"mine": {Reason: "no image for node architecture arm64 (image for s390x)", Hide: true},
	}

	base := ForImageStream(Managed, want, false, live)
	if base.Verb != None {
		t.Fatalf("the stream is as the inventory has it: %s %v", base.Verb, base.Drift)
	}
	a := MarkUnshipped(base, want, live, marks)
	if a.Verb != Update || !a.MarksOnly || a.Retires || len(a.Drift) != 2 {
		t.Fatalf("marking: %s marksOnly=%v drift %v, want a marks-only update of two tags", a.Verb, a.MarksOnly, a.Drift)
	}
	if got := tagOf(t, a.Object, "3.6"); got.Annotations[UnusableAnnotation] != marks["3.6"].Reason || got.Annotations["tags"] != "hidden" ||
		got.Annotations[RetiredAnnotation] != "v2" || got.From.Name != retired.From.Name {
		t.Errorf("the retired tag: %+v", got)
	}
	if got := tagOf(t, a.Object, "mine"); got.Annotations[UnusableAnnotation] != marks["mine"].Reason || got.Annotations["tags"] != "builder,hidden" ||
		got.From.Name != "registry.example.com/mine:1" {
		t.Errorf("the admin's tag: %+v", got)
	}
	if ImageStreamMarks(a.Object).String() != marks.String() {
		t.Errorf("marks read back: %q, want %q", ImageStreamMarks(a.Object), marks)
	}
	if again := MarkUnshipped(ForImageStream(Managed, want, false, a.Object), want, a.Object, marks); again.Verb != None {
		t.Errorf("marked already: %s %v, want nothing", again.Verb, again.Drift)
	}

	gone := MarkUnshipped(ForImageStream(Managed, want, false, a.Object), want, a.Object, nil)
	if gone.Verb != Update || !gone.MarksOnly {
		t.Fatalf("the causes gone: %s, want a marks-only update", gone.Verb)
	}
	if got := tagOf(t, gone.Object, "3.6"); got.Annotations[UnusableAnnotation] != "" || got.Annotations["tags"] != "hidden" {
		t.Errorf("the retired tag unmarked: %v, want it still hidden", got.Annotations)
	}
	if got := tagOf(t, gone.Object, "mine"); got.Annotations[UnusableAnnotation] != "" || got.Annotations["tags"] != "builder" {
		t.Errorf("the admin's tag unmarked: %v, want its own tags back", got.Annotations)
	}

	// A tag the inventory ships is want's to mark: left alone here.
	shipped := Marks{"3.11": {Reason: "x", Hide: true}}
	if a := MarkUnshipped(ForImageStream(Managed, want, false, live), want, live, shipped); a.Verb != None {
		t.Errorf("a shipped tag's mark: %s %v, want nothing here", a.Verb, a.Drift)
	}
	// Nor is a stream the operator does not manage, or a write other than an update.
	foreign := live.DeepCopy()
	foreign.Labels[ManagedLabel] = "false"
	if a := MarkUnshipped(ImageStreamAction{}, want, foreign, marks); a.Verb != None {
		t.Errorf("a stream the operator does not manage: %s", a.Verb)
	}
	deleting := live.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{}
	if a := MarkUnshipped(ImageStreamAction{}, want, deleting, marks); a.Verb != None {
		t.Errorf("a stream being deleted: %s", a.Verb)
	}
	if a := MarkUnshipped(ImageStreamAction{Verb: Delete}, want, live, marks); a.Verb != Delete || a.Object != nil {
		t.Errorf("a delete: %+v", a)
	}
}

// TestARetiredSampleIsMarkedNotReverted (issue 56 item 7): a retired stream or template gets the
// marks of its verdicts, with its retirement when it is retired by the same write, and nothing of
// its content is put back; the marks go with their cause, the retirement stays.
func TestARetiredSampleIsMarkedNotReverted(t *testing.T) {
	v1, _, _ := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "python")
	v1.Spec.Tags[0].From.Name = "registry.example.com/edited:1" // an admin's edit, which stays
	marks := Marks{"3.11": {Reason: "no image for node architecture arm64 (image for amd64)", Hide: true}}

	retiring := MarkUnshipped(RetireImageStream(v1, "v2"), nil, v1, marks)
	if retiring.Verb != Update || !retiring.Retires || retiring.MarksOnly ||
		tagOf(t, retiring.Object, "3.11").Annotations[UnusableAnnotation] != marks["3.11"].Reason {
		t.Fatalf("retiring and marking: %+v", retiring)
	}
	retired := RetireImageStream(v1, "v2").Object
	a := MarkUnshipped(RetireImageStream(retired, "v2"), nil, retired, marks)
	if a.Verb != Update || !a.MarksOnly || len(a.Drift) != 1 {
		t.Fatalf("marking the retired stream: %s marksOnly=%v %v", a.Verb, a.MarksOnly, a.Drift)
	}
	if got := tagOf(t, a.Object, "3.11"); got.From.Name != "registry.example.com/edited:1" || got.Annotations[RetiredAnnotation] != "v2" {
		t.Errorf("the retired stream's tag: %+v, want it as it was but for the mark", got)
	}
	if again := MarkUnshipped(RetireImageStream(a.Object, "v2"), nil, a.Object, marks); again.Verb != None {
		t.Errorf("marked already: %s %v", again.Verb, again.Drift)
	}
	unmarked := MarkUnshipped(ImageStreamAction{}, nil, a.Object, nil).Object
	if got := tagOf(t, unmarked, "3.11"); got.Annotations[UnusableAnnotation] != "" || got.Annotations["tags"] != "hidden" {
		t.Errorf("the retired tag unmarked: %v, want it still hidden", got.Annotations)
	}

	tp, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
	tmark := Marks{"": {Reason: "creates apps.openshift.io/v1 DeploymentConfig, which this cluster does not serve", Hide: true}}
	if ta := MarkRetiredTemplate(RetireTemplate(tp, "v2"), tp, tmark); ta.Verb != Update || !ta.Retires ||
		ta.Object.Annotations[UnusableAnnotation] != tmark[""].Reason {
		t.Errorf("retiring and marking the template: %+v", ta)
	}
	if ta := MarkRetiredTemplate(TemplateAction{}, tp, tmark); ta.Verb != None {
		t.Errorf("a template not retired: %s, its mark is want's", ta.Verb)
	}
	rt := RetireTemplate(tp, "v2").Object
	ta := MarkRetiredTemplate(RetireTemplate(rt, "v2"), rt, tmark)
	if ta.Verb != Update || !ta.MarksOnly || ta.Object.Annotations[UnusableAnnotation] != tmark[""].Reason || TemplateMarks(ta.Object).String() != tmark.String() {
		t.Fatalf("marking the retired template: %+v", ta)
	}
	if again := MarkRetiredTemplate(TemplateAction{}, ta.Object, tmark); again.Verb != None {
		t.Errorf("marked already: %s %v", again.Verb, again.Drift)
	}
	back := MarkRetiredTemplate(TemplateAction{}, ta.Object, nil)
	if back.Verb != Update || back.Object.Annotations[UnusableAnnotation] != "" || back.Object.Annotations["tags"] != "hidden" || back.Object.Annotations[RetiredAnnotation] != "v2" {
		t.Errorf("the retired template unmarked: %+v", back.Object.Annotations)
	}
}

// TestARetiredTemplateStaysWholeInTheCache: the verdict on it reads its objects, which no
// inventory of this operator has.
func TestARetiredTemplateStaysWholeInTheCache(t *testing.T) {
	tp, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
	retired := RetireTemplate(tp, "v2").Object
	TrimTemplate(retired)
	if IsTrimmed(retired) || len(retired.Objects) != len(tp.Objects) {
		t.Errorf("a retired template was trimmed: %d objects, want %d", len(retired.Objects), len(tp.Objects))
	}
	TrimTemplate(tp)
	if !IsTrimmed(tp) {
		t.Errorf("a template of the inventory was not trimmed")
	}
}
