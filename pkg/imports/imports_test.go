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
