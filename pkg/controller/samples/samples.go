// Package samples keeps each sample imagestream and template in the openshift namespace as the
// Config asks: created, reverted when it drifts, labelled unmanaged when skipped, deleted when
// Removed. One queue key per object, so a drift is reverted by the worker that sees its event.
package samples

import (
	"context"
	"fmt"
	"strings"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	configinformers "github.com/openshift/client-go/config/informers/externalversions/config/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	imageclient "github.com/openshift/client-go/image/clientset/versioned/typed/image/v1"
	imageinformers "github.com/openshift/client-go/image/informers/externalversions/image/v1"
	imagelisters "github.com/openshift/client-go/image/listers/image/v1"
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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/common"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
)

const (
	imageStreamPrefix = "imagestream/"
	templatePrefix    = "template/"
)

// Controller reconciles one sample per sync.
type Controller struct {
	version     string
	inventories common.Inventories
	config      *common.ConfigReader

	configs      sampleslisters.ConfigLister
	images       configlisters.ImageLister
	imageStreams imagelisters.ImageStreamNamespaceLister
	templates    templatelisters.TemplateNamespaceLister

	imageStreamClient imageclient.ImageStreamInterface
	templateClient    templateclient.TemplateInterface
}

// New wires the controller to its informers.
func New(
	version string,
	inventories common.Inventories,
	configInformer samplesinformers.ConfigInformer,
	imageConfigInformer configinformers.ImageInformer,
	imageStreamInformer imageinformers.ImageStreamInformer,
	templateInformer templateinformers.TemplateInformer,
	imageClient imageclient.ImageV1Interface,
	templateClient templateclient.TemplateV1Interface,
	recorder events.Recorder,
) factory.Controller {
	c := &Controller{
		version:           version,
		inventories:       inventories,
		configs:           configInformer.Lister(),
		images:            imageConfigInformer.Lister(),
		imageStreams:      imageStreamInformer.Lister().ImageStreams(common.SamplesNamespace),
		templates:         templateInformer.Lister().Templates(common.SamplesNamespace),
		imageStreamClient: imageClient.ImageStreams(common.SamplesNamespace),
		templateClient:    templateClient.Templates(common.SamplesNamespace),
	}
	c.config = common.NewConfigReader(c.configs, c.images, inventories)
	return factory.New().
		WithSync(c.sync).
		WithInformersQueueKeysFunc(func(obj runtime.Object) []string {
			return []string{imageStreamPrefix + obj.(metav1.Object).GetName()}
		}, imageStreamInformer.Informer()).
		WithInformersQueueKeysFunc(func(obj runtime.Object) []string {
			return []string{templatePrefix + obj.(metav1.Object).GetName()}
		}, templateInformer.Informer()).
		// A change to the Config or to the cluster image configuration can concern every sample.
		WithInformersQueueKeysFunc(c.allKeys, configInformer.Informer(), imageConfigInformer.Informer()).
		ToController("SamplesController", recorder)
}

// allKeys lists every sample the Config may concern: the inventory's, and the live ones the
// operator labelled as its own (so that Removed also deletes samples an upgrade dropped).
func (c *Controller) allKeys(runtime.Object) []string {
	cfg, err := c.configs.Get(configspec.ConfigName)
	if err != nil {
		return nil
	}
	var keys []string
	seen := map[string]bool{}
	add := func(key string) {
		if !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
	}
	if inv, err := c.inventories.For(configspec.Architecture(&cfg.Spec)); err == nil {
		// Alternate the kinds so that both finish together instead of templates waiting behind
		// every imagestream.
		streams, templates := inv.ImageStreamNames(), inv.TemplateNames()
		for i := 0; i < len(streams) || i < len(templates); i++ {
			if i < len(streams) {
				add(imageStreamPrefix + streams[i])
			}
			if i < len(templates) {
				add(templatePrefix + templates[i])
			}
		}
	}
	owned := labels.SelectorFromSet(labels.Set{desired.ManagedLabel: "true"})
	if list, err := c.imageStreams.List(owned); err == nil {
		for _, is := range list {
			add(imageStreamPrefix + is.Name)
		}
	}
	if list, err := c.templates.List(owned); err == nil {
		for _, t := range list {
			add(templatePrefix + t.Name)
		}
	}
	return keys
}

func (c *Controller) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	key := syncCtx.QueueKey()
	cfg, eval, found, err := c.config.Current()
	if err != nil || !found {
		return err
	}
	switch {
	case strings.HasPrefix(key, imageStreamPrefix):
		return c.syncImageStream(ctx, syncCtx.Recorder(), cfg, eval, strings.TrimPrefix(key, imageStreamPrefix))
	case strings.HasPrefix(key, templatePrefix):
		return c.syncTemplate(ctx, syncCtx.Recorder(), cfg, eval, strings.TrimPrefix(key, templatePrefix))
	}
	return nil // the factory's default key (periodic resync) needs no work: every key has its own sync
}

func (c *Controller) syncImageStream(ctx context.Context, recorder events.Recorder, cfg *samplesv1.Config, eval common.Evaluation, name string) error {
	var want *imagev1.ImageStream
	skipped := false
	if eval.Inventory != nil {
		want, skipped, _ = desired.ImageStream(&cfg.Spec, eval.Inventory, c.version, name)
	}
	return reconcile(ctx, recorder, "ImageStream", name, c.version, c.imageStreams.Get, c.imageStreamClient,
		func(live *imagev1.ImageStream) desired.ImageStreamAction {
			return desired.ForImageStream(eval.Mode, want, skipped, live)
		})
}

func (c *Controller) syncTemplate(ctx context.Context, recorder events.Recorder, cfg *samplesv1.Config, eval common.Evaluation, name string) error {
	var want *templatev1.Template
	skipped := false
	if eval.Inventory != nil {
		want, skipped, _ = desired.Template(&cfg.Spec, eval.Inventory, c.version, name)
	}
	return reconcile(ctx, recorder, "Template", name, c.version, c.templates.Get, c.templateClient,
		func(live *templatev1.Template) desired.TemplateAction {
			return desired.ForTemplate(eval.Mode, want, skipped, live)
		})
}

// writer is the part of a typed client the samples controller uses.
type writer[P any] interface {
	Create(ctx context.Context, obj P, opts metav1.CreateOptions) (P, error)
	Update(ctx context.Context, obj P, opts metav1.UpdateOptions) (P, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// reconcile reads the live object from the lister, asks pkg/desired for the write, and makes it.
func reconcile[P desired.Object[P]](
	ctx context.Context, recorder events.Recorder, kind, name, version string,
	get func(string) (P, error), client writer[P], decide func(live P) desired.Action[P],
) error {
	var absent P
	live, err := get(name)
	if apierrors.IsNotFound(err) {
		live = absent
	} else if err != nil {
		return err
	}
	action := decide(live)
	switch action.Verb {
	case desired.None:
		return nil
	case desired.Create:
		_, err = client.Create(ctx, action.Object, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil // its add event brings it back here with the live object
		}
	case desired.Update, desired.MarkUnmanaged:
		_, err = client.Update(ctx, action.Object, metav1.UpdateOptions{})
	case desired.Delete:
		uid := live.GetUID()
		// Delete the object the decision was made on, not one recreated since.
		err = client.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if apierrors.IsNotFound(err) {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("%s %s %s: %w", action.Verb, kind, name, err)
	}
	wasCurrent := live != absent && live.GetAnnotations()[desired.VersionAnnotation] == version
	report(recorder, kind, name, action.Verb, wasCurrent)
	return nil
}

// report logs every write and tells the admin, through an event, when a sample at the current
// version was changed back: someone edited or deleted what the operator manages.
func report(recorder events.Recorder, kind, name string, verb desired.Verb, wasCurrent bool) {
	klog.V(2).InfoS("Wrote sample", "kind", kind, "name", name, "action", verb)
	switch {
	case verb == desired.Update && wasCurrent:
		recorder.Eventf("SampleReverted", "%s openshift/%s was changed; the operator put back the fields it manages", kind, name)
	case verb == desired.MarkUnmanaged:
		recorder.Eventf("SampleSkipped", "%s openshift/%s is skipped by the Config: labelled %s=false and left alone", kind, name, desired.ManagedLabel)
	}
}
