// Package importscontrol tracks the image imports of the managed imagestreams: while tags of a stream fail
// to import, a ConfigMap named after the stream in the operator namespace records them (one key per
// tag, the error as value), and the import is retried with an ImageStreamImport, as
// `oc import-image` does: on a backoff that starts near 30 s and doubles up to the retry interval
// (pkg/imports.RetrySchedule), and at once, for every failing stream, when something that can fix
// imports changes (Informers.Fixes). The ConfigMap goes once every tag has imported, or when the
// stream is skipped, removed, or no longer in the inventory.
package importscontrol

import (
	"context"
	"fmt"
	"strings"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	imageclient "github.com/openshift/client-go/image/clientset/versioned/typed/image/v1"
	imageinformers "github.com/openshift/client-go/image/informers/externalversions/image/v1"
	imagelisters "github.com/openshift/client-go/image/listers/image/v1"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions/samples/v1"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	coreclient "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/configreader"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/eventfilter"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/ownwrites"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/trigger"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// DefaultRetryInterval is the longest wait between two retries of a stream's failed imports.
const DefaultRetryInterval = 15 * time.Minute

// retryAllKey, and every key it begins, asks for every failing stream to be retried now. The
// space keeps it apart from the streams' names.
const retryAllKey = "retry all failing imports"

// RetryCounter is told about each retry issued (the metrics package counts them).
type RetryCounter func(stream string)

// Controller tracks imports, one imagestream per sync.
type Controller struct {
	version     string
	inventories configspec.Inventories
	config      *configreader.Reader
	clock       clock.Clock
	countRetry  RetryCounter
	schedule    *imports.RetrySchedule
	fixes       []trigger.Source

	configs      sampleslisters.ConfigLister
	images       configlisters.ImageLister
	imageStreams imagelisters.ImageStreamNamespaceLister
	configMaps   corelisters.ConfigMapNamespaceLister

	configMapClient coreclient.ConfigMapInterface
	importClient    imageclient.ImageStreamImportInterface

	// writtenRecords shows the error ConfigMaps as this controller last created or updated them
	// until the informer shows as much.
	writtenRecords *ownwrites.Cache[*corev1.ConfigMap]
}

// Informers are what the controller watches.
type Informers struct {
	Config      samplesinformers.ConfigInformer
	ImageConfig configlisters.ImageLister
	ImageStream imageinformers.ImageStreamInformer
	ConfigMap   coreinformers.ConfigMapInformer // the operator namespace's
	// Fixes are what can make a failed import succeed (pull secrets, mirror sets, the cluster's
	// image and proxy configuration, samplesRegistry): a change of one retries every failing
	// stream at once.
	Fixes []trigger.Source
}

// New wires the controller. retryInterval, the longest wait between two retries, 0 means
// DefaultRetryInterval.
func New(version string, inventories configspec.Inventories, retryInterval time.Duration, countRetry RetryCounter, inf Informers,
	imageClient imageclient.ImageV1Interface, coreClient coreclient.CoreV1Interface, recorder events.Recorder, clk clock.Clock) factory.Controller {
	c := newController(version, inventories, retryInterval, countRetry, inf, imageClient, coreClient, clk)
	byName := func(obj runtime.Object) []string { return []string{obj.(metav1.Object).GetName()} }
	return factory.New().
		WithSync(c.sync).
		WithPostStartHooks(c.watchFixes).
		WithInformersQueueKeysFunc(byName, inf.ImageStream.Informer()).
		WithFilteredEventsInformersQueueKeysFunc(byName, isErrorRecord, inf.ConfigMap.Informer()).
		WithInformersQueueKeysFunc(c.allKeys, eventfilter.Updates(inf.Config.Informer(), configspec.ReadChanged)).
		ToController("ImportTrackingController", recorder)
}

// newController is the controller New wires, without its queue: a test syncs it directly.
func newController(version string, inventories configspec.Inventories, retryInterval time.Duration, countRetry RetryCounter, inf Informers,
	imageClient imageclient.ImageV1Interface, coreClient coreclient.CoreV1Interface, clk clock.Clock) *Controller {
	if retryInterval <= 0 {
		retryInterval = DefaultRetryInterval
	}
	if countRetry == nil {
		countRetry = func(string) {}
	}
	c := &Controller{
		version:         version,
		inventories:     inventories,
		clock:           clk,
		schedule:        imports.NewRetrySchedule(retryInterval, clk),
		fixes:           inf.Fixes,
		countRetry:      countRetry,
		configs:         inf.Config.Lister(),
		images:          inf.ImageConfig,
		imageStreams:    inf.ImageStream.Lister().ImageStreams(names.SamplesNamespace),
		configMaps:      inf.ConfigMap.Lister().ConfigMaps(names.OperatorNamespace),
		configMapClient: coreClient.ConfigMaps(names.OperatorNamespace),
		importClient:    imageClient.ImageStreamImports(names.SamplesNamespace),
		writtenRecords:  ownwrites.New[*corev1.ConfigMap](inf.ConfigMap.Informer(), names.OperatorNamespace, corev1.Resource("configmaps")),
	}
	c.config = configreader.New(c.configs, c.images, inventories)
	return c
}

// isErrorRecord filters the ConfigMap events the controller acts on. A delete the informer
// missed (it relisted) comes wrapped in a tombstone, and must still bring the record back.
func isErrorRecord(obj interface{}) bool {
	m, ok := eventfilter.ObjectOf(obj)
	return ok && m.GetLabels()[imports.ErrorLabel] == "true"
}

// allKeys: a Config change may concern every stream and every error record.
func (c *Controller) allKeys(runtime.Object) []string {
	seen := map[string]bool{}
	var keys []string
	if streams, err := c.imageStreams.List(labels.Everything()); err == nil {
		for _, is := range streams {
			seen[is.Name] = true
			keys = append(keys, is.Name)
		}
	}
	if records, err := c.configMaps.List(labels.SelectorFromSet(labels.Set{imports.ErrorLabel: "true"})); err == nil {
		for _, cm := range records {
			if !seen[cm.Name] {
				keys = append(keys, cm.Name)
			}
		}
	}
	return keys
}

// watchFixes retries every failing stream when something that can fix imports changes.
func (c *Controller) watchFixes(_ context.Context, syncCtx factory.SyncContext) error {
	return trigger.Watch(c.fixes, func(change trigger.Change) { c.retryAllFor(syncCtx.Queue(), change) })
}

// retryAllFor queues a retry of every failing stream now and, for a change that reaches
// openshift-apiserver only later, another after the change's Again. Each later retry has a key
// of its own, named after the time it is due: the queue keeps one deadline per key, the
// earliest, so under a shared key a change whose repeat comes soon (a mirror set's) would
// cancel another's that comes later (the pull secret's, after its rollout).
func (c *Controller) retryAllFor(queue workqueue.RateLimitingInterface, change trigger.Change) {
	klog.InfoS("Retrying every failing import: something that can fix imports changed",
		"kind", change.Kind, "namespace", change.Namespace, "name", change.Name, "change", change.Verb, "again", change.Again)
	queue.Add(retryAllKey)
	if change.Again > 0 {
		queue.AddAfter(retryAllKey+" at "+c.clock.Now().Add(change.Again).UTC().Format(time.RFC3339Nano), change.Again)
	}
}

func (c *Controller) sync(ctx context.Context, syncCtx factory.SyncContext) error {
	name := syncCtx.QueueKey()
	switch {
	case name == factory.DefaultQueueKey:
		return nil
	case strings.HasPrefix(name, retryAllKey):
		for _, stream := range c.schedule.RetryAllNow() {
			syncCtx.Queue().Add(stream)
		}
		return nil
	}
	failed, stream, want, err := c.failuresToTrack(name)
	if err != nil {
		return err
	}
	if err := c.record(ctx, syncCtx, name, failed); err != nil {
		return err
	}
	if len(failed) == 0 {
		c.forget(name)
		return nil
	}
	return c.retryWhenDue(ctx, syncCtx, stream, want, failed)
}

// failuresToTrack returns the failed tags of a stream the operator manages right now, with the
// live stream and the one the operator wants; no failures for a stream that is skipped, outside
// the inventory, absent, or while the samples are not Managed. want is nil for a stream the
// import allow-list blocks (configspec.Evaluation.Blocks): the samples controller leaves it as it
// is, so no rewrite is coming and its live tags are retried as they stand.
func (c *Controller) failuresToTrack(name string) (failed map[string]string, live, want *imagev1.ImageStream, err error) {
	cfg, eval, found, err := c.config.Current()
	if err != nil || !found {
		return nil, nil, nil, err
	}
	if eval.Mode != desired.Managed {
		if eval.Mode == desired.Frozen {
			// Unmanaged or invalid: keep whatever is recorded, track nothing new.
			return c.currentRecord(name), nil, nil, nil
		}
		return nil, nil, nil, nil
	}
	if want, _, _ = desired.ImageStream(&cfg.Spec, eval.ChoiceOf(cfg, c.version, name, nil), eval.Inventory, name); want == nil {
		return nil, nil, nil, nil
	}
	live, err = c.imageStreams.Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil, nil, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if _, blocked := eval.Blocks(name, live); blocked {
		want = nil
	}
	failed = imports.FailedTags(live)
	// A tag the Config skips is on its way out of the stream, and one an upgrade retired is
	// kept only for those who still use it: neither import is a concern.
	for _, tag := range eval.SkippedTags.Of(name) {
		delete(failed, tag)
	}
	for _, tag := range live.Spec.Tags {
		if desired.IsRetiredTag(tag) {
			delete(failed, tag.Name)
		}
	}
	return failed, live, want, nil
}

func (c *Controller) currentRecord(name string) map[string]string {
	cm, err := c.configMaps.Get(name)
	if err != nil || cm.Labels[imports.ErrorLabel] != "true" {
		return nil
	}
	return cm.Data
}

// record makes the stream's error ConfigMap say exactly failed, deleting it when nothing failed.
func (c *Controller) record(ctx context.Context, syncCtx factory.SyncContext, name string, failed map[string]string) error {
	live, unseen, err := c.writtenRecords.Get(name)
	if apierrors.IsNotFound(err) {
		live, err = nil, nil
	} else if err != nil {
		return err
	}
	if unseen {
		// Created by an earlier sync; its add event brings the stream back, and should the
		// record have been deleted meanwhile, so does this.
		syncCtx.Queue().AddAfter(name, ownwrites.Recheck)
	}
	switch {
	case len(failed) == 0 && live != nil && live.Labels[imports.ErrorLabel] == "true":
		uid := live.UID
		err = c.configMapClient.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if apierrors.IsNotFound(err) {
			err = nil
		}
	case len(failed) == 0:
	case live == nil:
		var created *corev1.ConfigMap
		created, err = c.configMapClient.Create(ctx, imports.ErrorConfigMap(names.OperatorNamespace, name, failed, c.clock.Now()), metav1.CreateOptions{})
		if err == nil {
			c.writtenRecords.Wrote(created)
			klog.InfoS("Image import failed", "imagestream", name, "tags", len(failed))
		}
	case live.Labels[imports.ErrorLabel] != "true":
		// A ConfigMap of the same name that is not ours: leave it, and say so once in the log.
		klog.V(2).InfoS("Not recording import errors: a ConfigMap of that name exists without the error label", "name", name)
	case !imports.ErrorConfigMapInSync(live, failed):
		updated := live.DeepCopy()
		updated.Data = imports.ErrorConfigMap(names.OperatorNamespace, name, failed, time.Time{}).Data
		if updated, err = c.configMapClient.Update(ctx, updated, metav1.UpdateOptions{}); err == nil {
			c.writtenRecords.Wrote(updated)
		}
	}
	if err != nil {
		return fmt.Errorf("recording the import errors of %s: %w", name, err)
	}
	return nil
}

// retryWhenDue issues an ImageStreamImport for the failed tags once their retry is due
// (imports.RetrySchedule) and brings the stream back to the queue when the next one is.
//
// A stream whose failed tags are about to be rewritten (AwaitingRewrite against want) skips its
// turn: the samples controller's rewrite makes the image API import the new references, and a
// retry of the old ones would only race that write. The rewrite's event brings the stream back.
// With want nil no rewrite is coming (the allow-list blocks the stream) and the retry is sent.
// Whatever the answer to a retry, but a conflict (the stream changed: look again at once), it
// took the stream's turn: a retry refused as invalid (the allow-list refusing the live
// references) or failed by the server is tried again at the next turn, as one accepted is.
func (c *Controller) retryWhenDue(ctx context.Context, syncCtx factory.SyncContext, stream, want *imagev1.ImageStream, failed map[string]string) error {
	if stream == nil {
		return nil
	}
	if due := c.schedule.Due(stream.Name, failed); c.clock.Now().Before(due) {
		syncCtx.Queue().AddAfter(stream.Name, due.Sub(c.clock.Now()))
		return nil
	}
	if want != nil {
		if pending := imports.AwaitingRewrite(stream, want, failed); len(pending) > 0 {
			klog.V(2).InfoS("Import retry skipped: the tags' images are about to be rewritten", "imagestream", stream.Name, "tags", pending)
			c.queueAt(syncCtx, stream.Name, c.schedule.TurnTaken(stream.Name))
			return nil
		}
	}
	retry := failed
	if !c.schedule.ForAFix(stream.Name) {
		// The import controller re-imports scheduled tags on its own: a turn that is only the
		// schedule's leaves them to it. A fix's turn retries them too, at once.
		retry = imports.NotScheduled(stream, failed)
	}
	isi := imports.RetryImport(stream, retry)
	if isi == nil {
		// Nothing the operator retries on a schedule fails; the stream stays tracked, for a fix
		// to find it.
		return nil
	}
	_, err := c.importClient.Create(ctx, isi, metav1.CreateOptions{})
	switch {
	case apierrors.IsNotFound(err):
		// Deleted (Removed, skipped, an admin) since the cache saw it: nothing left to retry.
		klog.V(2).InfoS("Imagestream gone before its import retry", "imagestream", stream.Name)
		c.forget(stream.Name)
		return nil
	case apierrors.IsConflict(err):
		// Changed since the cache saw it (an import, an edit): look again at the newer version,
		// through the factory's own backoff, which a nil return would reset (it forgets the key)
		// while the cache still lags.
		return factory.SyntheticRequeueError
	case err != nil && !apierrors.IsAlreadyExists(err):
		// Refused (the allow-list: Invalid), failed (a 5xx, a timeout) or turned away (403,
		// 429): the attempt took its turn all the same. Sending it again through the factory's
		// backoff would hit a failing server at 5 ms, 10 ms, ... and leave that backoff grown for
		// the first retry after an outage; the schedule alone says when the next comes.
		next := c.schedule.TurnTaken(stream.Name)
		klog.InfoS("Import retry not carried out; trying again at the next turn", "imagestream", stream.Name,
			"next", next.Sub(c.clock.Now()).Round(time.Second), "err", err)
		c.queueAt(syncCtx, stream.Name, next)
		return nil
	}
	c.countRetry(stream.Name)
	next := c.schedule.TurnTaken(stream.Name)
	klog.InfoS("Retried failed image imports", "imagestream", stream.Name, "tags", len(isi.Spec.Images), "next", next.Sub(c.clock.Now()).Round(time.Second))
	syncCtx.Recorder().Eventf("ImportRetried", "retried the import of %d tag(s) of imagestream openshift/%s", len(isi.Spec.Images), stream.Name)
	c.queueAt(syncCtx, stream.Name, next)
	return nil
}

// queueAt brings the stream back to the queue at t.
func (c *Controller) queueAt(syncCtx factory.SyncContext, name string, t time.Time) {
	syncCtx.Queue().AddAfter(name, t.Sub(c.clock.Now()))
}

func (c *Controller) forget(name string) {
	c.schedule.Forget(name)
}
