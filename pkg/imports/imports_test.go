package imports

import (
	"reflect"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRetryImportCarriesTheTagsPolicies: the retry asks for the tag's own import and reference
// policy, so that the server's write of the request's policy into the tag after a successful
// import changes nothing (a request without importMode would be defaulted to the cluster's mode
// and replace a PreserveOriginal tag's).
func TestRetryImportCarriesTheTagsPolicies(t *testing.T) {
	preserve := imagev1.TagImportPolicy{Insecure: true, Scheduled: true, ImportMode: imagev1.ImportModePreserveOriginal}
	source := imagev1.TagReferencePolicy{Type: imagev1.SourceTagReferencePolicy}
	is := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "ruby", Namespace: "openshift", UID: "uid-1", ResourceVersion: "42"}}
	is.Spec.Tags = []imagev1.TagReference{
		{Name: "3.3", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example/ubi9/ruby-33:latest"},
			ImportPolicy: preserve, ReferencePolicy: source},
		{Name: "latest", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "3.3"},
			ImportPolicy: imagev1.TagImportPolicy{ImportMode: imagev1.ImportModeLegacy}},
		{Name: "3.1", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example/ubi8/ruby-31:latest"},
			ImportPolicy:    imagev1.TagImportPolicy{ImportMode: imagev1.ImportModeLegacy},
			ReferencePolicy: imagev1.TagReferencePolicy{Type: imagev1.LocalTagReferencePolicy}},
	}

	isi := RetryImport(is, map[string]string{"latest": "not found", "3.1": "not found"})
	if isi == nil {
		t.Fatal("no ImageStreamImport")
	}
	if isi.Name != "ruby" || isi.Namespace != "openshift" || !isi.Spec.Import {
		t.Errorf("isi %s/%s import=%v, want openshift/ruby with import", isi.Namespace, isi.Name, isi.Spec.Import)
	}
	// Without them the server would create the stream were it deleted meanwhile.
	if isi.UID != "uid-1" || isi.ResourceVersion != "42" {
		t.Errorf("isi uid %q resourceVersion %q, want the stream's uid-1 and 42", isi.UID, isi.ResourceVersion)
	}
	want := []imagev1.ImageImportSpec{
		{From: corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example/ubi8/ruby-31:latest"}, To: &corev1.LocalObjectReference{Name: "3.1"},
			ImportPolicy:    imagev1.TagImportPolicy{ImportMode: imagev1.ImportModeLegacy},
			ReferencePolicy: imagev1.TagReferencePolicy{Type: imagev1.LocalTagReferencePolicy}},
		// latest follows its ImageStreamTag to 3.3, which is what gets imported, with 3.3's policies.
		{From: corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example/ubi9/ruby-33:latest"}, To: &corev1.LocalObjectReference{Name: "3.3"},
			ImportPolicy: preserve, ReferencePolicy: source},
	}
	if !reflect.DeepEqual(isi.Spec.Images, want) {
		t.Errorf("images =\n%+v\nwant\n%+v", isi.Spec.Images, want)
	}

	if got := RetryImport(is, map[string]string{"gone": "not found"}); got != nil {
		t.Errorf("a failed tag that is no longer in spec: %+v, want nil", got)
	}
}

// TestAwaitingRewrite: a failed tag waits for the operator's rewrite when the image it resolves
// to is about to change; ImageStreamTag references are followed on both sides.
func TestAwaitingRewrite(t *testing.T) {
	docker := func(name, ref string) imagev1.TagReference {
		return imagev1.TagReference{Name: name, From: &corev1.ObjectReference{Kind: "DockerImage", Name: ref}}
	}
	follows := func(name, target string) imagev1.TagReference {
		return imagev1.TagReference{Name: name, From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: target}}
	}
	stream := func(tags ...imagev1.TagReference) *imagev1.ImageStream {
		return &imagev1.ImageStream{Spec: imagev1.ImageStreamSpec{Tags: tags}}
	}
	cases := []struct {
		name       string
		live, want *imagev1.ImageStream
		failed     []string
		awaiting   []string
	}{
		{"same image: retried", stream(docker("3.3", "registry.redhat.io/ubi9/ruby-33")), stream(docker("3.3", "registry.redhat.io/ubi9/ruby-33")),
			[]string{"3.3"}, nil},
		{"new samplesRegistry: awaits the rewrite", stream(docker("3.3", "registry.redhat.io/ubi9/ruby-33")), stream(docker("3.3", "mirror.local:5000/ubi9/ruby-33")),
			[]string{"3.3"}, []string{"3.3"}},
		{"only the failed tags count", stream(docker("3.3", "registry.redhat.io/ubi9/ruby-33"), docker("3.1", "registry.redhat.io/ubi8/ruby-31")),
			stream(docker("3.3", "registry.redhat.io/ubi9/ruby-33"), docker("3.1", "mirror.local:5000/ubi8/ruby-31")),
			[]string{"3.3"}, nil},
		{"a tag following another follows its rewrite", stream(docker("3.3", "registry.redhat.io/ubi9/ruby-33"), follows("latest", "3.3")),
			stream(docker("3.3", "mirror.local:5000/ubi9/ruby-33"), follows("latest", "3.3")),
			[]string{"latest"}, []string{"latest"}},
		{"the live tag is gone (an admin removed it): awaits its return", stream(), stream(docker("3.3", "registry.redhat.io/ubi9/ruby-33")),
			[]string{"3.3"}, []string{"3.3"}},
		{"a tag the operator does not want: not its to wait for", stream(docker("custom", "quay.io/me/custom")), stream(),
			[]string{"custom"}, nil},
		{"a tag it does not want beside one it rewrites", stream(docker("custom", "quay.io/me/custom"), docker("3.3", "registry.redhat.io/ubi9/ruby-33")),
			stream(docker("3.3", "mirror.local:5000/ubi9/ruby-33")), []string{"custom", "3.3"}, []string{"3.3"}},
	}
	for _, tc := range cases {
		failed := map[string]string{}
		for _, tag := range tc.failed {
			failed[tag] = "not found"
		}
		if got := AwaitingRewrite(tc.live, tc.want, failed); !reflect.DeepEqual(got, tc.awaiting) {
			t.Errorf("%s: AwaitingRewrite = %v, want %v", tc.name, got, tc.awaiting)
		}
	}
}

// A tag may follow another as STREAM:TAG: the retry imports what that tag names.
func TestRetryImportFollowsAStreamQualifiedTag(t *testing.T) {
	is := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "ruby", Namespace: "openshift"}}
	is.Spec.Tags = []imagev1.TagReference{
		{Name: "3.3", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example/ubi9/ruby-33:latest"}},
		{Name: "latest", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "ruby:3.3"}},
	}
	isi := RetryImport(is, map[string]string{"latest": "not found"})
	if isi == nil || len(isi.Spec.Images) != 1 || isi.Spec.Images[0].To.Name != "3.3" || isi.Spec.Images[0].From.Name != "registry.example/ubi9/ruby-33:latest" {
		t.Errorf("retry of latest -> ruby:3.3: %+v", isi)
	}
}

// A tag that leads nowhere importable (no source, a loop of references) is not retried; a
// reference's empty stream name is this stream's.
func TestRetryImportLeavesOutWhatResolvesToNothing(t *testing.T) {
	follows := func(name, target string) imagev1.TagReference {
		return imagev1.TagReference{Name: name, From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: target}}
	}
	is := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "ruby", Namespace: "openshift"}}
	is.Spec.Tags = []imagev1.TagReference{
		{Name: "3.3", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example/ubi9/ruby-33:latest"}},
		{Name: "bare"}, follows("to-bare", "bare"), follows("a", "b"), follows("b", "a"), follows("short", ":3.3"),
	}
	if isi := RetryImport(is, map[string]string{"bare": "x", "to-bare": "x", "a": "x", "b": "x"}); isi != nil {
		t.Errorf("a retry of tags without a source or in a loop: %+v", isi.Spec.Images)
	}
	if isi := RetryImport(is, map[string]string{"short": "x"}); isi == nil || len(isi.Spec.Images) != 1 || isi.Spec.Images[0].To.Name != "3.3" {
		t.Errorf("retry of short -> :3.3: %+v", isi)
	}
}

func TestNotScheduledLeavesTheImportControllersTagsOut(t *testing.T) {
	is := &imagev1.ImageStream{Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{
		{Name: "2", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ocp-tools-4/jenkins-rhel9:v4"},
			ImportPolicy: imagev1.TagImportPolicy{Scheduled: true}},
		{Name: "latest", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "2"}},
		{Name: "1", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ocp-tools-4/jenkins-rhel8:v4"}},
		{Name: "old", From: &corev1.ObjectReference{Kind: "ImageStreamTag", Name: "1"}},
	}}}
	failed := map[string]string{"2": "x", "latest": "x", "1": "y", "old": "y", "gone": "z"}
	got := NotScheduled(is, failed)
	want := map[string]string{"1": "y", "old": "y", "gone": "z"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NotScheduled = %v, want %v", got, want)
	}
	if len(failed) != 5 {
		t.Errorf("NotScheduled changed its argument: %v", failed)
	}
}
