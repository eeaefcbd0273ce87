package operator

import (
	"context"
	"time"

	configinformers "github.com/openshift/client-go/config/informers/externalversions/config/v1"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	imageinformers "github.com/openshift/client-go/image/informers/externalversions/image/v1"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions/samples/v1"
	templateinformers "github.com/openshift/client-go/template/informers/externalversions/template/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/usabilitycontrol"
)

// apiServicesResource are the APIServices: kube-apiserver registers one for every group it
// serves, its own, the CRDs' and the aggregated servers'.
var apiServicesResource = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// newUsabilityController builds the controller that judges whether each sample can work here,
// and the APIService informer (metadata only) that tells it when discovery may have changed;
// the caller runs the informer.
func newUsabilityController(cfg *rest.Config, core corev1client.CoreV1Interface, inventories *inventories, configs samplesinformers.ConfigInformer, imageConfigs configinformers.ImageInformer,
	streams imageinformers.ImageStreamInformer, templates templateinformers.TemplateInformer, verdicts *usabilitycontrol.Verdicts, resync time.Duration,
	recorder events.Recorder) (factory.Controller, []cache.SharedIndexInformer, error) {
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	apiServices := metadatainformer.NewFilteredMetadataInformer(meta, apiServicesResource, "", resync, cache.Indexers{}, nil).Informer()
	if err := apiServices.SetTransform(dropManagedFields); err != nil {
		return nil, nil, err
	}
	// Images are read one by one, by digest, the first time a tag points at them: their
	// architectures decide whether the tag can run on the nodes.
	images, err := imageclient.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	nodes := newNodeInformer(core, resync)
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	// Each group/version the templates use is asked of its own server, not read from
	// kube-apiserver's aggregated document, which it refreshes on its own schedule: a group
	// whose server just turned Available is listed at once.
	c, err := usabilitycontrol.New(inventories, usabilitycontrol.Informers{
		Config: configs, ImageConfig: imageConfigs, ImageStream: streams, Template: templates, APIServices: apiServices, Nodes: nodes,
	}, disc, images.ImageV1().Images(), verdicts, recorder)
	return c, []cache.SharedIndexInformer{apiServices, nodes}, err
}

// newNodeInformer watches the Nodes through the operator's core client and keeps only their
// architectures (TrimNode): 5,000 nodes then cost under 1 MB. client-go's NewNodeInformer would
// want the whole clientset, whose construction runs code in every group's client package and
// keeps those pages of the binary resident (kubeclients.go).
func newNodeInformer(core corev1client.CoreV1Interface, resync time.Duration) cache.SharedIndexInformer {
	nodes := core.Nodes()
	lw := &cache.ListWatch{
		ListWithContextFunc:  func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return nodes.List(ctx, o) },
		WatchFuncWithContext: nodes.Watch,
	}
	informer := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, core), &corev1.Node{}, resync, cache.Indexers{})
	_ = informer.SetTransform(usabilitycontrol.TrimNode) // cannot fail before the informer runs
	return informer
}
