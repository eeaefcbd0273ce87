package desired

import (
	"slices"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
)

// modes are the import modes of a stream's tags, by tag.
func modes(is *imagev1.ImageStream) map[string]imagev1.ImportModeType {
	out := map[string]imagev1.ImportModeType{}
	for _, tag := range is.Spec.Tags {
		out[tag.Name] = tag.ImportPolicy.ImportMode
	}
	return out
}

func withModes(is *imagev1.ImageStream, mode imagev1.ImportModeType) *imagev1.ImageStream {
	is = is.DeepCopy()
	for i := range is.Spec.Tags {
		is.Spec.Tags[i].ImportPolicy.ImportMode = mode
	}
	return is
}

func wantFollowing(mode imagev1.ImportModeType) *imagev1.ImageStream {
	want, _, _ := ImageStream(&samplesv1.ConfigSpec{}, nil, fakeSource{}, "v1", "python")
	FollowImportMode(want, mode)
	return want
}

// TestTagsFollowTheClustersImportModeUnlessAnAdminSetOne: a stream installed before the cluster
// turned multi-architecture (its tags Legacy, as the server defaulted them) follows
// PreserveOriginal in one update, which then holds; a tag an admin set keeps its mode either way;
// the cluster turning back takes the followers back; a cluster that says nothing changes nothing.
func TestTagsFollowTheClustersImportModeUnlessAnAdminSetOne(t *testing.T) {
	plain, _, _ := ImageStream(&samplesv1.ConfigSpec{}, nil, fakeSource{}, "v1", "python")
	installed := withModes(plain, imagev1.ImportModeLegacy)

	if a := ForImageStream(Managed, wantFollowing(imagev1.ImportModeLegacy), false, installed); a.Verb != None {
		t.Errorf("a Legacy cluster over server-defaulted Legacy tags: %s %v, want nothing", a.Verb, a.Drift)
	}
	if a := ForImageStream(Managed, wantFollowing(""), false, installed); a.Verb != None {
		t.Errorf("a cluster that says no mode: %s %v, want nothing", a.Verb, a.Drift)
	}

	multi := wantFollowing(imagev1.ImportModePreserveOriginal)
	a := ForImageStream(Managed, multi, false, installed)
	if a.Verb != Update || !slices.Equal(a.Drift, []string{"spec.tags[3.11].importPolicy.importMode", "spec.tags[latest].importPolicy.importMode"}) {
		t.Fatalf("turning multi-architecture: %s %v, want the two tags' import modes", a.Verb, a.Drift)
	}
	followed := a.Object
	if m := modes(followed); m["3.11"] != imagev1.ImportModePreserveOriginal || m["latest"] != imagev1.ImportModePreserveOriginal ||
		followed.Annotations[ImportModeAnnotation] != string(imagev1.ImportModePreserveOriginal) {
		t.Errorf("after following: %v %v", m, followed.Annotations)
	}
	if again := ForImageStream(Managed, multi, false, followed); again.Verb != None {
		t.Errorf("the next resync: %s %v, want nothing", again.Verb, again.Drift)
	}

	// An admin's Legacy on one tag after the cluster turned is theirs; so is an admin's
	// PreserveOriginal on a stream the operator never wrote a mode on.
	adminLegacy := followed.DeepCopy()
	adminLegacy.Spec.Tags[0].ImportPolicy.ImportMode = imagev1.ImportModeLegacy
	if a := ForImageStream(Managed, multi, false, adminLegacy); a.Verb != None {
		t.Errorf("an admin's Legacy: %s %v, want it kept", a.Verb, a.Drift)
	}
	adminMulti := installed.DeepCopy()
	adminMulti.Spec.Tags[0].ImportPolicy.ImportMode = imagev1.ImportModePreserveOriginal
	if a := ForImageStream(Managed, wantFollowing(imagev1.ImportModeLegacy), false, adminMulti); a.Verb != None {
		t.Errorf("an admin's PreserveOriginal on a Legacy cluster: %s %v, want it kept", a.Verb, a.Drift)
	}

	back := ForImageStream(Managed, wantFollowing(imagev1.ImportModeLegacy), false, adminLegacy)
	if back.Verb != Update || !slices.Equal(back.Drift, []string{"spec.tags[latest].importPolicy.importMode"}) {
		t.Fatalf("turning back: %s %v, want only the tag that followed", back.Verb, back.Drift)
	}
	if m := modes(back.Object); m["3.11"] != imagev1.ImportModeLegacy || m["latest"] != imagev1.ImportModeLegacy ||
		back.Object.Annotations[ImportModeAnnotation] != string(imagev1.ImportModeLegacy) {
		t.Errorf("after turning back: %v %v", m, back.Object.Annotations)
	}
}
