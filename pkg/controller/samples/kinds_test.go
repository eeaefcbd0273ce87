package samples

import (
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/ownwrites"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

var managedFields = []metav1.ManagedFieldsEntry{{Manager: "cluster-samples-operator"}}

// TestAWrittenSampleIsSeenAsTheInformerWillShowIt: the next sync finds the server's answer to the
// writer's create before the informer delivers it, held as the informer holds samples (a template
// trimmed, no managedFields), while the answer itself stays whole for what is learned from it.
func TestAWrittenSampleIsSeenAsTheInformerWillShowIt(t *testing.T) {
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	tmpls := templates{ownwrites.NewForStore[*templatev1.Template](store, names.SamplesNamespace, templatev1.Resource("templates"))}
	got := &templatev1.Template{
		ObjectMeta: metav1.ObjectMeta{Namespace: names.SamplesNamespace, Name: "rails", ResourceVersion: "4", ManagedFields: managedFields},
		Message:    "hello",
		Objects:    []runtime.RawExtension{{Raw: []byte(`{"kind":"Service","apiVersion":"v1"}`)}},
	}
	tmpls.wrote(got)
	seen, unseen, err := tmpls.cached("rails")
	if err != nil || !unseen || !desired.IsTrimmed(seen) || seen.ManagedFields != nil {
		t.Errorf("template written, not delivered: %v, unseen %v, trimmed %v, managedFields %v; want it trimmed, unseen, without managedFields",
			err, unseen, desired.IsTrimmed(seen), seen.ManagedFields)
	}
	if desired.IsTrimmed(got) || got.ManagedFields == nil {
		t.Error("the server's answer was trimmed in place: what is learned from it would be wrong")
	}

	streams := imageStreams{ownwrites.NewForStore[*imagev1.ImageStream](store, names.SamplesNamespace, imagev1.Resource("imagestreams"))}
	answer := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Namespace: names.SamplesNamespace, Name: "ruby", ResourceVersion: "5", ManagedFields: managedFields}}
	streams.wrote(answer)
	if seen, unseen, err := streams.cached("ruby"); err != nil || !unseen || seen.ResourceVersion != "5" || seen.ManagedFields != nil {
		t.Errorf("imagestream written, not delivered: %v, %v, %v", seen, unseen, err)
	}
	if answer.ManagedFields == nil {
		t.Error("the server's answer lost its managedFields in place")
	}
}
