// Package samples keeps each sample imagestream and template in the openshift namespace as the
// Config asks: created, reverted when it drifts, labelled unmanaged when skipped, deleted when
// Removed. One queue key per object, so a drift is reverted by the worker that sees its event.
package samples

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

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
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/access"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/configreader"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
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
	images       configlisters.ImageLister
	imageStreams imagelisters.ImageStreamNamespaceLister
	templates    templatelisters.TemplateNamespaceLister

	imageStreamClient imageclient.ImageStreamInterface
	templateClient    templateclient.TemplateInterface

	answers *samplewriter.ServerAnswers
	// createdStreams and createdTemplates are the samples created whose add event is not in yet.
	createdStreams, createdTemplates *samplewriter.PendingCreates
	// updatedStreams and updatedTemplates are the samples updated or deleted whose event is not in yet.
	updatedStreams, updatedTemplates *samplewriter.PendingUpdates
	// reverts bounds the reverts of each sample (keys "ImageStream/python"), overBudget counts
	// each refusal for the metrics.
	reverts    *samplewriter.WriteBudget
	overBudget func(kind, name string)
	// normalized counts each owned field the server was found to normalize (kind, name, field).
	normalized func(kind, name, field string)
	// access tells when reviews found the samples grant missing: writes are held until an
	// administrator grants it, since each would only be refused again.
	access Access
	// refusals are the writes the API server refused, each retried on its own backoff.
	refusals *refusal.Store
	// activity counts the syncs under way, for the finalizer.
	activity *Activity
}

// Activity tells whether a sync is under way. A sync that read the Config before its deletion
// reached the cache may still create a sample; the finalizer waits for it, or that sample would
// outlive its Config and be adopted by the next.
type Activity struct{ syncs atomic.Int64 }

// Busy reports whether a sync is under way.
func (a *Activity) Busy() bool { return a.syncs.Load() > 0 }

// Access is the operator's verdict on its own access (pkg/controller/access.Tracker).
type Access interface {
	Verdict() access.Verdict
	// OnChange calls f, which must not block, each time the verdict changes.
	OnChange(f func())
}

// New wires the controller to its informers.
func New(
	version string,
	inventories configspec.Inventories,
	configInformer samplesinformers.ConfigInformer,
	imageConfigInformer configinformers.ImageInformer,
	imageStreamInformer imageinformers.ImageStreamInformer,
	templateInformer templateinformers.TemplateInformer,
	imageClient imageclient.ImageV1Interface,
	templateClient templateclient.TemplateV1Interface,
	answers *samplewriter.ServerAnswers,
	normalized func(kind, name, field string),
	reverts *samplewriter.WriteBudget,
	overBudget func(kind, name string),
	accessVerdict Access,
	refusals *refusal.Store,
	retryRefused RetryTriggers,
	activity *Activity,
	recorder events.Recorder,
) factory.Controller {
	c := &Controller{
		version:           version,
		inventories:       inventories,
		configs:           configInformer.Lister(),
		images:            imageConfigInformer.Lister(),
		imageStreams:      imageStreamInformer.Lister().ImageStreams(desired.SamplesNamespace),
		templates:         templateInformer.Lister().Templates(desired.SamplesNamespace),
		imageStreamClient: imageClient.ImageStreams(desired.SamplesNamespace),
		templateClient:    templateClient.Templates(desired.SamplesNamespace),
		answers:           answers,
		normalized:        normalized,
		createdStreams:    samplewriter.NewPendingCreates(clock.RealClock{}),
		createdTemplates:  samplewriter.NewPendingCreates(clock.RealClock{}),
		updatedStreams:    samplewriter.NewPendingUpdates(clock.RealClock{}),
		updatedTemplates:  samplewriter.NewPendingUpdates(clock.RealClock{}),
		reverts:           reverts,
		overBudget:        overBudget,
		access:            accessVerdict,
		refusals:          refusals,
		activity:          activity,
	}
	c.config = configreader.New(c.configs, c.images, inventories)
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
			// A refused write waits out its backoff unless what may have refused it changes.
			return retryRefused.OnChange(func() {
				for _, r := range c.refusals.RetryNow() {
					syncCtx.Queue().Add(queueKey(r.Kind, r.Name))
				}
			})
		}).
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

// RetryTriggers calls f, which must not block, whenever something changes that may have made the
// API server refuse a sample write: the ResourceQuotas and LimitRanges of openshift.
type RetryTriggers interface {
	OnChange(f func()) error
}

func queueKey(kind, name string) string {
	if kind == templateKind {
		return templatePrefix + name
	}
	return imageStreamPrefix + name
}

const (
	imageStreamKind = "ImageStream"
	templateKind    = "Template"
)

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
	if c.writesHeld() {
		// Where every user may read the samples the caches fill without the grant; each write
		// would be refused, and the Config status already names the missing grant. The verdict's
		// change brings every key back.
		return nil
	}
	switch {
	case strings.HasPrefix(key, imageStreamPrefix):
		return c.syncImageStream(ctx, syncCtx, cfg, eval, strings.TrimPrefix(key, imageStreamPrefix))
	case strings.HasPrefix(key, templatePrefix):
		return c.syncTemplate(ctx, syncCtx, cfg, eval, strings.TrimPrefix(key, templatePrefix))
	}
	return nil // the factory's default key (periodic resync) needs no work: every key has its own sync
}

func (c *Controller) syncImageStream(ctx context.Context, syncCtx factory.SyncContext, cfg *samplesv1.Config, eval configspec.Evaluation, name string) error {
	var want *imagev1.ImageStream
	skipped := false
	if eval.Inventory != nil {
		want, skipped, _ = desired.ImageStream(&cfg.Spec, eval.Inventory, c.version, name)
	}
	k := sampleKind[*imagev1.ImageStream]{
		name: imageStreamKind, get: c.imageStreams.Get, refusals: c.refusals, generation: cfg.Generation, client: c.imageStreamClient, answers: c.answers.ImageStreams, created: c.createdStreams, updated: c.updatedStreams,
		reverts: c.reverts, overBudget: c.overBudget,
		decide: desired.ForImageStream, answerFor: desired.AnswerForImageStream, settled: desired.ImageStreamSettled,
	}
	if eval.Inventory != nil {
		k.followsConfig = func(live *imagev1.ImageStream) (string, bool) {
			previous, ok := desired.WrittenForRegistry(live, &cfg.Spec, eval.Inventory, c.version, name)
			if !ok {
				return "", false
			}
			if previous == "" {
				previous = "the inventory's registries"
			}
			to := cfg.Spec.SamplesRegistry
			if to == "" {
				to = "the inventory's registries"
			}
			return fmt.Sprintf("spec.samplesRegistry changed: it pulled from %s and now pulls from %s", previous, to), true
		}
	}
	mode := eval.Mode
	if _, refused := eval.RefusedOnCreate[name]; refused && mode == desired.Managed {
		live, err := c.imageStreams.Get(name)
		if apierrors.IsNotFound(err) {
			live = nil
		} else if err != nil {
			return err
		}
		if _, blocked := eval.Blocks(name, live); blocked {
			// openshift-apiserver would refuse the write (the import allow-list): leave it as it
			// is. The status controller names it.
			mode = desired.Frozen
		}
	}
	return reconcile(ctx, syncCtx, c.version, c.normalized, k, name, mode, want, skipped)
}

func (c *Controller) syncTemplate(ctx context.Context, syncCtx factory.SyncContext, cfg *samplesv1.Config, eval configspec.Evaluation, name string) error {
	var want *templatev1.Template
	skipped := false
	if eval.Inventory != nil {
		want, skipped, _ = desired.Template(&cfg.Spec, eval.Inventory, c.version, name)
	}
	k := sampleKind[*templatev1.Template]{
		name: templateKind, get: c.templates.Get, refusals: c.refusals, generation: cfg.Generation, client: c.templateClient, answers: c.answers.Templates, created: c.createdTemplates, updated: c.updatedTemplates,
		reverts: c.reverts, overBudget: c.overBudget,
		decide: desired.ForTemplate, answerFor: desired.AnswerForTemplate, settled: desired.TemplateSettled,
		trimmed: desired.IsTrimmed, whole: desired.DropContentDigest,
	}
	return reconcile(ctx, syncCtx, c.version, c.normalized, k, name, eval.Mode, want, skipped)
}

// sampleKind is what reconcile needs to know of a kind of sample.
type sampleKind[P desired.Object[P]] struct {
	name    string
	get     func(string) (P, error)
	client  writer[P]
	answers *samplewriter.Answers[P]
	created *samplewriter.PendingCreates
	updated *samplewriter.PendingUpdates
	// refusals hold a refused write back until its backoff runs out; generation is the Config's,
	// part of what identifies a decision.
	refusals   *refusal.Store
	generation int64
	// reverts bounds the reverts of each sample; overBudget is told of each refusal.
	reverts    *samplewriter.WriteBudget
	overBudget func(kind, name string)
	decide     func(mode desired.Mode, want P, skipped bool, live P) desired.Action[P]
	answerFor  func(want, got P) *desired.Answer[P]
	settled    func(live, want P, answer *desired.Answer[P]) bool
	// followsConfig tells an update that only follows a change of the Config (the operator wrote
	// live for another samplesRegistry) from one that reverts an admin's edit, and says which
	// change; nil when every update of this kind is a revert.
	followsConfig func(live P) (why string, ok bool)
	// trimmed tells a cached summary of a live object (desired.TrimTemplate) from the whole
	// object, and whole makes sure an object read from the server counts as whole; nil when the
	// cache keeps objects whole.
	trimmed func(P) bool
	whole   func(P)
}

// writer is the part of a typed client the samples controller uses.
type writer[P any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (P, error)
	Create(ctx context.Context, obj P, opts metav1.CreateOptions) (P, error)
	Update(ctx context.Context, obj P, opts metav1.UpdateOptions) (P, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// reconcile reads the live object from the lister, asks pkg/desired for the write, and makes it.
// An update is skipped when live is exactly what the server made of the operator's last write of
// the same desired object: writing it again would only be normalized again.
func reconcile[P desired.Object[P]](ctx context.Context, syncCtx factory.SyncContext, version string, normalized func(kind, name, field string),
	k sampleKind[P], name string, mode desired.Mode, want P, skipped bool) error {
	recorder := syncCtx.Recorder()
	var absent P
	live, err := k.get(name)
	if apierrors.IsNotFound(err) {
		live = absent
	} else if err != nil {
		return err
	} else {
		k.created.Seen(name)
	}
	cachedResourceVersion := ""
	if live != absent {
		cachedResourceVersion = live.GetResourceVersion()
	}
	if wait, behind := k.updated.Behind(name, cachedResourceVersion); behind {
		// The cache shows the object as it was before this controller's last write of it; the
		// event for that write brings the key back, and so does this should it never come.
		syncCtx.Queue().AddAfter(syncCtx.QueueKey(), wait)
		return nil
	}
	action := k.decide(mode, want, skipped, live)
	if action.Verb == desired.Create {
		if wait, unseen := k.created.Unseen(name); unseen {
			// Created by an earlier sync; its add event brings the key back, and so does this
			// should that event never come.
			syncCtx.Queue().AddAfter(syncCtx.QueueKey(), wait)
			return nil
		}
	}
	if action.Verb == desired.Update && k.settled(live, want, k.answers.Get(name)) {
		return nil
	}
	if (action.Verb == desired.Update || action.Verb == desired.MarkUnmanaged) && k.trimmed != nil && k.trimmed(live) {
		// The cache keeps only digests of what the operator owns of this object: an update is
		// built from the whole object, read for it. Writes are rare (drift, an upgrade), the
		// cache is smaller all the time.
		if live, err = k.client.Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return nil // its delete event brings it back here
		} else if err != nil {
			return fmt.Errorf("get %s %s to update it: %w", k.name, name, err)
		}
		k.whole(live)
		if action = k.decide(mode, want, skipped, live); action.Verb == desired.Update && k.settled(live, want, k.answers.Get(name)) {
			return nil
		}
	}
	if action.Verb == desired.None || action.Verb == desired.Update && k.settled(live, want, k.answers.Get(name)) {
		k.refusals.Accepted(k.name, name) // nothing to write: whatever was refused is moot
		return nil
	}
	liveVersion := ""
	if live != absent {
		liveVersion = live.GetResourceVersion()
	}
	// The same write on the same object waits out its backoff: a Config status write or a resync
	// brings every key back, and would otherwise send each refused write again at once.
	decision := fmt.Sprintf("%s/%d/%s", action.Verb, k.generation, liveVersion)
	if wait, held := k.refusals.Held(k.name, name, decision); held {
		syncCtx.Queue().AddAfter(syncCtx.QueueKey(), wait)
		return nil
	}
	wasCurrent := live != absent && live.GetAnnotations()[desired.VersionAnnotation] == version
	followed := ""
	if action.Verb == desired.Update && wasCurrent && k.followsConfig != nil {
		followed, _ = k.followsConfig(live)
	}
	// A revert puts back what someone changed; an upgrade or a Config change is no revert and
	// not bounded.
	revert := action.Verb == desired.Update && wasCurrent && followed == ""
	if revert {
		budgetKey := k.name + "/" + name
		if wait, first, ok := k.reverts.Check(budgetKey); !ok {
			if first {
				klog.InfoS("Sample reverted too often: something keeps changing it; reverting again once the budget allows",
					"kind", k.name, "name", name, "reverts", samplewriter.RevertBudget, "window", samplewriter.RevertWindow, "fields", action.Drift, "next", wait)
				recorder.Warningf("SampleRevertBudgetExceeded", "%s openshift/%s was changed back %d times in %s and has changed again (%s): something rewrites it; the operator reverts it again in %s",
					k.name, name, samplewriter.RevertBudget, samplewriter.RevertWindow, strings.Join(action.Drift, ", "), wait.Round(time.Second))
			}
			if k.overBudget != nil {
				k.overBudget(k.name, name)
			}
			syncCtx.Queue().AddAfter(syncCtx.QueueKey(), wait)
			return nil
		}
	}
	var got P
	switch action.Verb {
	case desired.None:
		return nil
	case desired.Create:
		got, err = k.client.Create(ctx, action.Object, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil // its add event brings it back here with the live object
		}
	case desired.Update, desired.MarkUnmanaged:
		got, err = k.client.Update(ctx, action.Object, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			// Someone wrote it after the cache's version: that write's event brings the key back
			// to decide on what is there now.
			klog.V(2).InfoS("Not updating a sample changed since the decision", "kind", k.name, "name", name)
			return nil
		}
	case desired.Delete:
		uid, resourceVersion := live.GetUID(), live.GetResourceVersion()
		// Delete the object the decision was made on, as it was then: not one recreated since,
		// nor one an admin relabelled managed=false meanwhile to keep it.
		err = k.client.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &resourceVersion}})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if apierrors.IsConflict(err) {
			// Changed since: its update event brings it back here to decide again.
			klog.V(2).InfoS("Not deleting a sample changed since the decision", "kind", k.name, "name", name)
			return nil
		}
	}
	if r, refused := refusal.Classify(err); refused {
		wait, newCause := k.refusals.Refused(k.name, name, string(action.Verb), decision, r)
		if newCause {
			klog.InfoS("The API server refuses a sample write; the operator retries it on a backoff and reports it in the Config status",
				"kind", k.name, "name", name, "action", action.Verb, "answer", r.String())
			recorder.Warningf("SampleWritesRefused", "the API server refuses to %s %s openshift/%s (and every other sample it refuses for the same reason): %s; the operator retries on a backoff of up to %s",
				action.Verb, k.name, name, r, refusal.MaxRetry)
		} else {
			klog.V(2).InfoS("Sample write refused again", "kind", k.name, "name", name, "action", action.Verb, "next", wait)
		}
		syncCtx.Queue().AddAfter(syncCtx.QueueKey(), wait)
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s %s %s: %w", action.Verb, k.name, name, err)
	}
	if cause := k.refusals.Accepted(k.name, name); cause != "" {
		recorder.Eventf("SampleWritesAccepted", "the API server accepts again the sample writes it refused with: %s", cause)
	}
	switch action.Verb {
	case desired.Create:
		k.created.Created(name)
	case desired.Update, desired.MarkUnmanaged, desired.Delete:
		k.updated.Wrote(name, live.GetResourceVersion())
	}
	if revert {
		k.reverts.Spend(k.name + "/" + name)
	}
	report(recorder, k.name, name, action.Verb, action.Drift, wasCurrent, followed)
	switch action.Verb {
	case desired.Create, desired.Update:
		learn(recorder, normalized, k, name, want, got)
	case desired.Delete:
		k.answers.Set(name, nil)
	}
	return nil
}

// learn keeps what the server answered to a write of want when it changed an owned field, and
// tells the admin once per field: the operator then takes that answer as in sync instead of
// writing the same object again and again.
func learn[P desired.Object[P]](recorder events.Recorder, normalized func(kind, name, field string), k sampleKind[P], name string, want, got P) {
	answer := k.answerFor(want, got)
	fields := k.answers.Set(name, answer)
	if len(fields) == 0 {
		return
	}
	klog.InfoS("The API server changed fields the operator sets on a sample; its version of them counts as in sync from now on",
		"kind", k.name, "name", name, "fields", fields)
	recorder.Warningf("SampleNormalizedByServer", "the API server changed %s of %s openshift/%s as the operator wrote it; the operator keeps the server's version and stops rewriting it",
		strings.Join(fields, ", "), k.name, name)
	if normalized != nil {
		for _, f := range fields {
			normalized(k.name, name, f)
		}
	}
}

// report logs every write and tells the admin, through an event, when a sample at the current
// version was changed back: someone edited or deleted what the operator manages. The operator's
// own rewrites are no reverts: an update that follows a Config change (followed says which) is
// told once for all samples by the status controller's SamplesRegistryChanged event, one that
// moves a sample to a new version by SamplesExist and the ClusterOperator. An event per sample
// would also spend the event spam filter's budget that reverts need.
func report(recorder events.Recorder, kind, name string, verb desired.Verb, drift []string, wasCurrent bool, followed string) {
	klog.V(2).InfoS("Wrote sample", "kind", kind, "name", name, "action", verb, "fields", drift, "followsConfig", followed)
	switch {
	case verb == desired.Update && wasCurrent && followed != "":
	case verb == desired.Update && wasCurrent:
		recorder.Eventf("SampleReverted", "%s openshift/%s was changed (%s); the operator put back the fields it manages", kind, name, strings.Join(drift, ", "))
	case verb == desired.MarkUnmanaged:
		recorder.Eventf("SampleSkipped", "%s openshift/%s is skipped by the Config: labelled %s=false and left alone", kind, name, desired.ManagedLabel)
	}
}
