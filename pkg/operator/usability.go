package operator

import (
	"time"

	configinformers "github.com/openshift/client-go/config/informers/externalversions/config/v1"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	imageinformers "github.com/openshift/client-go/image/informers/externalversions/image/v1"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions/samples/v1"
	templateinformers "github.com/openshift/client-go/template/informers/externalversions/template/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
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
func newUsabilityController(cfg *rest.Config, inventories *inventories, configs samplesinformers.ConfigInformer, imageConfigs configinformers.ImageInformer,
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
	nodesMeta, err := metadata.NewForConfig(nodesConfig(cfg))
	if err != nil {
		return nil, nil, err
	}
	nodes := newNodeInformer(nodesMeta)
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

// nodesConfig is cfg for the Nodes' watch, over HTTP/1.1. On an HTTP/2 stream the server may
// send up to 4 MiB ahead of the reader (x/net's per-stream window), held on the client's heap
// until read; the first watch of 5,000 nodes' metadata comes while the initial sync keeps the
// operator busy, and the heap's high-water mark of that sync went from 15-16 MB to 12 MB over
// HTTP/1.1, where TCP's receive window follows what the informer reads (issue 56).
func nodesConfig(cfg *rest.Config) *rest.Config {
	nodes := rest.CopyConfig(cfg)
	nodes.NextProtos = []string{"http/1.1"}
	return nodes
}

// nodesResource are the Nodes, watched as metadata only (newNodeInformer).
var nodesResource = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

// newNodeInformer watches the Nodes' metadata and keeps only their architectures (TrimNode),
// from the kubernetes.io/arch label the kubelet sets from the architecture it runs on, the one
// it reports in status.nodeInfo. Every kubelet writes its node's status once a minute or more
// often; a whole Node, its status with the images it holds most of it, is about 6 KB to decode
// each time, its metadata a fraction of that (docs/performance.md, issue 56).
//
// It never resyncs: a resync hands the handler every cached node again, unchanged, which cannot
// change the set of architectures; with 5,000 nodes it is 5,000 updates at once, and the peak
// RSS of the bench's nodes run (resync 20 s) came with one (issue 56).
func newNodeInformer(meta metadata.Interface) cache.SharedIndexInformer {
	informer := metadatainformer.NewFilteredMetadataInformer(meta, nodesResource, "", 0, cache.Indexers{}, nil).Informer()
	_ = informer.SetTransform(usabilitycontrol.TrimNode) // cannot fail before the informer runs
	return informer
}
