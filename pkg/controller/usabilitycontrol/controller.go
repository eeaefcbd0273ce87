// Package usabilitycontrol carries out pkg/usability: it observes what decides whether each
// sample can work on this cluster (the kinds discovery lists, the live imagestreams, the Config),
// keeps the verdicts for the controllers that act on them, and tells the admin once per cause.
package usabilitycontrol

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	configinformers "github.com/openshift/client-go/config/informers/externalversions/config/v1"
	imageinformers "github.com/openshift/client-go/image/informers/externalversions/image/v1"
	imagelisters "github.com/openshift/client-go/image/listers/image/v1"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions/samples/v1"
	templateinformers "github.com/openshift/client-go/template/informers/externalversions/template/v1"
	templatelisters "github.com/openshift/client-go/template/listers/template/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/configreader"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/eventfilter"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/inventory"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// Discovery reads the kinds one group/version serves (client-go's discovery client). The
// controller asks only for the group/versions the templates create objects of, and again only
// after an APIService changed.
type Discovery interface {
	ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error)
}

// Informers are the caches the controller reads.
type Informers struct {
	Config      samplesinformers.ConfigInformer
	ImageConfig configinformers.ImageInformer
	ImageStream imageinformers.ImageStreamInformer
	// Template: the retired templates, whole in the cache (desired.TrimTemplate), are judged
	// with the inventory's; the others are read at the start (toldByMarks), and their changes
	// change no verdict.
	Template templateinformers.TemplateInformer
	// APIServices (metadata only): a group served or no longer served, an aggregated server
	// turning Available, changes one of them, and so what discovery lists.
	APIServices cache.SharedIndexInformer
	// Nodes (TrimNode keeps only their architectures) feed NodeArchitectures.
	Nodes cache.SharedIndexInformer
}

// Controller makes the verdicts.
type Controller struct {
	inventories configspec.Inventories
	config      *configreader.Reader
	streams     imagelisters.ImageStreamNamespaceLister
	discovery   Discovery
	// discoveryStale: an APIService changed since discovery was last read. negativesStale: the
	// APIService informer resynced while haveNegatives, the last read's finding that a group
	// asked for is not served or could not be read.
	discoveryStale atomic.Bool
	negativesStale atomic.Bool
	haveNegatives  atomic.Bool
	// kinds are the kinds of each group/version as its last successful read found them (an
	// empty set: not served), kept until a read succeeds again: a failed read (an aggregated
	// server restarting, kube-apiserver catching up) says nothing of what is served, and
	// forgetting the answer would unmark every template for a moment. Hence not client-go's
	// memory-cached discovery: its Invalidate drops every answer, so one read failing after an
	// APIService change would lose the last answer (issue 56 item 4). fresh are the
	// group/versions read since their answer was made stale; failed, those whose last read
	// failed, judged by their last answer (or, never read, by no kind: their group is unknown)
	// until a recheck or an APIService change brings a new read. One worker reads and writes
	// them.
	kinds  map[schema.GroupVersion]sets.Set[string]
	fresh  sets.Set[schema.GroupVersion]
	failed sets.Set[schema.GroupVersion]
	// recheck spaces the reads again of the group/versions found not served or unreadable
	// since an APIService changed, until recheckAt; see served.
	recheck     *flowcontrol.Backoff
	recheckAt   time.Time
	recheckDone bool
	verdicts    *Verdicts
	nodes       *NodeArchitectures
	// nodesListed: the nodes' handler has had the informer's whole first list; nodesRefused is
	// set once their list or watch was refused. The verdicts wait for one of them (watchNodes).
	nodesListed  func() bool
	nodesRefused atomic.Bool
	images       *ImageArchitectures
	// streamVersions are the resourceVersions of the managed streams at the last sync: a stream
	// that changed may have imported an image answered NotFound before. One worker reads them.
	streamVersions map[string]string
	// enqueue, set once the controller runs, brings the sync back when an APIService or the
	// nodes' architectures change.
	enqueue atomic.Pointer[func()]
	// facts are the templates' of the inventory factsFor; one worker reads and writes them.
	factsFor *inventory.Inventory
	facts    map[string]usability.Facts
	// tags are every "stream:tag" of the inventory tagsFor (tagsOf); one worker reads them.
	tagsFor *inventory.Inventory
	tags    sets.Set[string]
	// retiredFacts are the live retired templates' facts, read again when one changes.
	retiredFacts map[string]retiredFacts
	// templates are the live templates (trimmed: desired.TrimTemplate keeps their annotations),
	// read with the live streams for the marks they carry (toldByMarks).
	templates templatelisters.TemplateNamespaceLister
	// told are the causes the admin was told of, by message; nil until they are read again from
	// the live samples' marks, at the start and after each silence (see sync).
	told map[string]toldCause
}

// StreamEventDelay is how long the controller waits after an imagestream event before it judges
// the samples again: a burst of imports (every stream at install, 530 in the 10x bench) is
// judged a few times instead of once per import, each judging every sample.
const StreamEventDelay = 250 * time.Millisecond

// New wires the controller. Its single key's sync judges every sample at once: a verdict on a
// template depends on the streams it names, and a discovery change concerns every template.
func New(inventories configspec.Inventories, inf Informers, disc Discovery, images ImageGetter, verdicts *Verdicts, recorder events.Recorder) (factory.Controller, error) {
	c, err := newController(inventories, inf, disc, images, verdicts)
	if err != nil {
		return nil, err
	}
	return factory.New().
		WithSync(c.sync).
		// The Config's resync is the sync's safety net; the others' would only run it again
		// (eventfilter.WithoutResyncs).
		WithInformers(inf.Config.Informer(), eventfilter.WithoutResyncs(inf.ImageConfig.Informer())).
		WithBareInformers(inf.ImageStream.Informer()).
		WithFilteredEventsInformers(isRetired, eventfilter.WithoutResyncs(inf.Template.Informer())).
		WithPostStartHooks(c.started(inf)).
		ToController("UsabilityController", recorder), nil
}

// newController is the controller New wires, without its queue: a test syncs it directly.
func newController(inventories configspec.Inventories, inf Informers, disc Discovery, images ImageGetter, verdicts *Verdicts) (*Controller, error) {
	c := &Controller{
		inventories: inventories,
		config:      configreader.New(inf.Config.Lister(), inf.ImageConfig.Lister(), inventories),
		streams:     inf.ImageStream.Lister().ImageStreams(names.SamplesNamespace),
		discovery:   disc,
		verdicts:    verdicts,
		nodes:       NewNodeArchitectures(),
		images:      NewImageArchitectures(images),
		recheck:     flowcontrol.NewBackOff(discoveryRecheck, maxDiscoveryRecheck),
		templates:   inf.Template.Lister().Templates(names.SamplesNamespace),
	}
	if err := c.watchNodes(inf.Nodes); err != nil {
		return nil, err
	}
	c.discoveryStale.Store(true)
	// Neither the APIServices nor the Nodes are waited for: a cluster that refused the operator
	// their list would otherwise never see a sample written. Until they are seen, discovery
	// alone and no node architecture decide; their events bring the sync back.
	if _, err := inf.APIServices.AddEventHandler(c.apiServiceEvents()); err != nil {
		return nil, err
	}
	return c, nil
}

// started is New's post-start hook: it gives the controller its queue, and brings the sync back
// after the imagestreams' events and once the nodes are listed.
func (c *Controller) started(inf Informers) factory.PostStartHook {
	return func(ctx context.Context, syncCtx factory.SyncContext) error {
		enqueue := func() { syncCtx.Queue().Add(factory.DefaultQueueKey) }
		c.enqueue.Store(&enqueue)
		enqueue() // a change before this point was not told
		// Imports come in bursts, and each sync judges every sample: a stream's event
		// brings the sync back StreamEventDelay later, once for all the events meanwhile.
		later := func() { syncCtx.Queue().AddAfter(factory.DefaultQueueKey, StreamEventDelay) }
		streamEvents := cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { later() },
			UpdateFunc: func(_, _ any) { later() },
			DeleteFunc: func(any) { later() },
		}
		if _, err := eventfilter.WithoutResyncs(inf.ImageStream.Informer()).AddEventHandler(streamEvents); err != nil {
			return err
		}
		// A cluster without nodes gives no event when the first list ends.
		if cache.WaitForCacheSync(ctx.Done(), c.nodesListed) {
			enqueue()
		}
		return nil
	}
}

// watchNodes feeds the nodes' architectures from their informer. The first verdicts wait for
// the nodes' whole first list, or for it to be refused (a cluster that does not let the operator
// list nodes): made on some nodes or none, they would judge no tag by the architectures the
// cluster has, and every sample write waits for them.
//
// Listed is when the handler has been given the whole first list (its registration's
// HasSynced), not when the informer's store has it: the informer hands the list to its handlers
// through a buffer, and its own HasSynced turns true while they may still be taking it.
//
// Refused is a refusal only: any other failure of the list (kube-apiserver restarting, a
// timeout) is retried by the informer, and a verdict made meanwhile would be made on no node.
func (c *Controller) watchNodes(nodes cache.SharedIndexInformer) error {
	// Node events come by the thousand on a large cluster: only a change of the set of
	// architectures brings the sync back.
	reg, err := nodes.AddEventHandler(c.nodes.Handler(c.nodesChanged))
	if err != nil {
		return err
	}
	c.nodesListed = reg.HasSynced
	return nodes.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		cache.DefaultWatchErrorHandler(ctx, r, err)
		if (apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)) && c.nodesRefused.CompareAndSwap(false, true) {
			c.resync()
		}
	})
}

// factsOf reads an inventory template's facts once per inventory: the sync runs at each import
// of a stream, and reading a template is most of a verdict's cost (about 7 ms a sync for the
// x86_64 inventory's 50 templates read each time).
func (c *Controller) factsOf(inv *inventory.Inventory, name string) (usability.Facts, bool) {
	if c.factsFor != inv {
		c.factsFor, c.facts = inv, map[string]usability.Facts{}
	}
	if f, ok := c.facts[name]; ok {
		return f, true
	}
	t, ok := inv.Template(name)
	if !ok {
		return usability.Facts{}, false
	}
	f := usability.Read(t)
	c.facts[name] = f
	return f, true
}

// tagsOf is every "stream:tag" of the inventory, made once per inventory: the sync runs at each
// import of a stream, and making them each time was a tenth of its cost at 10x. Not to be changed.
func (c *Controller) tagsOf(inv *inventory.Inventory) sets.Set[string] {
	if c.tagsFor != inv {
		c.tagsFor, c.tags = inv, sets.New[string]()
		for _, name := range inv.ImageStreamNames() {
			for _, tag := range inv.TagNames(name) {
				c.tags.Insert(name + ":" + tag)
			}
		}
	}
	return c.tags
}

// installing are the "stream:tag" entries the operator installs (usability.Cluster.Installing):
// the inventory's, less the streams and the tags the Config skips.
func (c *Controller) installing(inv *inventory.Inventory, skippedStreams []string, skippedTags sets.Set[string]) sets.Set[string] {
	installing := c.tagsOf(inv)
	if len(skippedStreams) > 0 || skippedTags.Len() > 0 {
		installing = sets.New[string]()
		for entry := range c.tagsOf(inv) {
			stream, _, _ := strings.Cut(entry, ":")
			if !slices.Contains(skippedStreams, stream) && !skippedTags.Has(entry) {
				installing.Insert(entry)
			}
		}
	}
	return installing
}

// installingStreams are the streams the operator installs (usability.Cluster.InstallingStreams):
// the inventory's, less the streams the Config skips. One whose every tag the Config skips is
// created all the same, without tags.
func installingStreams(inv *inventory.Inventory, skippedStreams []string) sets.Set[string] {
	return sets.New(inv.ImageStreamNames()...).Delete(skippedStreams...)
}

// apiServiceEvents make discovery's answers stale: all of them at a change of an APIService,
// only the negative ones at the informer's resync. A resync changes nothing, so it is not worth
// a read while every group asked for is served; it is the slow retry of a group found not served
// or unreadable that no APIService change has brought back since its rechecks ran out.
func (c *Controller) apiServiceEvents() cache.ResourceEventHandlerFuncs {
	changed := func(any) {
		c.discoveryStale.Store(true)
		c.resync()
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: changed,
		UpdateFunc: func(old, obj any) {
			if resourceVersionOf(old) != resourceVersionOf(obj) {
				changed(obj)
			} else if c.haveNegatives.Load() {
				c.negativesStale.Store(true)
				c.resync()
			}
		},
		DeleteFunc: changed,
	}
}

func resourceVersionOf(obj any) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}

// resync brings the sync back, once the controller runs.
func (c *Controller) resync() {
	if enqueue := c.enqueue.Load(); enqueue != nil {
		(*enqueue)()
	}
}

func (c *Controller) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	cfg, eval, found, err := c.config.Current()
	if err != nil {
		return err
	}
	if !found {
		// No verdict before there is a Config to judge by: the samples controller waits, and the
		// Config's creation brings both back. Verdicts made without one would let it create the
		// samples unmarked and mark them a moment later.
		return nil
	}
	if eval.Inventory == nil {
		c.verdicts.set(nil, nil, nil) // nothing is installed: nothing held back either
		return nil
	}
	if !c.nodesListed() && !c.nodesRefused.Load() {
		return nil // the end of the nodes' first list, or its failure, brings the sync back
	}
	live, err := c.streams.List(labels.Everything())
	if err != nil {
		return err
	}
	streams := make(map[string]*imagev1.ImageStream, len(live))
	for _, is := range live {
		streams[is.Name] = is
	}
	inv := eval.Inventory
	var templates []usability.Facts
	for _, name := range inv.TemplateNames() {
		if slices.Contains(cfg.Spec.SkippedTemplates, name) {
			continue
		}
		if facts, ok := c.factsOf(inv, name); ok {
			templates = append(templates, facts)
		}
	}
	liveTemplates, err := c.templates.List(labels.Everything())
	if err != nil {
		return err
	}
	templates = append(templates, c.retiredTemplates(cfg.Spec.SkippedTemplates, inv, liveTemplates)...)
	served, unknown, recheckIn := c.served(append(usability.GroupVersions(templates), imageGroupVersion))
	if recheckIn > 0 {
		syncCtx.Queue().AddAfter(factory.DefaultQueueKey, recheckIn)
	}
	skippedTags := sets.New[string]()
	for stream, tags := range eval.SkippedTags {
		for _, tag := range tags {
			skippedTags.Insert(stream + ":" + tag)
		}
	}
	// Whatever the mode: a Config being deleted or Removed deletes the streams, and judging the
	// templates by the streams as they go would only flap their marks while they go too.
	installing := c.installing(inv, cfg.Spec.SkippedImagestreams, skippedTags)
	var digests []string
	versions := make(map[string]string, len(streams))
	for _, is := range streams {
		if is.Labels[desired.ManagedLabel] != "true" {
			continue
		}
		var own []string
		for _, t := range is.Status.Tags {
			if len(t.Items) > 0 && t.Items[0].Image != "" {
				own = append(own, t.Items[0].Image)
			}
		}
		versions[is.Name] = is.ResourceVersion
		if v, seen := c.streamVersions[is.Name]; seen && v != is.ResourceVersion {
			c.images.LookAgain(own...)
		}
		digests = append(digests, own...)
	}
	c.streamVersions = versions
	var imageArchs map[string][]string
	var retryIn time.Duration
	if kinds, known := served[imageGroupVersion]; known && !kinds.Has("Image") {
		// A server that does not serve images (a cluster without openshift-apiserver's images,
		// or the stand-ins) answers every read NotFound: nothing to ask it until an APIService
		// changes, which reads discovery again.
		digests = nil
	} else {
		imageArchs, retryIn, err = c.images.Of(ctx, digests)
	}
	if err != nil {
		klog.InfoS("Cannot read the architectures of some sample images; their tags are not judged by them until a read succeeds", "err", err, "retryIn", retryIn)
	}
	if retryIn > 0 {
		// The images read are used; the others give no verdict until a later sync reads them.
		syncCtx.Queue().AddAfter(factory.DefaultQueueKey, retryIn)
	}
	cluster := usability.Cluster{
		NodeArchitectures:  c.nodes.List(),
		ImageArchitectures: imageArchs,
		Served:             served,
		Unknown:            unknown,
		Installing:         installing,
		InstallingStreams:  installingStreams(inv, cfg.Spec.SkippedImagestreams),
		Streams:            streams,
		SkippedStreams:     sets.New(cfg.Spec.SkippedImagestreams...),
		SkippedTags:        skippedTags,
	}
	var verdicts []usability.Verdict
	for _, v := range usability.All(templates, cluster) {
		// Only the operator's own streams are judged: the namespace holds others (the payload's).
		if v.Kind == usability.KindImageStreamTag {
			stream, _, _ := strings.Cut(v.Name, ":")
			if is := streams[stream]; is == nil || is.Labels[desired.ManagedLabel] != "true" {
				continue
			}
		}
		verdicts = append(verdicts, v)
	}
	var samples [][2]string
	for _, name := range inv.ImageStreamNames() {
		samples = append(samples, [2]string{samplewriter.ImageStreamKind, name})
	}
	for _, name := range inv.TemplateNames() {
		samples = append(samples, [2]string{samplewriter.TemplateKind, name})
	}
	// The admin is told nothing while the samples controller writes no mark: the Config Removed
	// or being deleted (the samples go), Unmanaged or invalid (the samples stay as they are).
	// What was told is then read again from the marks when it writes them again, as at a start:
	// a cause that came or went meanwhile is told once, one the marks already carry is not told
	// again. At a start they are read before the first verdicts, which the samples controller
	// waits for. After a silence it holds the verdicts made meanwhile, but its marks reach the
	// cache a write later than the Config change that brings this sync at once; a mark that won
	// that race would keep its cause untold.
	silent := eval.Mode != desired.Managed
	if silent {
		c.told = nil
	} else if c.told == nil {
		c.told = toldByMarks(live, liveTemplates)
	}
	if changed := c.verdicts.set(verdicts, eval.Offered, samples); len(changed) > 0 {
		klog.V(2).InfoS("Verdicts on whether samples can work here changed", "samples", len(changed), "unusable", len(verdicts))
	}
	if !silent {
		// Under a component of their own: client-go's spam filter gives each source its own
		// budget, and the verdicts' Events must never cost the SampleReverted Events theirs.
		c.tell(syncCtx.Recorder().WithComponentSuffix("usability"), verdicts, eval.Offered)
	}
	return nil
}

// An answer that a group/version is not served, or a failed read, just after an APIService
// changed may be kube-apiserver catching up with that change: it registers its proxy for an
// APIService after the informers see it Available. Such answers are read again after
// discoveryRecheck, doubling while they hold, until maxDiscoveryRecheck; then they stand until
// the next APIService change or the APIService informer's resync.
const (
	discoveryRecheck    = time.Second
	maxDiscoveryRecheck = 32 * time.Second
	recheckKey          = "discovery"
)

// imageGroupVersion serves the images whose architectures the tags are judged by.
var imageGroupVersion = schema.GroupVersion{Group: "image.openshift.io", Version: "v1"}

// served reads discovery of the group/versions needed: the kinds each serves (none when it is
// not served), and the groups of which some group/version was never read successfully. Each is
// read once until an APIService changes, but for the rechecks above; recheckIn is when the next
// is due (0: none).
func (c *Controller) served(needed []schema.GroupVersion) (served map[schema.GroupVersion]sets.Set[string], unknown sets.Set[string], recheckIn time.Duration) {
	now := c.recheck.Clock.Now()
	if c.kinds == nil {
		c.kinds, c.fresh, c.failed = map[schema.GroupVersion]sets.Set[string]{}, sets.New[schema.GroupVersion](), sets.New[schema.GroupVersion]()
	}
	switch {
	case c.discoveryStale.Swap(false):
		c.fresh = sets.New[schema.GroupVersion]()
		c.negativesStale.Store(false)
		c.recheck.Reset(recheckKey)
		c.recheckAt, c.recheckDone = time.Time{}, false
	case c.negativesStale.Swap(false), !c.recheckAt.IsZero() && !now.Before(c.recheckAt):
		for gv := range c.fresh {
			if c.failed.Has(gv) || c.kinds[gv].Len() == 0 {
				c.fresh.Delete(gv)
			}
		}
		c.recheckAt = time.Time{}
	}
	served, unknown = map[schema.GroupVersion]sets.Set[string]{}, sets.New[string]()
	negative := false
	for _, gv := range needed {
		if !c.fresh.Has(gv) {
			c.read(gv)
		}
		kinds, known := c.kinds[gv]
		negative = negative || !known || c.failed.Has(gv) || kinds.Len() == 0
		if !known {
			unknown.Insert(gv.Group)
			continue
		}
		served[gv] = kinds
	}
	c.haveNegatives.Store(negative)
	if negative && c.recheckAt.IsZero() && !c.recheckDone {
		c.recheck.Next(recheckKey, now)
		if d := c.recheck.Get(recheckKey); d < maxDiscoveryRecheck {
			c.recheckAt, recheckIn = now.Add(d), d
		} else {
			c.recheckDone = true
		}
	} else if !c.recheckAt.IsZero() {
		recheckIn = c.recheckAt.Sub(now)
	}
	return served, unknown, recheckIn
}

// read reads one group/version's kinds; a failed read keeps the last answer.
func (c *Controller) read(gv schema.GroupVersion) {
	c.fresh.Insert(gv)
	list, err := c.discovery.ServerResourcesForGroupVersion(gv.String())
	switch {
	case err == nil:
		kinds := sets.New[string]()
		for _, r := range list.APIResources {
			if !strings.Contains(r.Name, "/") { // subresources name their parent's kind
				kinds.Insert(r.Kind)
			}
		}
		c.kinds[gv] = kinds
	case apierrors.IsNotFound(err):
		c.kinds[gv] = sets.New[string]()
	default:
		_, known := c.kinds[gv]
		klog.InfoS("Cannot read what kinds a group serves; templates are judged by its last answer until a read succeeds, or not by its kinds when there was none", "groupVersion", gv, "lastAnswerKept", known, "err", err)
		c.failed.Insert(gv)
		return
	}
	c.failed.Delete(gv)
}
