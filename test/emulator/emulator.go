// Package emulator plays the part of OpenShift's image importer for tests
// that run against a bare kube-apiserver serving image.openshift.io with
// CRDs. It fills ImageStream status from spec tags without contacting any
// registry, and acts on ImageStreamImport objects, which OpenShift never
// stores but the CRD-served API does.
package emulator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	imageclient "github.com/openshift/client-go/image/clientset/versioned"
	imageinformers "github.com/openshift/client-go/image/informers/externalversions"
	imagelisters "github.com/openshift/client-go/image/listers/image/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/mirrorsets"
	"github.com/samples-operator-dev/cluster-samples-operator/test/apiserverhooks"
)

type itemKind int

const (
	streamItem itemKind = iota
	importItem
)

func (k itemKind) String() string {
	if k == importItem {
		return "ImageStreamImport"
	}
	return "ImageStream"
}

// queueItem names an ImageStream or an ImageStreamImport to process.
type queueItem struct {
	kind itemKind
	name string
}

// Emulator fills the status of the ImageStreams of one namespace the way the
// OpenShift image importer would, and serves ImageStreamImport requests.
// Its methods are safe for concurrent use.
type Emulator struct {
	client    imageclient.Interface
	namespace string
	clock     func() time.Time

	factory      imageinformers.SharedInformerFactory
	streams      cache.SharedIndexInformer
	streamLister imagelisters.ImageStreamLister
	imports      cache.SharedIndexInformer // nil without an import source
	importLW     cache.ListerWatcher
	removeImport func(ctx context.Context, name string, uid types.UID) error
	queue        workqueue.TypedRateLimitingInterface[queueItem]

	mu       sync.Mutex
	running  bool
	rules    rules
	counts   map[string]int
	imported map[types.UID]map[string]string // per stream: tag -> last imported reference
	handled  map[types.UID]bool              // ImageStreamImports already applied
	synced   map[string]string               // per stream name: the resourceVersion its last completed sync read
	// serverImports is set when the API server handles ImageStreamImports itself (the real
	// openshift-apiserver): the emulator neither sees nor counts them.
	serverImports bool
	// mirrors, when set (ResolveMirrorSets), are the cluster's mirror sets imports go through.
	mirrors *mirrorSets
}

// New returns an emulator for the ImageStreams and ImageStreamImports of
// namespace. ImageStreamImports are listed and watched through the REST
// client of client; with a client that has none (the fake clientset) only
// ImageStreams are watched.
func New(client imageclient.Interface, namespace string) *Emulator {
	return newEmulator(client, namespace, restImportSource(client.ImageV1().RESTClient(), namespace))
}

func newEmulator(client imageclient.Interface, namespace string, src *importSource) *Emulator {
	e := &Emulator{
		client:    client,
		namespace: namespace,
		clock:     time.Now,
		rules:     rules{exact: map[string]outcome{}},
		counts:    map[string]int{},
		imported:  map[types.UID]map[string]string{},
		handled:   map[types.UID]bool{},
		synced:    map[string]string{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[queueItem](),
			workqueue.TypedRateLimitingQueueConfig[queueItem]{Name: "import-emulator"},
		),
	}
	e.factory = imageinformers.NewSharedInformerFactoryWithOptions(client, 0, imageinformers.WithNamespace(namespace))
	isInformer := e.factory.Image().V1().ImageStreams()
	e.streams = isInformer.Informer()
	e.streamLister = isInformer.Lister()
	if src != nil {
		e.importLW = src.lw
		e.imports = cache.NewSharedIndexInformer(src.lw, &imagev1.ImageStreamImport{}, 0, cache.Indexers{})
		e.removeImport = src.remove
	}
	return e
}

// FailReference makes every later import of exactly ref fail with message
// and reason NotFound. It takes precedence over FailMatching.
func (e *Emulator) FailReference(ref, message string) {
	e.FailReferenceWithReason(ref, DefaultFailureReason, message)
}

// FailReferenceWithReason is FailReference with a given condition reason.
func (e *Emulator) FailReferenceWithReason(ref, reason, message string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rules.exact[ref] = outcome{fail: true, reason: reason, message: message}
}

// SucceedReference makes every later import of exactly ref succeed, even if
// a matcher added with FailMatching would fail it. Tags whose import already
// failed stay failed until they are imported again.
func (e *Emulator) SucceedReference(ref string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rules.exact[ref] = outcome{}
}

// FailMatching adds a matcher consulted for references without an exact
// rule; the first matcher that fails a reference decides its message.
func (e *Emulator) FailMatching(m Matcher) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rules.matchers = append(e.rules.matchers, m)
}

// ResetRules drops all failure rules and matchers.
func (e *Emulator) ResetRules() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rules = rules{exact: map[string]outcome{}}
}

// ImportRequests returns how many ImageStreamImports naming stream were
// processed (applied to the stream status and counted before being deleted).
func (e *Emulator) ImportRequests(stream string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.counts[stream]
}

// ServerHandlesImports reports whether a running emulator found that the API server handles
// ImageStreamImports itself (the real openshift-apiserver): then ImportRequests stays 0 and the
// failure rules decide only the imports of new or changed spec tags, which the emulator plays
// as openshift-controller-manager's import controller would ask for them.
func (e *Emulator) ServerHandlesImports() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.serverImports
}

// importsListable lists ImageStreamImports once, retrying transient errors, and reports false
// when the server refuses the verb (405) or does not know the resource (404).
func (e *Emulator) importsListable(ctx context.Context) bool {
	listable := true
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cache.ToListerWithContext(e.importLW).ListWithContext(ctx, metav1.ListOptions{Limit: 1})
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsMethodNotSupported(err), apierrors.IsNotFound(err):
			listable = false
			return true, nil
		}
		return false, nil
	})
	return listable
}

// HasSynced reports whether the informers of a running emulator have synced.
func (e *Emulator) HasSynced() bool {
	if !e.streams.HasSynced() {
		return false
	}
	e.mu.Lock()
	imports, mirrors := e.imports, e.mirrors
	e.mu.Unlock()
	return (imports == nil || imports.HasSynced()) && (mirrors == nil || mirrors.hasSynced())
}

// Run processes ImageStreams and ImageStreamImports until ctx is done. It
// waits for the informer caches first and returns nil once ctx is done, or
// an error if the caches cannot sync. It may be called only once.
func (e *Emulator) Run(ctx context.Context) error {
	e.mu.Lock()
	if e.running {
		e.mu.Unlock()
		return errors.New("import emulator: Run called twice")
	}
	e.running = true
	e.mu.Unlock()

	logger := klog.FromContext(ctx).WithValues("component", "import-emulator", "namespace", e.namespace)
	ctx = klog.NewContext(ctx, logger)
	defer e.queue.ShutDown()

	if e.imports != nil && !e.importsListable(ctx) {
		// The real openshift-apiserver never stores an ImageStreamImport: it imports at once
		// (and in the tests fails to reach any registry). Only the stand-in CRD lists them.
		logger.Info("The server does not list ImageStreamImports: it handles them itself; the emulator fills status for new tags only")
		e.mu.Lock()
		e.imports, e.removeImport, e.serverImports = nil, nil, true
		e.mu.Unlock()
	}
	if err := e.addHandlers(logger); err != nil {
		return err
	}
	if e.imports == nil && !e.serverImports {
		logger.Info("No REST client: ImageStreamImports are not watched")
	}

	e.factory.Start(ctx.Done())
	defer e.factory.Shutdown()
	if e.mirrors != nil {
		e.mirrors.start(ctx.Done())
		defer e.mirrors.shutdown()
	}
	var informers sync.WaitGroup
	defer informers.Wait()
	if e.imports != nil {
		informers.Go(func() { e.imports.RunWithContext(ctx) })
	}

	logger.V(2).Info("Waiting for caches to sync")
	if !cache.WaitForCacheSync(ctx.Done(), e.HasSynced) {
		if ctx.Err() != nil {
			return nil
		}
		return errors.New("import emulator: caches did not sync")
	}
	logger.Info("Import emulator running")

	var worker sync.WaitGroup
	worker.Go(func() {
		for e.processNext(ctx) {
		}
	})
	<-ctx.Done()
	e.queue.ShutDown()
	worker.Wait()
	logger.Info("Import emulator stopped")
	return nil
}

func (e *Emulator) addHandlers(logger klog.Logger) error {
	enqueue := func(kind itemKind) func(obj any) {
		return func(obj any) {
			if m, err := metaOf(obj); err == nil {
				e.queue.Add(queueItem{kind: kind, name: m.GetName()})
			}
		}
	}
	if _, err := e.streams.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue(streamItem),
		UpdateFunc: func(_, obj any) { enqueue(streamItem)(obj) },
		DeleteFunc: func(obj any) {
			if m, err := metaOf(obj); err == nil {
				e.mu.Lock()
				delete(e.imported, m.GetUID())
				e.mu.Unlock()
			}
		},
	}); err != nil {
		return fmt.Errorf("import emulator: adding ImageStream handler: %w", err)
	}
	if e.imports == nil {
		return nil
	}
	if _, err := e.imports.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue(importItem),
		// A relist may show a recreated object as an update; handled UIDs are
		// skipped, so enqueueing every update is harmless.
		UpdateFunc: func(_, obj any) { enqueue(importItem)(obj) },
		DeleteFunc: func(obj any) {
			if m, err := metaOf(obj); err == nil {
				e.mu.Lock()
				delete(e.handled, m.GetUID())
				e.mu.Unlock()
			}
		},
	}); err != nil {
		return fmt.Errorf("import emulator: adding ImageStreamImport handler: %w", err)
	}
	return nil
}

func metaOf(obj any) (metav1.Object, error) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("unexpected object %T", obj)
	}
	return m, nil
}

func (e *Emulator) processNext(ctx context.Context) bool {
	item, shutdown := e.queue.Get()
	if shutdown {
		return false
	}
	defer e.queue.Done(item)
	var err error
	switch item.kind {
	case streamItem:
		err = e.syncStream(ctx, item.name, nil, nil)
		if apierrors.IsNotFound(err) {
			err = nil
		}
	case importItem:
		err = e.processImportItem(ctx, item.name)
	}
	if err != nil {
		if ctx.Err() == nil {
			klog.FromContext(ctx).Error(err, "Processing failed, will retry", "kind", item.kind, "name", item.name)
			e.queue.AddRateLimited(item)
		}
		return true
	}
	e.queue.Forget(item)
	return true
}

func (e *Emulator) processImportItem(ctx context.Context, name string) error {
	obj, exists, err := e.imports.GetStore().GetByKey(e.namespace + "/" + name)
	if err != nil || !exists {
		return err
	}
	isi, ok := obj.(*imagev1.ImageStreamImport)
	if !ok {
		utilruntime.HandleErrorWithContext(ctx, nil, "Unexpected object in ImageStreamImport store", "type", fmt.Sprintf("%T", obj))
		return nil
	}
	return e.handleImport(ctx, isi)
}

// handleImport applies one ImageStreamImport: with spec.import it re-imports
// the requested tags of the stream named like the object, counts the request
// and then deletes the object. Applying is remembered by UID, so a retry
// after a failed delete does not import or count again.
func (e *Emulator) handleImport(ctx context.Context, isi *imagev1.ImageStreamImport) error {
	logger := klog.FromContext(ctx).WithValues("imageStreamImport", isi.Name)
	e.mu.Lock()
	done := isi.UID != "" && e.handled[isi.UID]
	e.mu.Unlock()

	if !done && isi.Spec.Import {
		requests, policies := importRequests(isi)
		proceed, err := e.checkImportTarget(ctx, isi)
		if err != nil {
			return err
		}
		if proceed {
			err = e.syncStream(ctx, isi.Name, requests, policies)
		}
		switch {
		case apierrors.IsNotFound(err):
			logger.Info("ImageStreamImport names no existing ImageStream")
		case err != nil:
			return err
		}
		e.mu.Lock()
		e.counts[isi.Name]++
		if isi.UID != "" {
			e.handled[isi.UID] = true
		}
		e.mu.Unlock()
		logger.V(2).Info("Processed ImageStreamImport", "tags", len(requests))
	}
	if e.removeImport == nil {
		return nil
	}
	if err := e.removeImport(ctx, isi.Name, isi.UID); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting ImageStreamImport %s: %w", isi.Name, err)
	}
	return nil
}

// checkImportTarget plays openshift-apiserver's consistency check of an import against the stream
// it names (imagestreamimport/rest.go): an import sent with the stream's uid or resourceVersion
// (apiserverhooks' annotations) does nothing when the stream is missing or another one (NotFound)
// or has changed since (Conflict); one sent with neither creates a missing stream, with a spec
// tag for each image as the handler's ensureSpecTag writes, and imports into it.
func (e *Emulator) checkImportTarget(ctx context.Context, isi *imagev1.ImageStreamImport) (bool, error) {
	logger := klog.FromContext(ctx).WithValues("imageStreamImport", isi.Name)
	uid, rv := isi.Annotations[apiserverhooks.RequestedUIDAnnotation], isi.Annotations[apiserverhooks.RequestedResourceVersionAnnotation]
	streams := e.client.ImageV1().ImageStreams(e.namespace)
	stream, err := streams.Get(ctx, isi.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) && (uid != "" || rv != ""):
		logger.Info("ImageStreamImport names a stream that no longer exists: the server answers NotFound")
		return false, nil
	case apierrors.IsNotFound(err):
		created := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: isi.Name, Namespace: e.namespace}}
		for _, img := range isi.Spec.Images {
			if img.To == nil {
				continue
			}
			from := img.From
			created.Spec.Tags = append(created.Spec.Tags, imagev1.TagReference{Name: img.To.Name, From: &from,
				ImportPolicy: img.ImportPolicy, ReferencePolicy: img.ReferencePolicy})
		}
		if _, err := streams.Create(ctx, created, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, err
		}
		logger.Info("ImageStreamImport without uid or resourceVersion created the missing stream, as the server does")
		return true, nil
	case err != nil:
		return false, err
	case uid != "" && uid != string(stream.UID):
		logger.Info("ImageStreamImport names another stream of that name: the server answers NotFound")
		return false, nil
	case rv != "" && rv != stream.ResourceVersion:
		logger.Info("ImageStreamImport names an older version of the stream: the server answers Conflict")
		return false, nil
	}
	return true, nil
}

// syncStream recomputes the status of stream name, importing the tags in
// requests with the import policies in policies, and writes what changed:
// first the spec and annotations the import rewrites (specAfterImport), then
// the status, recomputed against the stream that write returned. OpenShift
// writes both at once; here a watcher sees the two steps. The first attempt
// reads the informer cache; retries after a conflict read the API.
func (e *Emulator) syncStream(ctx context.Context, name string, requests map[string]string, policies map[string]imagev1.TagImportPolicy) error {
	logger := klog.FromContext(ctx).WithValues("imageStream", name)
	streams := e.client.ImageV1().ImageStreams(e.namespace)
	fromCache := true
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var stream *imagev1.ImageStream
		var err error
		if fromCache {
			fromCache = false
			stream, err = e.streamLister.ImageStreams(e.namespace).Get(name)
			if apierrors.IsNotFound(err) && requests != nil {
				// The cache may lag behind a stream created just before the request.
				stream, err = streams.Get(ctx, name, metav1.GetOptions{})
			}
		} else {
			stream, err = streams.Get(ctx, name, metav1.GetOptions{})
		}
		if err != nil {
			return err
		}

		readVersion := stream.ResourceVersion
		e.mu.Lock()
		r := e.rules.clone()
		previous := maps.Clone(e.imported[stream.UID])
		e.mu.Unlock()
		if e.mirrors != nil {
			// Read at every import, as the server reads its listers.
			r.pullSources = pullSources(mirrorsets.NewResolver(e.mirrors.list()))
		}

		now := metav1.NewTime(e.clock()).Rfc3339Copy()
		res := importedStatus(stream, r, now, previous, requests)
		if rewritten := specAfterImport(stream, res, policies, now); rewritten != nil {
			if stream, err = streams.Update(ctx, rewritten, metav1.UpdateOptions{}); err != nil {
				return err
			}
			logger.V(2).Info("Updated ImageStream spec after import", "generation", stream.Generation)
			res = importedStatus(stream, r, now, previous, requests)
		}
		if !equality.Semantic.DeepEqual(res.status, stream.Status) {
			updated := stream.DeepCopy()
			updated.Status = res.status
			if _, err := streams.UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
				return err
			}
			logger.V(2).Info("Updated ImageStream status", "tags", len(res.status.Tags))
		}
		for _, a := range res.attempts {
			if a.failed {
				logger.V(2).Info("Import failed", "tag", a.tag, "from", a.ref, "reason", a.reason, "message", a.message)
			} else {
				logger.V(2).Info("Imported", "tag", a.tag, "from", a.ref, "image", imageID(a.ref))
			}
		}

		e.mu.Lock()
		e.imported[stream.UID] = res.imported
		e.synced[name] = readVersion
		e.mu.Unlock()
		return nil
	})
}

// SyncedVersion is the resourceVersion of stream name that the emulator's last completed sync
// of it read: a test that waits for it knows the emulator has acted on that version, or
// decided that nothing was to be done.
func (e *Emulator) SyncedVersion(name string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.synced[name]
}
