package desired

import (
	"slices"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// fakeSource is an inventory of one imagestream and one template.
type fakeSource struct{}

func (fakeSource) ImageStreamNames() []string { return []string{"python"} }
func (fakeSource) TemplateNames() []string    { return []string{"httpd-example"} }
func (fakeSource) ImageStreamForRegistry(name, registry string) (*imagev1.ImageStream, bool) {
	if name != "python" {
		return nil, false
	}
	is := inventoryStream()
	if registry != "" {
		is.Spec.Tags[0].From.Name = registry + "/ubi9/python-311:latest"
	}
	return is, true
}
func (fakeSource) Template(name string) (*templatev1.Template, bool) {
	if name != "httpd-example" {
		return nil, false
	}
	return inventoryTemplate(), true
}

func inventoryStream() *imagev1.ImageStream {
	return &imagev1.ImageStream{
		ObjectMeta: metav1.ObjectMeta{Name: "python", Annotations: map[string]string{"openshift.io/display-name": "Python"}},
		Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{
			{
				Name:            "3.11",
				Annotations:     map[string]string{"openshift.io/display-name": "Python 3.11"},
				From:            &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ubi9/python-311:latest"},
				ReferencePolicy: imagev1.TagReferencePolicy{Type: imagev1.LocalTagReferencePolicy},
			},
			{
				Name:            "latest",
				From:            &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "3.11"},
				ReferencePolicy: imagev1.TagReferencePolicy{Type: imagev1.LocalTagReferencePolicy},
			},
		}},
	}
}

func inventoryTemplate() *templatev1.Template {
	return &templatev1.Template{
		ObjectMeta: metav1.ObjectMeta{Name: "httpd-example"},
		Message:    "created",
		Parameters: []templatev1.Parameter{{Name: "NAME", Value: "httpd"}},
		Objects: []runtime.RawExtension{{Raw: []byte(`{
  "apiVersion": "v1",
  "kind": "Service",
  "metadata": {"name": "${NAME}"}
}`)}},
		ObjectLabels: map[string]string{"template": "httpd-example"},
	}
}

func wantStream(t *testing.T, spec samplesv1.ConfigSpec) *imagev1.ImageStream {
	t.Helper()
	is, skipped, known := ImageStream(&spec, Choice{Version: "v1", SamplesRegistry: spec.SamplesRegistry}, fakeSource{}, "python")
	if !known || skipped || is == nil {
		t.Fatalf("python: known=%v skipped=%v", known, skipped)
	}
	return is
}

func TestImageStreamStampsAndRewrites(t *testing.T) {
	is := wantStream(t, samplesv1.ConfigSpec{})
	if is.Labels[ManagedLabel] != "true" || is.Annotations[VersionAnnotation] != "v1" || is.Annotations["openshift.io/display-name"] != "Python" {
		t.Errorf("not stamped: labels %v annotations %v", is.Labels, is.Annotations)
	}
	mirrored := wantStream(t, samplesv1.ConfigSpec{SamplesRegistry: "mirror.example:5000"})
	if got := mirrored.Spec.Tags[0].From.Name; got != "mirror.example:5000/ubi9/python-311:latest" {
		t.Errorf("registry not applied: %s", got)
	}
	if _, skipped, known := ImageStream(&samplesv1.ConfigSpec{SkippedImagestreams: []string{"python"}}, Choice{Version: "v1"}, fakeSource{}, "python"); !skipped || !known {
		t.Errorf("skipped python: skipped=%v known=%v", skipped, known)
	}
	if want, _, known := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "admin-app"); known || want != nil {
		t.Errorf("a name outside the inventory is known=%v", known)
	}
	tp, skipped, known := Template(&samplesv1.ConfigSpec{SkippedTemplates: []string{"other"}}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
	if !known || skipped || tp.Labels[ManagedLabel] != "true" || tp.Annotations[VersionAnnotation] != "v1" {
		t.Errorf("template: known=%v skipped=%v meta %v %v", known, skipped, tp.Labels, tp.Annotations)
	}
}

// live returns what the API server would hold for a created sample: the operator's object plus
// server-filled fields.
func live(is *imagev1.ImageStream) *imagev1.ImageStream {
	out := is.DeepCopy()
	out.Namespace, out.UID, out.ResourceVersion = "openshift", "uid-1", "7"
	gen := int64(3)
	for i := range out.Spec.Tags {
		out.Spec.Tags[i].Generation = &gen
		out.Spec.Tags[i].ImportPolicy.ImportMode = imagev1.ImportModeLegacy
	}
	return out
}

func TestForImageStream(t *testing.T) {
	want := wantStream(t, samplesv1.ConfigSpec{})
	inSync := live(want)
	foreign := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "python", Labels: map[string]string{"team": "x"}}}
	deleting := inSync.DeepCopy()
	now := metav1.Now()
	deleting.DeletionTimestamp = &now

	edit := func(f func(*imagev1.ImageStream)) *imagev1.ImageStream { out := inSync.DeepCopy(); f(out); return out }
	cases := []struct {
		name    string
		mode    Mode
		want    *imagev1.ImageStream
		skipped bool
		live    *imagev1.ImageStream
		verb    Verb
	}{
		{"managed, absent: create", Managed, want, false, nil, Create},
		{"managed, in sync (server-filled generation and import mode): nothing", Managed, want, false, inSync, None},
		{"managed, admin label and annotation added: nothing", Managed, want, false, edit(func(o *imagev1.ImageStream) {
			o.Labels["team"] = "x"
			o.Annotations["note"] = "y"
		}), None},
		{"managed, admin tag added: nothing", Managed, want, false, edit(func(o *imagev1.ImageStream) {
			o.Spec.Tags = append(o.Spec.Tags, imagev1.TagReference{Name: "mine", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "x/y:z"}})
		}), None},
		{"managed, tags reordered: nothing", Managed, want, false, edit(func(o *imagev1.ImageStream) {
			o.Spec.Tags[0], o.Spec.Tags[1] = o.Spec.Tags[1], o.Spec.Tags[0]
		}), None},
		{"managed, spec tag removed: update", Managed, want, false, edit(func(o *imagev1.ImageStream) { o.Spec.Tags = o.Spec.Tags[1:] }), Update},
		{"managed, tag display name edited: update", Managed, want, false, edit(func(o *imagev1.ImageStream) {
			o.Spec.Tags[0].Annotations["openshift.io/display-name"] = "x"
		}), Update},
		// A tag's annotations are the inventory's whole: an admin's own key on an inventory tag is
		// reverted like an edit (admin-guide.md, what on a managed sample is the admin's).
		{"managed, admin annotation added on an inventory tag: update", Managed, want, false, edit(func(o *imagev1.ImageStream) {
			o.Spec.Tags[0].Annotations["note"] = "mine"
		}), Update},
		{"managed, tag image changed: update", Managed, want, false, edit(func(o *imagev1.ImageStream) { o.Spec.Tags[0].From.Name = "evil/x:y" }), Update},
		{"managed, reference policy changed: update", Managed, want, false, edit(func(o *imagev1.ImageStream) {
			o.Spec.Tags[0].ReferencePolicy.Type = imagev1.SourceTagReferencePolicy
		}), Update},
		{"managed, stream annotation edited: update", Managed, want, false, edit(func(o *imagev1.ImageStream) {
			o.Annotations["openshift.io/display-name"] = "x"
		}), Update},
		{"managed, version annotation stale: update", Managed, want, false, edit(func(o *imagev1.ImageStream) { o.Annotations[VersionAnnotation] = "v0" }), Update},
		{"managed, managed label removed: update", Managed, want, false, edit(func(o *imagev1.ImageStream) { delete(o.Labels, ManagedLabel) }), Update},
		{"managed, managed label removed beside an admin's label: update", Managed, want, false, edit(func(o *imagev1.ImageStream) {
			delete(o.Labels, ManagedLabel)
			o.Labels["team"] = "x"
		}), Update},
		{"managed, lookup policy changed: update", Managed, want, false, edit(func(o *imagev1.ImageStream) { o.Spec.LookupPolicy.Local = true }), Update},
		{"managed, admin scheduled a tag's import: nothing", Managed, want, false, edit(func(o *imagev1.ImageStream) { o.Spec.Tags[0].ImportPolicy.Scheduled = true }), None},
		{"managed, admin set PreserveOriginal: nothing", Managed, want, false, edit(func(o *imagev1.ImageStream) {
			o.Spec.Tags[0].ImportPolicy.ImportMode = imagev1.ImportModePreserveOriginal
		}), None},
		{"managed, admin's import policy on a stream of another version: update", Managed, want, false, edit(func(o *imagev1.ImageStream) {
			o.Annotations[VersionAnnotation] = "v0"
			o.Spec.Tags[0].ImportPolicy = imagev1.TagImportPolicy{Scheduled: true, ImportMode: imagev1.ImportModePreserveOriginal}
		}), Update},
		{"managed, insecure import set: update", Managed, want, false, edit(func(o *imagev1.ImageStream) { o.Spec.Tags[0].ImportPolicy.Insecure = true }), Update},
		{"managed, skipped and owned: mark unmanaged", Managed, nil, true, inSync, MarkUnmanaged},
		{"managed, skipped and already unmanaged: nothing", Managed, nil, true, edit(func(o *imagev1.ImageStream) { o.Labels[ManagedLabel] = "false" }), None},
		{"managed, skipped and absent: nothing", Managed, nil, true, nil, None},
		{"managed, not in the inventory: nothing", Managed, nil, false, foreign, None},
		{"removing, owned: delete", Removing, want, false, inSync, Delete},
		{"removing, owned but outside the inventory: delete", Removing, nil, false, inSync, Delete},
		{"removing, already being deleted: nothing", Removing, want, false, deleting, None},
		{"removing, skipped (label false): nothing", Removing, nil, true, edit(func(o *imagev1.ImageStream) { o.Labels[ManagedLabel] = "false" }), None},
		{"removing, foreign: nothing", Removing, nil, false, foreign, None},
		{"removing, absent: nothing", Removing, want, false, nil, None},
		{"frozen, absent: nothing", Frozen, want, false, nil, None},
		{"frozen, drifted: nothing", Frozen, want, false, edit(func(o *imagev1.ImageStream) { o.Spec.Tags = nil }), None},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var liveBefore *imagev1.ImageStream
			if tc.live != nil {
				liveBefore = tc.live.DeepCopy()
			}
			got := ForImageStream(tc.mode, tc.want, tc.skipped, tc.live)
			if got.Verb != tc.verb {
				t.Fatalf("verb = %q, want %q", got.Verb, tc.verb)
			}
			if tc.live != nil && !equalStreams(tc.live, liveBefore) {
				t.Errorf("the decision changed the lister's object")
			}
			switch got.Verb {
			case Update:
				if !ImageStreamInSync(got.Object, tc.want) {
					t.Errorf("the update does not bring the stream in sync")
				}
				if got.Object.ResourceVersion != tc.live.ResourceVersion {
					t.Errorf("the update lost the resourceVersion")
				}
				for k, v := range tc.live.Labels {
					if k != ManagedLabel && got.Object.Labels[k] != v {
						t.Errorf("the update dropped label %s", k)
					}
				}
			case MarkUnmanaged:
				if got.Object.Labels[ManagedLabel] != "false" || !equalSpecs(got.Object, tc.live) {
					t.Errorf("mark-unmanaged changed more than the label")
				}
			}
		})
	}
}

func equalStreams(a, b *imagev1.ImageStream) bool {
	return a.ResourceVersion == b.ResourceVersion && len(a.Labels) == len(b.Labels) && equalSpecs(a, b) && a.Labels[ManagedLabel] == b.Labels[ManagedLabel]
}

func equalSpecs(a, b *imagev1.ImageStream) bool {
	if len(a.Spec.Tags) != len(b.Spec.Tags) {
		return false
	}
	for i := range a.Spec.Tags {
		if a.Spec.Tags[i].Name != b.Spec.Tags[i].Name || len(tagDifferences(a.Spec.Tags[i], b.Spec.Tags[i])) > 0 {
			return false
		}
	}
	return true
}

func TestMergeImageStreamKeepsExtraTagsAndServerFields(t *testing.T) {
	want := wantStream(t, samplesv1.ConfigSpec{})
	cur := live(want)
	cur.Spec.Tags = append(cur.Spec.Tags[1:], imagev1.TagReference{Name: "mine"})
	merged, drift := mergeImageStream(cur, want)
	if !slices.Equal(drift, []string{"spec.tags[3.11]"}) {
		t.Fatalf("drift %v, want the missing inventory tag spec.tags[3.11]", drift)
	}
	var names []string
	for _, tag := range merged.Spec.Tags {
		names = append(names, tag.Name)
	}
	if len(names) != 3 || names[0] != "3.11" || names[1] != "latest" || names[2] != "mine" {
		t.Errorf("merged tags = %v, want the inventory's in order, then the admin's", names)
	}
	if merged.Spec.Tags[1].Generation == nil {
		t.Errorf("the server-filled generation of an unchanged tag was dropped")
	}
}

// The admin's import schedule and mode survive a revert of the same tag's from, and an upgrade
// puts the inventory's back, as does re-creating a deleted tag.
func TestAdminImportPolicyBetweenUpgrades(t *testing.T) {
	want := wantStream(t, samplesv1.ConfigSpec{})
	admins := imagev1.TagImportPolicy{Scheduled: true, ImportMode: imagev1.ImportModePreserveOriginal}
	cur := live(want)
	cur.Spec.Tags[0].ImportPolicy = admins
	cur.Spec.Tags[0].From.Name = "mirror.example/ubi9/python-311:latest" // oc tag --scheduled changes from too

	merged, drift := mergeImageStream(cur, want)
	if !slices.Equal(drift, []string{"spec.tags[3.11].from"}) {
		t.Fatalf("drift %v, want only the tag's from", drift)
	}
	if got := merged.Spec.Tags[0]; got.From.Name != want.Spec.Tags[0].From.Name || got.ImportPolicy != admins {
		t.Errorf("reverted tag: from %s, import policy %+v; want the inventory's from and the admin's policy %+v", got.From.Name, got.ImportPolicy, admins)
	}

	deleted := live(want)
	deleted.Spec.Tags[1].ImportPolicy = admins // on latest, which the admin keeps
	deleted.Spec.Tags = deleted.Spec.Tags[1:]
	merged, _ = mergeImageStream(deleted, want)
	if merged.Spec.Tags[0].Name != "3.11" || merged.Spec.Tags[0].ImportPolicy != want.Spec.Tags[0].ImportPolicy {
		t.Errorf("a re-created tag has import policy %+v, want the inventory's", merged.Spec.Tags[0].ImportPolicy)
	}

	next, _, _ := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v2"}, fakeSource{}, "python")
	upgraded, drift := mergeImageStream(cur, next)
	if got := upgraded.Spec.Tags[0].ImportPolicy; got != next.Spec.Tags[0].ImportPolicy {
		t.Errorf("after an upgrade the tag's import policy is %+v, want the inventory's %+v (drift %v)", got, next.Spec.Tags[0].ImportPolicy, drift)
	}
	if !slices.Contains(drift, "spec.tags[3.11].importPolicy.scheduled") {
		t.Errorf("an upgrade's drift %v does not name the schedule it resets", drift)
	}
}

func TestForTemplate(t *testing.T) {
	want, _, _ := Template(&samplesv1.ConfigSpec{}, Choice{Version: "v1"}, fakeSource{}, "httpd-example")
	inSync := want.DeepCopy()
	inSync.ResourceVersion = "3"
	// The server hands objects back compacted: not drift.
	inSync.Objects[0].Raw = []byte(`{"kind":"Service","apiVersion":"v1","metadata":{"name":"${NAME}"}}`)
	edit := func(f func(*templatev1.Template)) *templatev1.Template { out := inSync.DeepCopy(); f(out); return out }
	cases := []struct {
		name string
		mode Mode
		live *templatev1.Template
		verb Verb
	}{
		{"absent: create", Managed, nil, Create},
		{"compacted JSON objects: nothing", Managed, inSync, None},
		{"admin label: nothing", Managed, edit(func(o *templatev1.Template) { o.Labels["team"] = "x" }), None},
		{"parameter value edited: update", Managed, edit(func(o *templatev1.Template) { o.Parameters[0].Value = "x" }), Update},
		{"parameter added: update", Managed, edit(func(o *templatev1.Template) { o.Parameters = append(o.Parameters, templatev1.Parameter{Name: "X"}) }), Update},
		{"object edited: update", Managed, edit(func(o *templatev1.Template) {
			o.Objects[0].Raw = []byte(`{"kind":"Service","apiVersion":"v1","metadata":{"name":"other"}}`)
		}), Update},
		{"object removed: update", Managed, edit(func(o *templatev1.Template) { o.Objects = nil }), Update},
		{"message edited: update", Managed, edit(func(o *templatev1.Template) { o.Message = "x" }), Update},
		{"object labels edited: update", Managed, edit(func(o *templatev1.Template) { o.ObjectLabels["template"] = "x" }), Update},
		{"removing: delete", Removing, inSync, Delete},
		{"frozen: nothing", Frozen, edit(func(o *templatev1.Template) { o.Message = "x" }), None},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ForTemplate(tc.mode, want, false, tc.live)
			if got.Verb != tc.verb {
				t.Fatalf("verb = %q, want %q", got.Verb, tc.verb)
			}
			if got.Verb == Update {
				if !TemplateInSync(got.Object, want) {
					t.Errorf("the update does not bring the template in sync")
				}
				if got.Object.ResourceVersion != "3" {
					t.Errorf("the update lost the resourceVersion")
				}
			}
		})
	}
	if got := ForTemplate(Managed, nil, true, inSync); got.Verb != MarkUnmanaged || got.Object.Labels[ManagedLabel] != "false" {
		t.Errorf("a skipped owned template: %q", got.Verb)
	}
	if inSync.Labels[ManagedLabel] != "true" {
		t.Errorf("marking unmanaged changed the lister's object")
	}
}

// TestASkippedTagIsRemovedOnceAndComesBackWhenUnskipped: want lacks the tag and names it; the
// live stream loses it in one update; an admin who puts it back keeps it; other edits are still
// reverted; with the skip gone the tag comes back and the stream no longer names it.
func TestASkippedTagIsRemovedOnceAndComesBackWhenUnskipped(t *testing.T) {
	installed := wantStream(t, samplesv1.ConfigSpec{})
	skipping, _, _ := ImageStream(&samplesv1.ConfigSpec{}, Choice{Version: "v1", SkippedTags: "3.11"}, fakeSource{}, "python")
	if len(skipping.Spec.Tags) != 1 || skipping.Spec.Tags[0].Name != "latest" || skipping.Annotations[StreamSkippedTagsAnnotation] != "3.11" {
		t.Fatalf("want with 3.11 skipped: tags %v, annotation %q", skipping.Spec.Tags, skipping.Annotations[StreamSkippedTagsAnnotation])
	}

	action := ForImageStream(Managed, skipping, false, installed)
	if action.Verb != Update || len(action.Object.Spec.Tags) != 1 || action.Object.Spec.Tags[0].Name != "latest" ||
		action.Object.Annotations[StreamSkippedTagsAnnotation] != "3.11" {
		t.Fatalf("first sync: %s, tags %v, annotations %v; want an update that removes 3.11 and names it", action.Verb, action.Object.Spec.Tags, action.Object.Annotations)
	}
	removed := action.Object

	if a := ForImageStream(Managed, skipping, false, removed); a.Verb != None {
		t.Errorf("after the removal: %s %v, want nothing", a.Verb, a.Drift)
	}
	putBack := removed.DeepCopy()
	putBack.Spec.Tags = append(putBack.Spec.Tags, installed.Spec.Tags[0])
	if a := ForImageStream(Managed, skipping, false, putBack); a.Verb != None {
		t.Errorf("an admin put 3.11 back: %s %v, want it kept", a.Verb, a.Drift)
	}
	edited := removed.DeepCopy()
	edited.Spec.Tags[0].From.Name = "3.99"
	if a := ForImageStream(Managed, skipping, false, edited); a.Verb != Update || a.Object.Spec.Tags[0].From.Name != "3.11" {
		t.Errorf("an edit of another tag: %s, latest -> %s; want it reverted", a.Verb, a.Object.Spec.Tags[0].From.Name)
	}

	back := ForImageStream(Managed, installed, false, removed)
	if back.Verb != Update || len(back.Object.Spec.Tags) != 2 {
		t.Fatalf("unskipped: %s with tags %v, want 3.11 back", back.Verb, back.Object.Spec.Tags)
	}
	if _, named := back.Object.Annotations[StreamSkippedTagsAnnotation]; named {
		t.Errorf("unskipped: the stream still names skipped tags %q", back.Object.Annotations[StreamSkippedTagsAnnotation])
	}
}

// TestChangeSinceNamesTheFirstChange: the reason a sample is written again names the setting
// that moved, in the order of ChangeSince's cases, and says where the registry came from when
// spec.samplesRegistry was or becomes empty; an admin reads it in the write's event.
func TestChangeSinceNamesTheFirstChange(t *testing.T) {
	earlier := Choice{Generation: 3, Architecture: "x86_64", Version: "4.21.0", SkippedTags: "3.9"}
	for _, tc := range []struct {
		name   string
		was    string // the earlier spec.samplesRegistry
		change func(*Choice)
		want   string
	}{
		{"samplesRegistry set", "", func(c *Choice) { c.SamplesRegistry = "mirror.example:5000"; c.Architecture = "aarch64" },
			"spec.samplesRegistry changed: it pulled from the inventory's registries and now pulls from mirror.example:5000"},
		{"samplesRegistry unset", "mirror.example:5000", func(c *Choice) { c.SamplesRegistry = ""; c.Generation = 4 },
			"spec.samplesRegistry changed: it pulled from mirror.example:5000 and now pulls from the inventory's registries"},
		{"architecture", "", func(c *Choice) { c.Architecture = "aarch64"; c.SkippedTags = "" },
			"spec.architectures changed from x86_64 to aarch64"},
		{"skipped tags", "", func(c *Choice) { c.SkippedTags = "3.9,3.11"; c.ImportMode = imagev1.ImportModeLegacy },
			"the Config's skipped tags changed for it: it skipped [3.9] and now skips [3.9,3.11]"},
		{"import mode", "", func(c *Choice) { c.ImportMode = imagev1.ImportModePreserveOriginal; c.Marks = "3.9=gone" },
			`the cluster's import mode for imagestreams changed from "" to "PreserveOriginal" (images.config.openshift.io status)`},
		{"marks", "", func(c *Choice) { c.Marks = "3.9=gone"; c.Generation = 4 },
			"whether it can work on this cluster changed (" + UnusableAnnotation + ")"},
		{"generation", "", func(c *Choice) { c.Generation = 4 }, "the Config changed (generation 3, now 4)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from := earlier
			from.SamplesRegistry = tc.was
			now := from
			tc.change(&now)
			if got := now.ChangeSince(from); got != tc.want {
				t.Errorf("ChangeSince = %q, want %q", got, tc.want)
			}
		})
	}
}
