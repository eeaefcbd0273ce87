package plugin

import (
	"errors"
	"testing"

	imagev1 "github.com/openshift/api/image/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
)

// Issue 58 item 6: the readers that run a few at a time still bring back a read's failure:
// status names the images it could not read, and usage ends on a list that leaves nothing to
// report.
func TestAFailedReadOfTheReadersIsReported(t *testing.T) {
	ruby := rubyStream()
	ruby.Status.Tags = []imagev1.NamedTagEventList{{Tag: "3.3-ubi9", Items: []imagev1.TagEvent{{Image: "sha256:0123"}}}}
	f := newFakeCluster(t, ruby)
	f.images.PrependReactor("get", "images", func(clienttesting.Action) (bool, kruntime.Object, error) {
		return true, nil, apierrors.NewInternalError(errors.New("etcd is away"))
	})
	f.run(t, "status", "-o", "json").Expect(t, ExitFailing, "architectures of imported images: images.image.openshift.io", "etcd is away")

	g := newFakeCluster(t, rubyStream())
	g.kube.PrependReactor("list", "pods", func(clienttesting.Action) (bool, kruntime.Object, error) {
		return true, nil, apierrors.NewInternalError(errors.New("etcd is away"))
	})
	g.run(t, "usage", "ruby").Expect(t, ExitUsage, "could not list pods", "etcd is away")
}
