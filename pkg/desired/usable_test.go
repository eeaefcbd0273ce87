package desired

import (
	"reflect"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
)

// TestAMarkComesAndGoesWithItsCause: a tag marked unusable is hidden and names the reason; the
// update that marks it names only those fields; once the cause is gone the next update takes
// both away and leaves the tag as the inventory has it. An offered mark names the reason and
// hides nothing.
func TestAMarkComesAndGoesWithItsCause(t *testing.T) {
	plain, _, _ := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "python")
	marked := plain.DeepCopy()
	MarkImageStream(marked, Marks{"3.11": {Reason: "no image for s390x", Hide: true}})
	tag := marked.Spec.Tags[0]
	if tag.Annotations[UnusableAnnotation] != "no image for s390x" || tag.Annotations["tags"] != "hidden" {
		t.Fatalf("3.11 marked: %v", tag.Annotations)
	}
	if marked.Spec.Tags[1].Annotations[UnusableAnnotation] != "" {
		t.Errorf("latest has no mark, but got %v", marked.Spec.Tags[1].Annotations)
	}

	action := ForImageStream(Managed, marked, false, plain)
	if action.Verb != Update || len(action.Drift) != 1 || action.Drift[0] != "spec.tags[3.11].annotations" {
		t.Fatalf("marking: %s %v, want an update of 3.11's annotations", action.Verb, action.Drift)
	}
	back := ForImageStream(Managed, plain, false, action.Object)
	if back.Verb != Update {
		t.Fatalf("the cause gone: %s, want an update", back.Verb)
	}
	if got := back.Object.Spec.Tags[0].Annotations; got[UnusableAnnotation] != "" || got["tags"] != "" {
		t.Errorf("3.11 after the cause went: %v, want neither mark nor hidden", got)
	}
	if again := ForImageStream(Managed, plain, false, back.Object); again.Verb != None {
		t.Errorf("after unmarking: %s %v, want nothing", again.Verb, again.Drift)
	}

	offered := plain.DeepCopy()
	MarkImageStream(offered, Marks{"3.11": {Reason: "no image for s390x"}})
	if got := offered.Spec.Tags[0].Annotations; got[UnusableAnnotation] != "no image for s390x" || got["tags"] != "" {
		t.Errorf("an offered mark: %v, want the reason and no hidden", got)
	}
}

// TestATemplateMarkIsUndoneWithoutTagsOfItsOwn: a template without catalog tags gets "hidden"
// alone with its mark, and loses both when the cause goes; one with tags keeps its own.
func TestATemplateMarkIsUndoneWithoutTagsOfItsOwn(t *testing.T) {
	for _, own := range []string{"", "quickstart,httpd"} {
		plain, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
		if own != "" {
			plain.Annotations["tags"] = own
		}
		marked := plain.DeepCopy()
		MarkTemplate(marked, Marks{"": {Reason: "creates a DeploymentConfig", Hide: true}})
		wantTags := "hidden"
		if own != "" {
			wantTags = own + ",hidden"
		}
		if marked.Annotations[UnusableAnnotation] != "creates a DeploymentConfig" || marked.Annotations["tags"] != wantTags {
			t.Fatalf("tags %q: marked %v", own, marked.Annotations)
		}
		action := ForTemplate(Managed, marked, false, plain)
		if action.Verb != Update {
			t.Fatalf("tags %q: marking: %s", own, action.Verb)
		}
		back := ForTemplate(Managed, plain, false, action.Object)
		if back.Verb != Update {
			t.Fatalf("tags %q: the cause gone: %s, want an update", own, back.Verb)
		}
		if got := back.Object.Annotations; got[UnusableAnnotation] != "" || got["tags"] != own {
			t.Errorf("tags %q: after the cause went: %v", own, got)
		}
		if again := ForTemplate(Managed, plain, false, back.Object); again.Verb != None {
			t.Errorf("tags %q: after unmarking: %s %v, want nothing", own, again.Verb, again.Drift)
		}
	}
}

// TestMarksStringIsCanonical: the record of a write compares marks by this line.
func TestMarksStringIsCanonical(t *testing.T) {
	a := Marks{"b": {Reason: "y", Hide: true}, "a": {Reason: "x"}}
	if got, want := a.String(), "a=offered:x\nb=hidden:y\n"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if (Marks{}).String() != "" || Marks(nil).String() != "" {
		t.Errorf("no marks must be the empty line")
	}
	a["c"] = Mark{Reason: "image openshift/ruby:3.3 has no image: a=b", Hide: true}
	if got := ParseMarks(a.String()); !reflect.DeepEqual(got, a) {
		t.Errorf("ParseMarks(String()) = %v, want %v", got, a)
	}
	if got := ParseMarks(""); got != nil {
		t.Errorf("ParseMarks(\"\") = %v, want none", got)
	}
}

// TestAMarkKeepsTheTagsOtherAnnotations: marking adds to a tag's annotations, whether it has
// none or some, and changes none of the others.
func TestAMarkKeepsTheTagsOtherAnnotations(t *testing.T) {
	is := &imagev1.ImageStream{Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{
		{Name: "bare"},
		{Name: "described", Annotations: map[string]string{"description": "Ruby 3.3", "tags": "builder,ruby"}},
	}}}
	MarkImageStream(is, Marks{"bare": {Reason: "r1", Hide: true}, "described": {Reason: "r2", Hide: true}})
	want := []map[string]string{
		{UnusableAnnotation: "r1", "tags": "hidden"},
		{UnusableAnnotation: "r2", "tags": "builder,ruby,hidden", "description": "Ruby 3.3"},
	}
	for i, tag := range is.Spec.Tags {
		if !reflect.DeepEqual(tag.Annotations, want[i]) {
			t.Errorf("%s marked: %v, want %v", tag.Name, tag.Annotations, want[i])
		}
	}
}

// TestTheMarksALiveSampleCarriesAreReadBack: what MarkImageStream and MarkTemplate write, hidden
// or offered, reads back as the same marks; a sample without a mark has none.
func TestTheMarksALiveSampleCarriesAreReadBack(t *testing.T) {
	stream, _, _ := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "python")
	if got := ImageStreamMarks(stream); got != nil {
		t.Errorf("an unmarked stream reads back %v", got)
	}
	streamMarks := Marks{"3.11": {Reason: "no image for s390x", Hide: true}, "latest": {Reason: "not imported"}}
	MarkImageStream(stream, streamMarks)
	if got := ImageStreamMarks(stream); !reflect.DeepEqual(got, streamMarks) {
		t.Errorf("stream marks read back %v, want %v", got, streamMarks)
	}
	for _, own := range []string{"", "quickstart,httpd"} {
		for _, hide := range []bool{true, false} {
			tmpl, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
			if own != "" {
				tmpl.Annotations["tags"] = own
			}
			if got := TemplateMarks(tmpl); got != nil {
				t.Errorf("an unmarked template reads back %v", got)
			}
			marks := Marks{"": {Reason: "creates a DeploymentConfig", Hide: hide}}
			MarkTemplate(tmpl, marks)
			if got := TemplateMarks(tmpl); !reflect.DeepEqual(got, marks) {
				t.Errorf("tags %q: template marks read back %v, want %v", own, got, marks)
			}
		}
	}
}
