package samplereport

import (
	"reflect"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
)

const (
	listDigest   = "sha256:aaaa00000000000000000000000000000000000000000000000000000000aaaa"
	singleDigest = "sha256:bbbb00000000000000000000000000000000000000000000000000000000bbbb"
)

func stream(name string, tags ...string) *imagev1.ImageStream {
	is := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "openshift"}}
	for _, t := range tags {
		is.Spec.Tags = append(is.Spec.Tags, imagev1.TagReference{Name: t, From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ubi9/" + name + ":" + t}})
	}
	return is
}

func managed(is *imagev1.ImageStream, version string) *imagev1.ImageStream {
	is = is.DeepCopy()
	is.Labels = map[string]string{desired.ManagedLabel: "true"}
	is.Annotations = map[string]string{desired.VersionAnnotation: version}
	return is
}

func imported(is *imagev1.ImageStream, tag, image, ref string) {
	is.Status.Tags = append(is.Status.Tags, imagev1.NamedTagEventList{Tag: tag, Items: []imagev1.TagEvent{{Image: image, DockerImageReference: ref, Generation: 1}}})
}

func failed(is *imagev1.ImageStream, tag, message string) {
	is.Status.Tags = append(is.Status.Tags, imagev1.NamedTagEventList{Tag: tag, Conditions: []imagev1.TagEventCondition{{
		Type: imagev1.ImportSuccess, Status: corev1.ConditionFalse, Reason: "InternalError", Message: message, Generation: 2,
	}}})
}

func TestBuildReportsEverySampleAndTag(t *testing.T) {
	cfg := &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster", Annotations: map[string]string{configspec.SkippedImageStreamTagsAnnotation: "python:3.8"}},
		Spec:       samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, SkippedImagestreams: []string{"ruby"}, SkippedTemplates: []string{"t-skipped"}},
		Status:     samplesv1.ConfigStatus{Version: "4.20.0"},
	}
	invPython, invNode, invRuby, invPerl := stream("python", "3.8", "3.9", "3.11"), stream("nodejs", "20"), stream("ruby", "3.3"), stream("perl", "5.40")

	python := managed(invPython, "4.20.0")
	python.Spec.Tags = python.Spec.Tags[1:] // the skipped tag was removed
	python.Spec.Tags = append(python.Spec.Tags, imagev1.TagReference{Name: "3.6", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ubi8/python-36:latest"},
		Annotations: map[string]string{desired.RetiredAnnotation: "4.20.0", "tags": "hidden"}})
	imported(python, "3.9", listDigest, "mirror.local:5000/rh/ubi9/python:3.9")
	failed(python, "3.11", "Internal error occurred: registry.redhat.io/ubi9/python:3.11: manifest unknown")

	node := managed(invNode, "4.19.0")
	imported(node, "20", singleDigest, "registry.redhat.io/ubi9/nodejs:20")

	retired := managed(stream("jboss", "1"), "4.19.0")
	retired.Annotations[desired.RetiredAnnotation] = "4.20.0"
	imported(retired, "1", singleDigest, "registry.redhat.io/ubi9/jboss:1")

	foreign := stream("admins-own", "1") // no label: not a sample

	tmpl := &templatev1.Template{ObjectMeta: metav1.ObjectMeta{Name: "t-managed", Labels: map[string]string{desired.ManagedLabel: "true"}, Annotations: map[string]string{desired.VersionAnnotation: "4.20.0"}}}

	sets := mirrorsets.Sets{Tag: []*configv1.ImageTagMirrorSet{{
		ObjectMeta: metav1.ObjectMeta{Name: "rh"},
		Spec: configv1.ImageTagMirrorSetSpec{ImageTagMirrors: []configv1.ImageTagMirrors{{
			Source: "registry.redhat.io", Mirrors: []configv1.ImageMirror{"other.local/rh", "mirror.local:5000/rh"},
		}}},
	}}}
	images := map[string]*imagev1.Image{
		listDigest: {ObjectMeta: metav1.ObjectMeta{Name: listDigest}, DockerImageManifests: []imagev1.ImageManifest{
			{Architecture: "amd64", OS: "linux"}, {Architecture: "arm64", OS: "linux", Variant: "v8"}, {Architecture: "amd64", OS: "linux"},
		}},
		singleDigest: {ObjectMeta: metav1.ObjectMeta{Name: singleDigest}, DockerImageMetadata: runtime.RawExtension{Raw: []byte(`{"kind":"DockerImage","architecture":"amd64"}`)}},
	}

	r := Build(Input{
		Config:             cfg,
		ImageStreams:       []*imagev1.ImageStream{python, node, retired, foreign},
		Templates:          []*templatev1.Template{tmpl},
		InventoryStreams:   []*imagev1.ImageStream{invPython, invNode, invRuby, invPerl},
		InventoryTemplates: []string{"t-managed", "t-skipped", "t-absent"},
		Mirrors:            &sets,
		Images:             images,
		NodeArchitectures:  []string{"amd64", "s390x"},
	})

	via := []string{"ImageTagMirrorSet/rh"}
	want := []Sample{
		{Kind: KindImageStream, Name: "jboss", State: Retired, Version: "4.19.0", RetiredIn: "4.20.0", Imported: 1, Tags: []Tag{
			{Name: "1", State: TagImported, From: "registry.redhat.io/ubi9/jboss:1", Image: singleDigest, Mirror: "other.local/rh/ubi9/jboss:1", MirroredBy: via,
				Architectures: []string{"amd64"}, MissingArchitectures: []string{"s390x"}},
		}},
		{Kind: KindImageStream, Name: "nodejs", State: Managed, Version: "4.19.0", Imported: 1, Tags: []Tag{
			{Name: "20", State: TagImported, From: "registry.redhat.io/ubi9/nodejs:20", Image: singleDigest, Mirror: "other.local/rh/ubi9/nodejs:20", MirroredBy: via,
				Architectures: []string{"amd64"}, MissingArchitectures: []string{"s390x"}},
		}},
		{Kind: KindImageStream, Name: "perl", State: Absent, Tags: []Tag{
			{Name: "5.40", State: TagPending, From: "registry.redhat.io/ubi9/perl:5.40", Mirror: "other.local/rh/ubi9/perl:5.40", MirroredBy: via},
		}},
		{Kind: KindImageStream, Name: "python", State: Managed, Version: "4.20.0", Imported: 1, Failing: 1, Tags: []Tag{
			{Name: "3.11", State: TagFailing, From: "registry.redhat.io/ubi9/python:3.11", Reason: "Internal error occurred: registry.redhat.io/ubi9/python:3.11: manifest unknown",
				Mirror: "other.local/rh/ubi9/python:3.11", MirroredBy: via},
			{Name: "3.6", State: TagRetired, From: "registry.redhat.io/ubi8/python-36:latest", Reason: "retired in 4.20.0", Mirror: "other.local/rh/ubi8/python-36:latest", MirroredBy: via},
			{Name: "3.8", State: TagSkipped, Reason: "skipped by the Config's " + configspec.SkippedImageStreamTagsAnnotation},
			// Imported through the second mirror: the imported reference names it.
			{Name: "3.9", State: TagImported, From: "registry.redhat.io/ubi9/python:3.9", Image: listDigest, Mirror: "mirror.local:5000/rh/ubi9/python:3.9", MirroredBy: via,
				Architectures: []string{"amd64", "arm64/v8"}, MissingArchitectures: []string{"s390x"}},
		}},
		{Kind: KindImageStream, Name: "ruby", State: Skipped, Tags: []Tag{
			{Name: "3.3", State: TagPending, From: "registry.redhat.io/ubi9/ruby:3.3", Mirror: "other.local/rh/ubi9/ruby:3.3", MirroredBy: via},
		}},
		{Kind: KindTemplate, Name: "t-absent", State: Absent},
		{Kind: KindTemplate, Name: "t-managed", State: Managed, Version: "4.20.0"},
		{Kind: KindTemplate, Name: "t-skipped", State: Skipped},
	}
	if !reflect.DeepEqual(r.Samples, want) {
		for i := range max(len(r.Samples), len(want)) {
			var g, w Sample
			if i < len(r.Samples) {
				g = r.Samples[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("sample %d:\n got %+v\nwant %+v", i, g, w)
			}
		}
	}
	if want := "5 imagestreams: 1 imported, 1 failing, 1 retired, 1 skipped, 1 absent; 3 templates: 1 managed, 1 skipped, 1 absent"; r.Summary != want {
		t.Errorf("summary %q, want %q", r.Summary, want)
	}
	if !r.Failing() {
		t.Error("a failing tag makes the report failing")
	}
}

func TestUnmanagedAndQuietSummary(t *testing.T) {
	cfg := &samplesv1.Config{Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Unmanaged}}
	is := managed(stream("python", "3.9"), "1")
	imported(is, "3.9", singleDigest, "registry.redhat.io/ubi9/python:3.9")
	tmpl := &templatev1.Template{ObjectMeta: metav1.ObjectMeta{Name: "t", Labels: map[string]string{desired.ManagedLabel: "true"}}}
	r := Build(Input{Config: cfg, ImageStreams: []*imagev1.ImageStream{is}, Templates: []*templatev1.Template{tmpl},
		InventoryStreams: []*imagev1.ImageStream{stream("python", "3.9")}, InventoryTemplates: []string{"t"}})
	if got := r.Samples[0].State; got != Unmanaged {
		t.Errorf("state %s under an Unmanaged Config, want unmanaged", got)
	}
	if r.Samples[0].Tags[0].Mirror != "" || r.Samples[0].Tags[0].Architectures != nil {
		t.Errorf("mirror sets and images not read: nothing to say, got %+v", r.Samples[0].Tags[0])
	}
	if want := "1 imagestream: 1 imported; 1 template: 1 unmanaged"; r.Summary != want {
		t.Errorf("summary %q, want %q", r.Summary, want)
	}
	cfg.Spec.ManagementState = operatorv1.Managed
	r = Build(Input{Config: cfg, ImageStreams: []*imagev1.ImageStream{is}, Templates: []*templatev1.Template{tmpl},
		InventoryStreams: []*imagev1.ImageStream{stream("python", "3.9")}, InventoryTemplates: []string{"t"}})
	if want := "1 imagestream: 1 imported; 1 template"; r.Summary != want || r.Failing() {
		t.Errorf("summary %q (failing %v), want %q", r.Summary, r.Failing(), want)
	}
}

// A tag that points at another tag of its stream comes through that tag's mirror.
func TestATagFollowingAnotherComesThroughItsMirror(t *testing.T) {
	is := managed(stream("python", "3.12"), "1")
	is.Spec.Tags = append(is.Spec.Tags,
		imagev1.TagReference{Name: "latest", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "3.12"}},
		imagev1.TagReference{Name: "loop", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "loop"}},
		imagev1.TagReference{Name: "elsewhere", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "ruby:1"}},
		imagev1.TagReference{Name: "dangling", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "no-such-tag"}})
	sets := mirrorsets.Sets{Tag: []*configv1.ImageTagMirrorSet{{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: configv1.ImageTagMirrorSetSpec{
		ImageTagMirrors: []configv1.ImageTagMirrors{{Source: "registry.redhat.io", Mirrors: []configv1.ImageMirror{"mirror.local/rh"}}}}}}}
	r := Build(Input{Config: &samplesv1.Config{Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed}},
		ImageStreams: []*imagev1.ImageStream{is}, InventoryStreams: []*imagev1.ImageStream{stream("python", "3.12")}, Mirrors: &sets})
	mirrors := map[string]string{}
	for _, tag := range r.Samples[0].Tags {
		mirrors[tag.Name] = tag.Mirror
	}
	want := map[string]string{"3.12": "mirror.local/rh/ubi9/python:3.12", "latest": "mirror.local/rh/ubi9/python:3.12", "loop": "", "elsewhere": "", "dangling": ""}
	if !reflect.DeepEqual(mirrors, want) {
		t.Errorf("mirrors %v, want %v", mirrors, want)
	}
}

// A retired stream's imports are no longer tracked: a tag of it that failed to import is named
// with the server's reason but makes neither the stream nor the report failing.
func TestARetiredStreamsFailedImportIsNotFailing(t *testing.T) {
	retired := managed(stream("jboss", "1", "2"), "4.19.0")
	retired.Annotations[desired.RetiredAnnotation] = "4.20.0"
	imported(retired, "1", singleDigest, "registry.redhat.io/ubi9/jboss:1")
	failed(retired, "2", "manifest unknown")
	r := Build(Input{Config: &samplesv1.Config{Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed}},
		ImageStreams: []*imagev1.ImageStream{retired}})
	s := r.Samples[0]
	if s.State != Retired || s.Failing != 0 || s.Imported != 1 {
		t.Errorf("retired jboss: state %s, %d failing, %d imported; want retired, 0 failing, 1 imported", s.State, s.Failing, s.Imported)
	}
	if s.Tags[1].Reason != "manifest unknown" {
		t.Errorf("the server's reason is lost: %+v", s.Tags[1])
	}
	if r.Failing() {
		t.Error("a retired stream's failed import makes the report failing")
	}
	if want := "1 imagestream: 1 retired; 0 templates"; r.Summary != want {
		t.Errorf("summary %q, want %q", r.Summary, want)
	}
}

// TestTheOperatorsVerdictOnWhatCannotWorkHereIsReported: a template's and a tag's
// desired.UnusableAnnotation come out as Unusable; a sample without one has none.
func TestTheOperatorsVerdictOnWhatCannotWorkHereIsReported(t *testing.T) {
	cfg := &samplesv1.Config{Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed}}
	is := managed(stream("python", "3.9", "3.11"), "1")
	is.Spec.Tags[1].Annotations = map[string]string{desired.UnusableAnnotation: "no image for node architecture s390x"}
	marked := &templatev1.Template{ObjectMeta: metav1.ObjectMeta{Name: "t", Labels: map[string]string{desired.ManagedLabel: "true"},
		Annotations: map[string]string{desired.UnusableAnnotation: "creates apps.openshift.io/v1 DeploymentConfig, which this cluster does not serve"}}}
	plain := &templatev1.Template{ObjectMeta: metav1.ObjectMeta{Name: "u", Labels: map[string]string{desired.ManagedLabel: "true"}}}
	r := Build(Input{Config: cfg, ImageStreams: []*imagev1.ImageStream{is}, Templates: []*templatev1.Template{marked, plain},
		InventoryStreams: []*imagev1.ImageStream{stream("python", "3.9", "3.11")}, InventoryTemplates: []string{"t", "u"}})
	got := map[string]string{}
	for _, s := range r.Samples {
		got[s.Name] = s.Unusable
		for _, tag := range s.Tags {
			got[s.Name+":"+tag.Name] = tag.Unusable
		}
	}
	want := map[string]string{"python": "", "python:3.9": "", "python:3.11": "no image for node architecture s390x",
		"t": "creates apps.openshift.io/v1 DeploymentConfig, which this cluster does not serve", "u": ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("unusable = %v, want %v", got, want)
	}
}

// TestATagRewrittenSinceItsImportFailedIsPending: issue 56 item 11. A spec tag written anew after
// its import failed (its generation is newer than the failure's) waits for its new import: it
// is pending, not failing, until that import fails too.
func TestATagRewrittenSinceItsImportFailedIsPending(t *testing.T) {
	for _, tc := range []struct {
		specGen int64
		want    TagState
	}{{2, TagFailing}, {3, TagPending}} {
		ruby := managed(stream("ruby", "3.3"), "4.20.0")
		ruby.Spec.Tags[0].Generation = &tc.specGen
		failed(ruby, "3.3", "manifest unknown") // at generation 2
		r := Build(Input{Config: &samplesv1.Config{Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed}},
			ImageStreams: []*imagev1.ImageStream{ruby}})
		if got := r.Samples[0].Tags[0].State; got != tc.want {
			t.Errorf("spec tag at generation %d, its import failed at 2: %s, want %s", tc.specGen, got, tc.want)
		}
		if r.Failing() != (tc.want == TagFailing) {
			t.Errorf("spec tag at generation %d: the report failing is %v", tc.specGen, r.Failing())
		}
	}
}

func managedConfig() *samplesv1.Config {
	return &samplesv1.Config{Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed}}
}

// TestASampleTheInventoryNoLongerHasIsStillReported: what the operator wrote stays its sample
// once the inventory drops it, before it is retired, and a retired one whose managed label an
// admin removed is still one; an admin's own object is not.
func TestASampleTheInventoryNoLongerHasIsStillReported(t *testing.T) {
	dropped := managed(stream("dropped", "1"), "4.20.0")
	delete(dropped.Annotations, desired.VersionAnnotation)
	unlabelled := stream("unlabelled", "1")
	unlabelled.Annotations = map[string]string{desired.RetiredAnnotation: "4.20.0"}
	droppedTemplate := &templatev1.Template{ObjectMeta: metav1.ObjectMeta{Name: "t-dropped", Labels: map[string]string{desired.ManagedLabel: "true"}}}
	retiredTemplate := &templatev1.Template{ObjectMeta: metav1.ObjectMeta{Name: "t-retired", Annotations: map[string]string{desired.RetiredAnnotation: "4.20.0"}}}
	own := &templatev1.Template{ObjectMeta: metav1.ObjectMeta{Name: "t-own"}}
	r := Build(Input{Config: managedConfig(), ImageStreams: []*imagev1.ImageStream{dropped, unlabelled, stream("own", "1")},
		Templates: []*templatev1.Template{droppedTemplate, retiredTemplate, own}})
	var got []string
	for _, s := range r.Samples {
		got = append(got, s.Name+" "+string(s.State))
	}
	want := []string{"dropped managed", "unlabelled retired", "t-dropped managed", "t-retired retired"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("samples %q, want %q", got, want)
	}
}

// TestASampleAnAdminMarkedUnmanagedIsUnmanaged: the managed label set to "false" under a Managed
// Config; its imports are still counted.
func TestASampleAnAdminMarkedUnmanagedIsUnmanaged(t *testing.T) {
	is := managed(stream("python", "3.9"), "4.20.0")
	is.Labels[desired.ManagedLabel] = "false"
	imported(is, "3.9", singleDigest, "registry.redhat.io/ubi9/python:3.9")
	tmpl := &templatev1.Template{ObjectMeta: metav1.ObjectMeta{Name: "t", Labels: map[string]string{desired.ManagedLabel: "false"}}}
	r := Build(Input{Config: managedConfig(), ImageStreams: []*imagev1.ImageStream{is}, Templates: []*templatev1.Template{tmpl},
		InventoryStreams: []*imagev1.ImageStream{stream("python", "3.9")}, InventoryTemplates: []string{"t"}})
	if s := r.Samples[0]; s.State != Unmanaged || s.Imported != 1 {
		t.Errorf("python: %s with %d imported, want unmanaged with 1", s.State, s.Imported)
	}
	if want := "1 imagestream: 1 imported; 1 template: 1 unmanaged"; r.Summary != want {
		t.Errorf("summary %q, want %q", r.Summary, want)
	}
}

// TestATagFollowingAnotherTagIsNamedWithItsStream: "latest" following "3.12" reads python:3.12,
// a tag of another stream keeps that stream's name, and a tag with no source (pushed to, not
// imported) has neither source nor mirror.
func TestATagFollowingAnotherTagIsNamedWithItsStream(t *testing.T) {
	is := managed(stream("python", "3.12"), "1")
	is.Spec.Tags = append(is.Spec.Tags,
		imagev1.TagReference{Name: "latest", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "3.12"}},
		imagev1.TagReference{Name: "elsewhere", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "ruby:1"}},
		imagev1.TagReference{Name: "pushed"})
	sets := mirrorsets.Sets{Tag: []*configv1.ImageTagMirrorSet{{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: configv1.ImageTagMirrorSetSpec{
		ImageTagMirrors: []configv1.ImageTagMirrors{{Source: "registry.redhat.io", Mirrors: []configv1.ImageMirror{"mirror.local/rh"}}}}}}}
	r := Build(Input{Config: managedConfig(), ImageStreams: []*imagev1.ImageStream{is}, Mirrors: &sets})
	got := map[string]string{}
	for _, tag := range r.Samples[0].Tags {
		got[tag.Name] = tag.From + " " + tag.Mirror
	}
	want := map[string]string{"3.12": "registry.redhat.io/ubi9/python:3.12 mirror.local/rh/ubi9/python:3.12",
		"latest": "python:3.12 mirror.local/rh/ubi9/python:3.12", "elsewhere": "ruby:1 ", "pushed": " "}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("source and mirror by tag %q, want %q", got, want)
	}
}

// TestAnImportRecordedByDigestNamesTheMirrorItCameThrough: the server records an import by
// digest; its repository still tells which mirror it came through.
func TestAnImportRecordedByDigestNamesTheMirrorItCameThrough(t *testing.T) {
	is := managed(stream("python", "3.9"), "1")
	imported(is, "3.9", listDigest, "mirror.local:5000/rh/ubi9/python@"+listDigest)
	sets := mirrorsets.Sets{Tag: []*configv1.ImageTagMirrorSet{{ObjectMeta: metav1.ObjectMeta{Name: "rh"}, Spec: configv1.ImageTagMirrorSetSpec{
		ImageTagMirrors: []configv1.ImageTagMirrors{{Source: "registry.redhat.io", Mirrors: []configv1.ImageMirror{"other.local/rh", "mirror.local:5000/rh"}}}}}}}
	r := Build(Input{Config: managedConfig(), ImageStreams: []*imagev1.ImageStream{is}, Mirrors: &sets})
	if got := r.Samples[0].Tags[0].Mirror; got != "mirror.local:5000/rh/ubi9/python:3.9" {
		t.Errorf("mirror %q, want the one the import's repository names", got)
	}
}

// TestAStreamIsFailingBeforePendingBeforeImported: a managed stream counts in the summary as
// failing when a tag fails, else pending when a tag waits for its import, else imported. Two
// streams are imported, so that no class's count can pass for another's.
func TestAStreamIsFailingBeforePendingBeforeImported(t *testing.T) {
	done := managed(stream("done", "1"), "1")
	imported(done, "1", singleDigest, "registry.redhat.io/ubi9/done:1")
	alsoDone := done.DeepCopy()
	alsoDone.Name = "also-done"
	waiting := managed(stream("waiting", "1", "2"), "1")
	imported(waiting, "1", singleDigest, "registry.redhat.io/ubi9/waiting:1")
	broken := managed(stream("broken", "1", "2"), "1")
	failed(broken, "1", "manifest unknown")
	r := Build(Input{Config: managedConfig(), ImageStreams: []*imagev1.ImageStream{done, alsoDone, waiting, broken}})
	counts := map[string][3]int{}
	for _, s := range r.Samples {
		counts[s.Name] = [3]int{s.Imported, s.Failing, s.Pending}
	}
	if want := map[string][3]int{"done": {1, 0, 0}, "also-done": {1, 0, 0}, "waiting": {1, 0, 1}, "broken": {0, 1, 1}}; !reflect.DeepEqual(counts, want) {
		t.Errorf("imported, failing, pending by stream %v, want %v", counts, want)
	}
	if want := "4 imagestreams: 2 imported, 1 failing, 1 pending; 0 templates"; r.Summary != want {
		t.Errorf("summary %q, want %q", r.Summary, want)
	}
}

// TestASkippedTagStillInTheSpecIsSkipped: before the operator creates the stream, or removes the
// tag from it, a tag the Config skips reads skipped, not pending.
func TestASkippedTagStillInTheSpecIsSkipped(t *testing.T) {
	cfg := managedConfig()
	cfg.Annotations = map[string]string{configspec.SkippedImageStreamTagsAnnotation: "python:3.8"}
	r := Build(Input{Config: cfg, InventoryStreams: []*imagev1.ImageStream{stream("python", "3.8", "3.9")}})
	want := []Tag{
		{Name: "3.8", State: TagSkipped, From: "registry.redhat.io/ubi9/python:3.8", Reason: "skipped by the Config's " + configspec.SkippedImageStreamTagsAnnotation},
		{Name: "3.9", State: TagPending, From: "registry.redhat.io/ubi9/python:3.9"},
	}
	if got := r.Samples[0].Tags; !reflect.DeepEqual(got, want) {
		t.Errorf("tags %+v, want %+v", got, want)
	}
}
