// Package finalizer lets a deleted Config go once the samples it managed, and the import error
// ConfigMaps, are gone. The samples and imports controllers delete them (a Config being deleted puts
// the samples in the Removing mode); this controller waits for the listers to show none left and
// for the samples controller's syncs under way to end, checks the server once, then drops the
// finalizer.
package finalizer

import (
	"context"
	"time"

	samplesv1 "github.com/openshift/api/samples/v1"
	imageclient "github.com/openshift/client-go/image/clientset/versioned/typed/image/v1"
	imageinformers "github.com/openshift/client-go/image/informers/externalversions/image/v1"
	imagelisters "github.com/openshift/client-go/image/listers/image/v1"
	samplesclient "github.com/openshift/client-go/samples/clientset/versioned/typed/samples/v1"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions/samples/v1"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	templateclient "github.com/openshift/client-go/template/clientset/versioned/typed/template/v1"
	templateinformers "github.com/openshift/client-go/template/informers/externalversions/template/v1"
	templatelisters "github.com/openshift/client-go/template/listers/template/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// Controller removes the Config's finalizer when its cleanup is done.
type Controller struct {
	// busy tells whether a samples sync is under way: one that read the Config before its
	// deletion may be creating a sample the caches cannot show yet.
	busy         func() bool
	live         LiveSamples
	configs      sampleslisters.ConfigLister
	imageStreams imagelisters.ImageStreamNamespaceLister
	templates    templatelisters.TemplateNamespaceLister
	configMaps   corelisters.ConfigMapNamespaceLister
	client       samplesclient.ConfigInterface
	// recheck spaces the looks again at a cleanup held back by work whose end no event tells
	// (a samples sync under way, a create the caches do not show yet): soon at first, then
	// less and less often.
	recheck *flowcontrol.Backoff
}

// New wires the controller.
func New(configInformer samplesinformers.ConfigInformer, imageStreamInformer imageinformers.ImageStreamInformer, templateInformer templateinformers.TemplateInformer,
	configMapInformer coreinformers.ConfigMapInformer, busy func() bool, live LiveSamples, client samplesclient.SamplesV1Interface, recorder events.Recorder) factory.Controller {
	c := &Controller{
		busy:         busy,
		live:         live,
		configs:      configInformer.Lister(),
		imageStreams: imageStreamInformer.Lister().ImageStreams(names.SamplesNamespace),
		templates:    templateInformer.Lister().Templates(names.SamplesNamespace),
		configMaps:   configMapInformer.Lister().ConfigMaps(names.OperatorNamespace),
		client:       client.Configs(),
		recheck:      flowcontrol.NewBackOff(busyRecheck, maxBusyRecheck),
	}
	return factory.New().
		WithSync(c.sync).
		WithInformers(configInformer.Informer()).
		// Only deletions of samples can complete a cleanup.
		WithFilteredEventsInformers(isDeletionOrOwned, imageStreamInformer.Informer(), templateInformer.Informer()).
		WithFilteredEventsInformers(isImportRecord, configMapInformer.Informer()).
		ToController("ConfigFinalizerController", recorder)
}

func isDeletionOrOwned(obj interface{}) bool {
	m, ok := obj.(metav1.Object)
	return !ok || m.GetLabels()[desired.ManagedLabel] == "true"
}

func isImportRecord(obj interface{}) bool {
	m, ok := obj.(metav1.Object)
	return !ok || m.GetLabels()[imports.ErrorLabel] == "true"
}

func (c *Controller) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	cfg, err := c.configs.Get(names.ConfigName)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if cfg.DeletionTimestamp == nil || !hasFinalizer(cfg) {
		return nil
	}
	owned := labels.SelectorFromSet(labels.Set{desired.ManagedLabel: "true"})
	streams, err := c.imageStreams.List(owned)
	if err != nil {
		return err
	}
	templates, err := c.templates.List(owned)
	if err != nil {
		return err
	}
	records, err := c.configMaps.List(labels.SelectorFromSet(labels.Set{imports.ErrorLabel: "true"}))
	if err != nil {
		return err
	}
	if len(streams)+len(templates)+len(records) > 0 {
		return nil // the samples and imports controllers are deleting them; their delete events bring us back
	}
	if c.busy() {
		c.lookAgain(syncCtx, cfg)
		return nil
	}
	// A create that landed after the caches were read: once per deletion, so from the server.
	left, err := c.live.OwnedSamples(ctx)
	if err != nil {
		return err
	}
	if left > 0 {
		// Their add events put them in the caches; the samples controller deletes them and
		// their delete events bring us back. The look again is for an event missed.
		c.lookAgain(syncCtx, cfg)
		return nil
	}
	c.recheck.Reset(string(cfg.UID))
	updated := cfg.DeepCopy()
	updated.Finalizers = nil
	for _, f := range cfg.Finalizers {
		if f != samplesv1.ConfigFinalizer {
			updated.Finalizers = append(updated.Finalizers, f)
		}
	}
	if _, err := c.client.Update(ctx, updated, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	syncCtx.Recorder().Eventf("ConfigFinalized", "the managed samples are deleted; Config %s may go", cfg.Name)
	return nil
}

// lookAgain requeues the cleanup after the next wait of its backoff.
func (c *Controller) lookAgain(syncCtx factory.SyncContext, cfg *samplesv1.Config) {
	id := string(cfg.UID)
	c.recheck.Next(id, c.recheck.Clock.Now())
	syncCtx.Queue().AddAfter(factory.DefaultQueueKey, c.recheck.Get(id))
}

// busyRecheck is how soon a cleanup held back by work under way is first looked at again;
// each look that finds it still held back doubles the wait, up to maxBusyRecheck.
const (
	busyRecheck    = 100 * time.Millisecond
	maxBusyRecheck = 5 * time.Second
)

// LiveSamples counts on the server the samples labelled as the operator's.
type LiveSamples interface {
	OwnedSamples(ctx context.Context) (int, error)
}

// ServerSamples is LiveSamples through the image and template clients.
type ServerSamples struct {
	ImageStreams imageclient.ImageStreamInterface
	Templates    templateclient.TemplateInterface
}

// OwnedSamples lists, without their content, the owned samples of both kinds.
func (s ServerSamples) OwnedSamples(ctx context.Context) (int, error) {
	opts := metav1.ListOptions{LabelSelector: desired.ManagedLabel + "=true", Limit: 1}
	streams, err := s.ImageStreams.List(ctx, opts)
	if err != nil {
		return 0, err
	}
	templates, err := s.Templates.List(ctx, opts)
	if err != nil {
		return 0, err
	}
	return len(streams.Items) + len(templates.Items), nil
}

func hasFinalizer(cfg *samplesv1.Config) bool {
	for _, f := range cfg.Finalizers {
		if f == samplesv1.ConfigFinalizer {
			return true
		}
	}
	return false
}
