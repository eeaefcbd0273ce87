package desired

import (
	"slices"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
)

// normalizingServer plays a server that rewrites a tag's source, as a mutating webhook might.
func normalizingServer(written *imagev1.ImageStream) *imagev1.ImageStream {
	got := live(written)
	got.Spec.Tags[0].From.Name = "normalized.example/ubi9/python-311:latest"
	return got
}

func TestImageStreamAnswer(t *testing.T) {
	want := wantStream(t, samplesv1.ConfigSpec{})
	if a := AnswerForImageStream(want, live(want)); a != nil {
		t.Fatalf("a server that only fills in its own fields gave an answer to keep: %+v", a.Fields)
	}
	got := normalizingServer(want)
	answer := AnswerForImageStream(want, got)
	if answer == nil || !slices.Equal(answer.Fields, []string{"spec.tags[3.11].from"}) {
		t.Fatalf("answer fields %v, want [spec.tags[3.11].from]", answer)
	}

	later := got.DeepCopy()
	later.ResourceVersion = "9"
	later.Annotations["openshift.io/image.dockerRepositoryCheck"] = "2026-11-23T10:00:00Z" // the importer's
	later.Labels["team"] = "admins"                                                        // an admin's
	gen := int64(8)
	later.Spec.Tags[1].Generation = &gen // a later import moved it
	later.Spec.Tags = append(later.Spec.Tags, imagev1.TagReference{Name: "mine"})

	edited := later.DeepCopy()
	edited.Spec.Tags[0].From.Name = "admin.example/python:1"
	versionBump := wantStream(t, samplesv1.ConfigSpec{})
	versionBump.Annotations[VersionAnnotation] = "v2"
	mirrored := wantStream(t, samplesv1.ConfigSpec{SamplesRegistry: "mirror.example:5000"})
	displayEdited := later.DeepCopy()
	displayEdited.Annotations["openshift.io/display-name"] = "edited"

	cases := []struct {
		name    string
		live    *imagev1.ImageStream
		want    *imagev1.ImageStream
		answer  *ImageStreamAnswer
		settled bool
	}{
		{"the server's answer itself", got, want, answer, true},
		{"the answer after imports, an admin label and tag", later, want, answer, true},
		{"no answer kept", got, want, nil, false},
		{"an admin changed the normalized field", edited, want, answer, false},
		{"an admin changed another owned field", displayEdited, want, answer, false},
		{"the desired object changed: a new version", later, versionBump, answer, false},
		{"the desired object changed: a mirror", later, mirrored, answer, false},
	}
	for _, c := range cases {
		if got := ImageStreamSettled(c.live, c.want, c.answer); got != c.settled {
			t.Errorf("%s: settled=%v, want %v", c.name, got, c.settled)
		}
	}
	// The decision alone still sees the drift: it is the answer that settles it.
	if a := ForImageStream(Managed, want, false, later); a.Verb != Update || !slices.Equal(a.Drift, []string{"spec.tags[3.11].from"}) {
		t.Errorf("ForImageStream on the normalized object: %s %v", a.Verb, a.Drift)
	}
}

func TestTemplateAnswer(t *testing.T) {
	want, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
	want.Annotations["description"] = "an httpd server"
	got := want.DeepCopy()
	got.ResourceVersion = "3"
	delete(got.Annotations, "description") // a server that strips an annotation
	answer := AnswerForTemplate(want, got)
	if answer == nil || !slices.Equal(answer.Fields, []string{"metadata.annotations[description]"}) {
		t.Fatalf("answer %+v, want the stripped annotation", answer)
	}
	edited := got.DeepCopy()
	edited.Message = "edited"
	for _, c := range []struct {
		name    string
		live    *templatev1.Template
		settled bool
	}{
		{"the server's answer", got, true},
		{"an admin edit of the message", edited, false},
	} {
		if s := TemplateSettled(c.live, want, answer); s != c.settled {
			t.Errorf("%s: settled=%v, want %v", c.name, s, c.settled)
		}
	}
	if AnswerForTemplate(want, want.DeepCopy()) != nil {
		t.Errorf("an answer equal to the write was kept")
	}
}

func TestReferencePolicyDefaultIsNotDrift(t *testing.T) {
	want := wantStream(t, samplesv1.ConfigSpec{})
	want.Spec.Tags[0].ReferencePolicy.Type = ""
	cur := live(want)
	cur.Spec.Tags[0].ReferencePolicy.Type = imagev1.SourceTagReferencePolicy // openshift-apiserver's default
	if drift := ImageStreamDrift(cur, want); len(drift) != 0 {
		t.Errorf("the server's default reference policy counted as drift: %v", drift)
	}
	cur.Spec.Tags[0].ReferencePolicy.Type = imagev1.LocalTagReferencePolicy
	if drift := ImageStreamDrift(cur, want); !slices.Equal(drift, []string{"spec.tags[3.11].referencePolicy.type"}) {
		t.Errorf("drift %v, want the reference policy", drift)
	}
}
