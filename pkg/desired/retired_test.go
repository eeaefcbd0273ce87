package desired

import (
	"slices"
	"strings"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestATagAnUpgradeDropsIsRetiredNotRemoved: the stream the operator wrote at v1 names its tags;
// v2's inventory lacks one: the update to v2 keeps it, hidden and naming v2, and after that
// nothing more is written. An admin's own tag is left as it is.
func TestATagAnUpgradeDropsIsRetiredNotRemoved(t *testing.T) {
	v1, _, _ := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "python")
	if v1.Annotations[ManagedTagsAnnotation] != "3.11,latest" {
		t.Fatalf("the stream names the tags it manages as %q, want 3.11,latest", v1.Annotations[ManagedTagsAnnotation])
	}
	live := v1.DeepCopy()
	live.Spec.Tags = append(live.Spec.Tags, imagev1.TagReference{Name: "admins-own",
		From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example.com/mine:1"}})
	v2, _, _ := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v2"}, fakeSource{}, "python")
	v2.Spec.Tags = v2.Spec.Tags[1:] // v2's inventory retired 3.11
	v2.Annotations[ManagedTagsAnnotation] = "latest"

	action := ForImageStream(Managed, v2, false, live)
	if action.Verb != Update {
		t.Fatalf("the upgrade: %s, want an update", action.Verb)
	}
	byName := map[string]imagev1.TagReference{}
	for _, tag := range action.Object.Spec.Tags {
		byName[tag.Name] = tag
	}
	retired, kept := byName["3.11"]
	if !kept || retired.Annotations[RetiredAnnotation] != "v2" || retired.Annotations["tags"] != "hidden" || retired.From.Name != v1.Spec.Tags[0].From.Name {
		t.Errorf("3.11 after the upgrade: %+v, want it kept, hidden, retired in v2", retired)
	}
	if own := byName["admins-own"]; own.Annotations[RetiredAnnotation] != "" {
		t.Errorf("the admin's own tag was retired: %+v", own)
	}
	if a := ForImageStream(Managed, v2, false, action.Object); a.Verb != None {
		t.Errorf("after the retirement: %s %v, want nothing", a.Verb, a.Drift)
	}
	if got := RetiredOfImageStream(action.Object); len(got) != 1 || got[0] != (Retired{Kind: "imagestreamtag", Name: "python:3.11", Version: "v2"}) {
		t.Errorf("RetiredOfImageStream = %v", got)
	}
}

// TestRetiringAStreamOrTemplateHidesItOnce.
func TestRetiringAStreamOrTemplateHidesItOnce(t *testing.T) {
	is, _, _ := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "python")
	is.Spec.Tags[0].Annotations["tags"] = "builder,python"
	a := RetireImageStream(is, "v2")
	if a.Verb != Update || !a.Retires || a.Object.Annotations[RetiredAnnotation] != "v2" ||
		a.Object.Spec.Tags[0].Annotations["tags"] != "builder,python,hidden" || a.Object.Spec.Tags[1].Annotations["tags"] != "hidden" {
		t.Fatalf("retiring python: %+v", a)
	}
	if a.Object.Annotations["openshift.io/display-name"] != "Python" {
		t.Errorf("retiring python lost its other annotations: %v", a.Object.Annotations)
	}
	if again := RetireImageStream(a.Object, "v3"); again.Verb != None {
		t.Errorf("retiring a retired stream again: %s", again.Verb)
	}
	foreign := is.DeepCopy()
	foreign.Labels[ManagedLabel] = "false"
	if got := RetireImageStream(foreign, "v2"); got.Verb != None {
		t.Errorf("retiring a stream the operator does not manage: %s", got.Verb)
	}
	if got := RetireImageStream(nil, "v2"); got.Verb != None {
		t.Errorf("retiring a deleted stream: %s (a retired sample is never recreated)", got.Verb)
	}

	tp, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
	ta := RetireTemplate(tp, "v2")
	if ta.Verb != Update || ta.Object.Annotations["tags"] != "hidden" || ta.Object.Annotations[RetiredAnnotation] != "v2" {
		t.Fatalf("retiring the template: %+v", ta)
	}
	if ta.Object.Annotations[VersionAnnotation] != "v1" {
		t.Errorf("retiring the template lost its other annotations: %v", ta.Object.Annotations)
	}
	if got := RetiredOf([]*imagev1.ImageStream{a.Object}, nil); len(got) != 1 || got[0].Kind != "imagestream" {
		t.Errorf("RetiredOf = %v", got)
	}
}

// TestASkipAppliesToARetiredSample: a name the inventory lacks, listed in the skips, is skipped
// (the operator marks its own sample unmanaged).
func TestASkipAppliesToARetiredSample(t *testing.T) {
	want, skipped, known := ImageStream(&samplesv1.ConfigSpec{SkippedImagestreams: []string{"perl"}}, Choice{Version: "v2"}, fakeSource{}, "perl")
	if want != nil || !skipped || known {
		t.Errorf("perl: want %v skipped %v known %v; want skipped and unknown", want, skipped, known)
	}
}

// TestASampleALaterInventoryHasAgainIsNoLongerRetired.
func TestASampleALaterInventoryHasAgainIsNoLongerRetired(t *testing.T) {
	v1, _, _ := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "python")
	retired := RetireImageStream(v1, "v2").Object
	v3, _, _ := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v3"}, fakeSource{}, "python")
	back := ForImageStream(Managed, v3, false, retired)
	if back.Verb != Update || back.Object.Annotations[RetiredAnnotation] != "" {
		t.Fatalf("python back in v3: %s, annotations %v", back.Verb, back.Object.Annotations)
	}
	for _, tag := range back.Object.Spec.Tags {
		if IsRetiredTag(tag) || strings.Contains(tag.Annotations["tags"], "hidden") {
			t.Errorf("python:%s is still retired: %v", tag.Name, tag.Annotations)
		}
	}
	tp, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
	retiredT := RetireTemplate(tp, "v2").Object
	tv3, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v3"}, fakeSource{}, "httpd-example")
	if backT := ForTemplate(Managed, tv3, false, retiredT); backT.Verb != Update || backT.Object.Annotations[RetiredAnnotation] != "" ||
		backT.Object.Annotations["tags"] != "" {
		t.Errorf("the template back in v3: %s, annotations %v", backT.Verb, backT.Object.Annotations)
	}
}

// TestTheListOfManagedTagsIsNoReasonToWrite: a stream that lacks it (installed by upstream's
// operator at the same version) is in sync; an update made for another reason writes it.
func TestTheListOfManagedTagsIsNoReasonToWrite(t *testing.T) {
	want, _, _ := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "python")
	upstreams := want.DeepCopy()
	delete(upstreams.Annotations, ManagedTagsAnnotation)
	if a := ForImageStream(Managed, want, false, upstreams); a.Verb != None {
		t.Errorf("a stream without the list: %s %v, want no write", a.Verb, a.Drift)
	}
	upstreams.Spec.Tags[0].From.Name = "registry.example.com/edited:1"
	a := ForImageStream(Managed, want, false, upstreams)
	if a.Verb != Update || a.Object.Annotations[ManagedTagsAnnotation] != "3.11,latest" {
		t.Errorf("an update for an edit: %s, annotations %v; want the list written with it", a.Verb, a.Object.Annotations)
	}
}

// RetiredOf lists the retired samples an admin sees, templates after streams and each kind by
// name; a sample the operator does not manage is not its to call retired.
func TestRetiredOfListsByKindAndName(t *testing.T) {
	stream := func(name, retired string, tagRetired ...string) *imagev1.ImageStream {
		is := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{ManagedLabel: "true"}, Annotations: map[string]string{}}}
		if retired != "" {
			is.Annotations[RetiredAnnotation] = retired
		}
		for _, tag := range tagRetired {
			is.Spec.Tags = append(is.Spec.Tags, imagev1.TagReference{Name: tag, Annotations: map[string]string{RetiredAnnotation: "v2"}})
		}
		return is
	}
	template := func(name, managed string) *templatev1.Template {
		return &templatev1.Template{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{ManagedLabel: managed},
			Annotations: map[string]string{RetiredAnnotation: "v3"}}}
	}
	foreign := stream("foreign", "v2")
	foreign.Labels[ManagedLabel] = "false"
	got := RetiredOf(
		[]*imagev1.ImageStream{stream("ruby", "v2"), stream("python", "", "3.9", "3.8"), stream("nodejs", ""), foreign, stream("perl", "v1")},
		[]*templatev1.Template{template("rails", "true"), template("mine", "false"), template("django", "true")})
	want := []Retired{
		{Kind: "imagestream", Name: "perl", Version: "v1"},
		{Kind: "imagestream", Name: "ruby", Version: "v2"},
		{Kind: "imagestreamtag", Name: "python:3.8", Version: "v2"},
		{Kind: "imagestreamtag", Name: "python:3.9", Version: "v2"},
		{Kind: "template", Name: "django", Version: "v3"},
		{Kind: "template", Name: "rails", Version: "v3"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("RetiredOf = %v\nwant %v", got, want)
	}
}
