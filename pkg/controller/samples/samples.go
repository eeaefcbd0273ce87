// Package samples keeps each sample imagestream and template in the openshift namespace as the
// Config asks: created, reverted when it drifts, labelled unmanaged when skipped, deleted when
// Removed. One queue key per object, so a drift is reverted by the worker that sees its event.
package samples

import (
	"context"
	"strings"
	"sync/atomic"

	imagev1 "github.com/openshift/api/image/v1"
	templatev1 "github.com/openshift/api/template/v1"
	configinformers "github.com/openshift/client-go/config/informers/externalversions/config/v1"
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/access"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/configreader"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/eventfilter"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/ownwrites"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
)

const (
	imageStreamPrefix = "imagestream/"
	templatePrefix    = "template/"
)

// Controller reconciles one sample per sync.
type Controller struct {
	version     string
	inventories configspec.Inventories
	config      *configreader.Reader

	configs      sampleslisters.ConfigLister
	imageStreams imagelisters.ImageStreamNamespaceLister
	templates    templatelisters.TemplateNamespaceLister

	streamKind     imageStreams
	templateKind   templates
	streamWriter   *samplewriter.Writer[*imagev1.ImageStream]
	templateWriter *samplewriter.Writer[*templatev1.Template]

	// normalized counts each owned field the server was found to normalize (kind, name,
	// field); overBudget each revert held back by the budget (kind, name).
	normalized func(kind, name, field string)
	overBudget func(kind, name string)
	// access tells when reviews found the samples grant missing: writes are held until an
	// administrator grants it, since each would only be refused again.
	access    Access
	refusals  *refusal.Store
	activity  *Activity
	usability Usability
}

// Usability is what the operator says on each sample about whether it can work on this cluster
// (pkg/controller/usabilitycontrol.Verdicts).
type Usability interface {
	// Ready: the first verdicts are made. Until then no sample is written: one created before
	// would be created unmarked and marked a moment later.
	Ready() bool
	Marks(kind, name string) desired.Marks
	// OnChange calls f, which must not block, with each sample (kind, name) whose marks changed,
	// and once with every sample when the first verdicts are made.
	OnChange(f func(kind, name string))
}

// Activity tells whether a sync is under way. A sync that read the Config before its deletion
// reached the cache may still create a sample; the finalizer waits for it, or that sample would
// outlive its Config and be adopted by the next.
type Activity struct{ syncs atomic.Int64 }

// Busy reports whether a sync is under way.
func (a *Activity) Busy() bool { return a.syncs.Load() > 0 }

// Access is the operator's verdict on its own access (pkg/controller/accesscontrol.Tracker).
type Access interface {
	Verdict() access.Verdict
	// OnChange calls f, which must not block, each time the verdict changes.
	OnChange(f func())
}

// Informers are the caches the controller reads.
type Informers struct {
	Config      samplesinformers.ConfigInformer
	ImageConfig configinformers.ImageInformer
	ImageStream imageinformers.ImageStreamInformer
	Template    templateinformers.TemplateInformer
}

// Deps are what the controller is built from.
type Deps struct {
	Version        string
	Inventories    configspec.Inventories
	Informers      Informers
	ImageClient    imageclient.ImageV1Interface
	TemplateClient templateclient.TemplateV1Interface
	// Records are the sample writer's, shared with the status controller.
	Records *samplewriter.Book
	// Refusals are the writes the API server refused, each retried on its own backoff;
	// RetryRefused tells when what may have refused them changes.
	Refusals     *refusal.Store
	RetryRefused RetryTriggers
	Access       Access
	// Activity counts the syncs under way, for the finalizer.
	Activity   *Activity
	Usability  Usability
	Normalized func(kind, name, field string)
	OverBudget func(kind, name string)
	Recorder   events.Recorder
}

// newController builds the controller New wires, so that a test can sync it by hand.
func newController(d Deps) *Controller {
	inf := d.Informers
	c := &Controller{
		version:        d.Version,
		inventories:    d.Inventories,
		configs:        inf.Config.Lister(),
		imageStreams:   inf.ImageStream.Lister().ImageStreams(names.SamplesNamespace),
		templates:      inf.Template.Lister().Templates(names.SamplesNamespace),
		streamKind:     imageStreams{ownwrites.New[*imagev1.ImageStream](inf.ImageStream.Informer(), names.SamplesNamespace, imagev1.Resource("imagestreams"))},
		templateKind:   templates{ownwrites.New[*templatev1.Template](inf.Template.Informer(), names.SamplesNamespace, templatev1.Resource("templates"))},
		streamWriter:   samplewriter.New(samplewriter.ImageStreamKind, d.ImageClient.ImageStreams(names.SamplesNamespace), d.Records.ImageStreams, d.Refusals),
		templateWriter: samplewriter.New(samplewriter.TemplateKind, d.TemplateClient.Templates(names.SamplesNamespace), d.Records.Templates, d.Refusals),
		normalized:     d.Normalized,
		overBudget:     d.OverBudget,
		access:         d.Access,
		refusals:       d.Refusals,
		activity:       d.Activity,
		usability:      d.Usability,
	}
	c.config = configreader.New(c.configs, inf.ImageConfig.Lister(), d.Inventories)
	return c
}

// New wires the controller to its informers.
func New(d Deps) factory.Controller {
	inf := d.Informers
	c := newController(d)
	return factory.New().
		WithSync(c.sync).
		WithPostStartHooks(func(ctx context.Context, syncCtx factory.SyncContext) error {
			// Writes held for missing access resume when the grant is no longer found missing:
			// nothing else the operator watches changes when an administrator binds it.
			c.access.OnChange(func() {
				if c.writesHeld() {
					return
				}
				c.refusals.RetryNow()
				for _, key := range c.allKeys(nil) {
					syncCtx.Queue().Add(key)
				}
			})
			// A verdict on whether a sample can work here changes what is written on it.
			var verdictsMade atomic.Bool
			c.usability.OnChange(func(kind, name string) {
				syncCtx.Queue().Add(queueKey(kind, name))
				if c.usability.Ready() && verdictsMade.CompareAndSwap(false, true) {
					// Every sync before the first verdicts was put off, and the verdicts name only
					// the inventory's samples: a live sample an upgrade retired comes back here.
					for _, key := range c.allKeys(nil) {
						syncCtx.Queue().Add(key)
					}
				}
			})
			// A refused write waits out its backoff unless what may have refused it changes.
			return d.RetryRefused.OnChange(func() {
				for _, r := range c.refusals.RetryNow() {
					syncCtx.Queue().Add(queueKey(r.Kind, r.Name))
				}
			})
		}).
		WithInformersQueueKeysFunc(func(obj runtime.Object) []string {
			return []string{imageStreamPrefix + obj.(metav1.Object).GetName()}
		}, inf.ImageStream.Informer()).
		WithInformersQueueKeysFunc(func(obj runtime.Object) []string {
			return []string{templatePrefix + obj.(metav1.Object).GetName()}
		}, inf.Template.Informer()).
		// A change to the Config or to the cluster image configuration can concern every sample;
		// the status controller's writes of the Config's status do not (configspec.ReadChanged).
		WithInformersQueueKeysFunc(c.allKeys, eventfilter.Updates(inf.Config.Informer(), configspec.ReadChanged), inf.ImageConfig.Informer()).
		ToController("SamplesController", d.Recorder)
}

// RetryTriggers calls f, which must not block, whenever something changes that may have made the
// API server refuse a sample write: the ResourceQuotas and LimitRanges of openshift.
type RetryTriggers interface {
	OnChange(f func()) error
}

func queueKey(kind, name string) string {
	if kind == samplewriter.TemplateKind {
		return templatePrefix + name
	}
	return imageStreamPrefix + name
}

// allKeys lists every sample the Config may concern: the inventory's, and the live ones the
// operator labelled as its own (so that Removed also deletes samples an upgrade dropped).
func (c *Controller) allKeys(runtime.Object) []string {
	cfg, err := c.configs.Get(names.ConfigName)
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
	// A refused sample the Config no longer asks for (another architecture's inventory lacks
	// it) is neither above: its sync finds nothing to write and drops the refusal, which would
	// otherwise keep the alert firing and date RefusedSince back to it.
	for _, r := range c.refusals.Samples() {
		add(queueKey(r.Kind, r.Name))
	}
	return keys
}

// writesHeld is true while reviews find the samples grant missing.
func (c *Controller) writesHeld() bool {
	return c.access.Verdict().State(access.Samples) == access.Missing
}

func (c *Controller) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	c.activity.syncs.Add(1)
	defer c.activity.syncs.Add(-1)
	key := syncCtx.QueueKey()
	cfg, eval, found, err := c.config.Current()
	if err != nil || !found {
		return err
	}
	if !c.usability.Ready() {
		return nil // the first verdicts bring every sample back (Usability.OnChange)
	}
	if c.writesHeld() {
		// Where every user may read the samples the caches fill without the grant; each write
		// would be refused, and the Config status already names the missing grant. The verdict's
		// change brings every key back.
		return nil
	}
	switch {
	case strings.HasPrefix(key, imageStreamPrefix):
		return reconcile(ctx, c.newSync(syncCtx, cfg, eval, strings.TrimPrefix(key, imageStreamPrefix)), c.streamKind, c.streamWriter)
	case strings.HasPrefix(key, templatePrefix):
		return reconcile(ctx, c.newSync(syncCtx, cfg, eval, strings.TrimPrefix(key, templatePrefix)), c.templateKind, c.templateWriter)
	}
	return nil // the factory's default key (periodic resync) needs no work: every key has its own sync
}
