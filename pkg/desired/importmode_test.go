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
	want, _, _ := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "python")
	FollowImportMode(want, mode)
	return want
}

// TestTagsFollowTheClustersImportModeUnlessAnAdminSetOne: a stream installed before the cluster
// turned multi-architecture (its tags Legacy, as the server defaulted them) follows
// PreserveOriginal in one update, which then holds; a tag an admin set keeps its mode either way;
// the cluster turning back takes the followers back; a cluster that says nothing changes nothing.
func TestTagsFollowTheClustersImportModeUnlessAnAdminSetOne(t *testing.T) {
	plain, _, _ := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "python")
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

// TestAnAdminsModeThatTheClusterTurnsToStaysTheirs: an admin sets one tag PreserveOriginal on a
// Legacy cluster. The cluster turning PreserveOriginal takes the other tag along and names the
// admin's on the stream: once the two modes are the same, the mode alone no longer tells them
// apart. The cluster turning back takes only the other tag back, and so on each way; a new
// version gives every tag the inventory's mode again and forgets the admin's.
func TestAnAdminsModeThatTheClusterTurnsToStaysTheirs(t *testing.T) {
	plain, _, _ := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "python")
	live := withModes(plain, imagev1.ImportModeLegacy)
	admins := live.Spec.Tags[0].Name
	live.Spec.Tags[0].ImportPolicy.ImportMode = imagev1.ImportModePreserveOriginal

	for i, cluster := range []imagev1.ImportModeType{imagev1.ImportModePreserveOriginal, imagev1.ImportModeLegacy, imagev1.ImportModePreserveOriginal, imagev1.ImportModeLegacy} {
		a := ForImageStream(Managed, wantFollowing(cluster), false, live)
		if a.Verb != Update || !slices.Equal(a.Drift, []string{"spec.tags[latest].importPolicy.importMode"}) {
			t.Fatalf("change %d, the cluster turning %s: %s %v, want the other tag's mode only", i, cluster, a.Verb, a.Drift)
		}
		m := modes(a.Object)
		if m[admins] != imagev1.ImportModePreserveOriginal || m["latest"] != cluster {
			t.Errorf("change %d, the cluster turning %s: modes %v, want the admin's %s PreserveOriginal and latest %s", i, cluster, m, admins, cluster)
		}
		if got := a.Object.Annotations[AdminImportModeAnnotation]; got != admins {
			t.Errorf("change %d: %s %q, want %q", i, AdminImportModeAnnotation, got, admins)
		}
		live = a.Object
		if again := ForImageStream(Managed, wantFollowing(cluster), false, live); again.Verb != None {
			t.Errorf("change %d, the next resync: %s %v, want nothing", i, again.Verb, again.Drift)
		}
	}

	// The admin's Legacy once the cluster is PreserveOriginal stays Legacy both ways too.
	live = ForImageStream(Managed, wantFollowing(imagev1.ImportModePreserveOriginal), false, live).Object
	live.Spec.Tags[0].ImportPolicy.ImportMode = imagev1.ImportModeLegacy
	for _, cluster := range []imagev1.ImportModeType{imagev1.ImportModeLegacy, imagev1.ImportModePreserveOriginal} {
		if a := ForImageStream(Managed, wantFollowing(cluster), false, live); a.Verb != None {
			live = a.Object
		}
		if m := modes(live); m[admins] != imagev1.ImportModeLegacy || m["latest"] != cluster {
			t.Errorf("the admin's Legacy, the cluster turning %s: modes %v", cluster, m)
		}
	}

	// A new version: the inventory's modes, the cluster's for those it leaves open, and no
	// admin's tag remembered.
	v2, _, _ := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v2"}, fakeSource{}, "python")
	FollowImportMode(v2, imagev1.ImportModePreserveOriginal)
	up := ForImageStream(Managed, v2, false, live)
	if m := modes(up.Object); up.Verb != Update || m[admins] != imagev1.ImportModePreserveOriginal {
		t.Errorf("moving to v2: %s, modes %v, want every tag PreserveOriginal", up.Verb, m)
	}
	if got, ok := up.Object.Annotations[AdminImportModeAnnotation]; ok {
		t.Errorf("moving to v2: %s %q, want none", AdminImportModeAnnotation, got)
	}
}

// TestAnAdminsModeOnATagWithAModeOfItsOwnIsKept: a tag whose mode the inventory sets does not
// follow the cluster, so an admin's mode on it stays, even the one the cluster has.
func TestAnAdminsModeOnATagWithAModeOfItsOwnIsKept(t *testing.T) {
	plain, _, _ := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "python")
	own := withModes(plain, imagev1.ImportModePreserveOriginal) // the inventory's own mode
	FollowImportMode(own, imagev1.ImportModeLegacy)             // the cluster's, which it does not take
	admins := withModes(own, imagev1.ImportModeLegacy)
	if a := ForImageStream(Managed, own, false, admins); a.Verb != None {
		t.Errorf("an admin's Legacy on tags the inventory sets PreserveOriginal: %s %v, want it kept", a.Verb, a.Drift)
	}
}
