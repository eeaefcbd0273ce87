package desired

import (
	"slices"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
)

func TestAdminSettable(t *testing.T) {
	for field, want := range map[string]bool{
		"spec.tags[latest].importPolicy.scheduled":        true,
		"spec.tags[3.11].importPolicy.importMode":         true,
		"spec.tags[latest].importPolicy.insecure":         false,
		"spec.tags[latest].from":                          false,
		"metadata.annotations[openshift.io/display-name]": false,
	} {
		if got := AdminSettable(field); got != want {
			t.Errorf("AdminSettable(%q) = %v, want %v", field, got, want)
		}
	}
}

// An update writes the fields that drifted and leaves the rest as the server has them: the
// order of the stream's tags, the bytes of a template's objects.
func TestAnUpdateRewritesOnlyWhatDrifted(t *testing.T) {
	want := wantStream(t, samplesv1.ConfigSpec{})
	cur := live(want)
	cur.Spec.Tags[0], cur.Spec.Tags[1] = cur.Spec.Tags[1], cur.Spec.Tags[0]
	cur.Annotations["openshift.io/display-name"] = "edited"
	got := ForImageStream(Managed, want, false, cur)
	if got.Verb != Update || got.Object.Spec.Tags[0].Name != "latest" || got.Object.Spec.Tags[1].Name != "3.11" {
		t.Errorf("an update for an annotation: %s, tags %v; want the live order latest, 3.11", got.Verb, got.Object.Spec.Tags)
	}

	wantT, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
	curT := wantT.DeepCopy()
	compacted := `{"kind":"Service","apiVersion":"v1","metadata":{"name":"${NAME}"}}`
	curT.Objects[0].Raw = []byte(compacted)
	curT.Message = "edited"
	gotT := ForTemplate(Managed, wantT, false, curT)
	if gotT.Verb != Update || string(gotT.Object.Objects[0].Raw) != compacted {
		t.Errorf("an update for the message: %s, object %s; want the live object's bytes", gotT.Verb, gotT.Object.Objects[0].Raw)
	}
}

// A tag's import mode drifts when the inventory sets one the live tag lacks; an empty one is the
// server's to fill. (An admin's mode within one version is kept: TestForImageStream.)
func TestImportModeDriftsOnlyWhenTheInventorySetsOne(t *testing.T) {
	want := wantStream(t, samplesv1.ConfigSpec{})
	cur := live(want) // import mode Legacy, filled by the server
	cur.Annotations[VersionAnnotation] = "v0"
	field := "spec.tags[3.11].importPolicy.importMode"
	if drift := ImageStreamDrift(cur, want); slices.Contains(drift, field) {
		t.Errorf("drift %v names the mode the server filled in", drift)
	}
	want.Spec.Tags[0].ImportPolicy.ImportMode = imagev1.ImportModePreserveOriginal
	if drift := ImageStreamDrift(cur, want); !slices.Contains(drift, field) {
		t.Errorf("drift %v lacks %s, which the inventory sets", drift, field)
	}
}
