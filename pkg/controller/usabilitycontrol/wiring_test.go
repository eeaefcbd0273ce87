package usabilitycontrol

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	configfake "github.com/openshift/client-go/config/clientset/versioned/fake"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	imagefake "github.com/openshift/client-go/image/clientset/versioned/fake"
	imageinformers "github.com/openshift/client-go/image/informers/externalversions"
	imagev1informers "github.com/openshift/client-go/image/informers/externalversions/image/v1"
	samplesfake "github.com/openshift/client-go/samples/clientset/versioned/fake"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions"
	templatefake "github.com/openshift/client-go/template/clientset/versioned/fake"
	templateinformers "github.com/openshift/client-go/template/informers/externalversions"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// handlersOf is an informer that is never run: the test hands the handlers registered on it
// the events itself, at once.
type handlersOf struct {
	cache.SharedIndexInformer
	mu       sync.Mutex
	handlers []cache.ResourceEventHandler
}

func (h *handlersOf) AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	h.mu.Lock()
	h.handlers = append(h.handlers, handler)
	h.mu.Unlock()
	return h.SharedIndexInformer.AddEventHandler(handler)
}

// each hands every handler registered so far one event.
func (h *handlersOf) each(event func(cache.ResourceEventHandler)) {
	h.mu.Lock()
	handlers := slices.Clone(h.handlers)
	h.mu.Unlock()
	for _, handler := range handlers {
		event(handler)
	}
}

// streamInformer is an ImageStreamInformer whose informer is a handlersOf.
type streamInformer struct {
	imagev1informers.ImageStreamInformer
	informer *handlersOf
}

func (s streamInformer) Informer() cache.SharedIndexInformer { return s.informer }

// wired are the Informers New is given, over fake clientsets: a Managed Config, the cluster's
// image config, no stream, no template, and nodes (the Nodes' informer is not run). The
// APIServices' and the imagestreams' informers are never run: their events are handed by hand.
type wired struct {
	inf         Informers
	apiServices *handlersOf
	streams     *handlersOf
}

func newWired(nodes ...runtime.Object) *wired {
	cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}, Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed}}
	configs := samplesinformers.NewSharedInformerFactory(samplesfake.NewClientset(), 0).Samples().V1().Configs()
	_ = configs.Informer().GetIndexer().Add(cfg)
	imageConfigs := configinformers.NewSharedInformerFactory(configfake.NewClientset(), 0).Config().V1().Images()
	_ = imageConfigs.Informer().GetIndexer().Add(&configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}})
	streams := imageinformers.NewSharedInformerFactory(imagefake.NewClientset(), 0).Image().V1().ImageStreams()
	w := &wired{
		apiServices: &handlersOf{SharedIndexInformer: cache.NewSharedIndexInformer(&cache.ListWatch{}, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})},
		streams:     &handlersOf{SharedIndexInformer: streams.Informer()},
	}
	var lists atomic.Int32
	w.inf = Informers{
		Config:      configs,
		ImageConfig: imageConfigs,
		ImageStream: streamInformer{ImageStreamInformer: streams, informer: w.streams},
		Template:    templateinformers.NewSharedInformerFactory(templatefake.NewClientset(), 0).Template().V1().Templates(),
		APIServices: w.apiServices,
		Nodes:       nodeInformer(nodes, nil, &lists),
	}
	return w
}

// runNodes runs the Nodes' informer until the test ends.
func (w *wired) runNodes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go w.inf.Nodes.Run(ctx.Done())
}

// withReason are the names of the samples c's verdicts give a reason of code.
func withReason(c *Controller, code string) []string {
	var names []string
	for _, v := range c.verdicts.All() {
		if slices.ContainsFunc(v.Reasons, func(r usability.Reason) bool { return r.Code == code }) {
			names = append(names, v.Name)
		}
	}
	return names
}

func apiService(rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "v1.build.openshift.io", ResourceVersion: rv}}
}

// TestNewWiresTheControllerToItsInformers: the controller New builds judges the samples by the
// Config, the nodes and discovery its informers and client give, and reads discovery again when
// an APIService changes: else a cluster would get no verdict, or keep one after a group came back.
func TestNewWiresTheControllerToItsInformers(t *testing.T) {
	if ctrl, err := New(configspectest.X86Only{}, newWired().inf, servingAllBut(), &images{}, NewVerdicts(), events.NewInMemoryRecorder("test", clocktesting.NewFakePassiveClock(time.Now()))); err != nil || ctrl == nil {
		t.Fatalf("New: %v, %v; want a controller", ctrl, err)
	}

	w := newWired(node("node-arm64", "arm64"))
	disc := servingAllBut("apps.openshift.io")
	c, err := newController(configspectest.X86Only{}, w.inf, disc, &images{}, NewVerdicts())
	if err != nil || c == nil {
		t.Fatalf("newController: %v, %v; want a controller", c, err)
	}
	w.runNodes(t)
	waitFor(t, "listed", c.nodesListed)
	if got := c.nodes.List(); !slices.Equal(got, []string{"arm64"}) {
		t.Errorf("the nodes' architectures %v, want arm64", got)
	}
	syncCtx := factory.NewSyncContext("test", events.NewInMemoryRecorder("test", clocktesting.NewFakePassiveClock(time.Now())))
	if err := c.sync(context.Background(), syncCtx); err != nil {
		t.Fatal(err)
	}
	if len(withReason(c, usability.KindNotServed)) == 0 {
		t.Fatalf("no template marked with apps.openshift.io not served; verdicts ready %v", c.verdicts.Ready())
	}
	disc.took()
	if err := c.sync(context.Background(), syncCtx); err != nil || len(disc.took()) != 0 {
		t.Errorf("a second sync with no APIService change: %v, or discovery read again", err)
	}

	*disc = *servingAllBut()
	w.apiServices.each(func(h cache.ResourceEventHandler) { h.OnUpdate(apiService("7"), apiService("8")) })
	if err := c.sync(context.Background(), syncCtx); err != nil {
		t.Fatal(err)
	}
	if marked := withReason(c, usability.KindNotServed); len(marked) != 0 {
		t.Errorf("apps.openshift.io served again after an APIService changed, and still marked not served: %v", marked)
	}
}

// queueOf is a sync context whose queue records the keys added later and after how long.
type queueOf struct {
	workqueue.RateLimitingInterface
	mu    sync.Mutex
	after []time.Duration
}

func newQueueOf(t *testing.T) *queueOf {
	q := &queueOf{RateLimitingInterface: workqueue.NewTypedRateLimitingQueue[any](workqueue.DefaultTypedControllerRateLimiter[any]())}
	t.Cleanup(q.ShutDown)
	return q
}

func (q *queueOf) AddAfter(item any, d time.Duration) {
	q.mu.Lock()
	q.after = append(q.after, d)
	q.mu.Unlock()
	q.RateLimitingInterface.AddAfter(item, d)
}

// later takes the delays of the keys added later since the last call.
func (q *queueOf) later() []time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.after
	q.after = nil
	return out
}

func (q *queueOf) Queue() workqueue.RateLimitingInterface { return q }
func (q *queueOf) QueueKey() string                       { return factory.DefaultQueueKey }
func (q *queueOf) Recorder() events.Recorder {
	return events.NewInMemoryRecorder("test", clocktesting.NewFakePassiveClock(time.Now()))
}

// take takes the key off the queue as the worker does, and reports whether one was there.
func (q *queueOf) take() bool {
	if q.Len() == 0 {
		return false
	}
	key, _ := q.Get()
	q.Done(key)
	return true
}

// TestAStreamsEventBringsTheSyncBackLaterNotAtOnce: the imports of an install come in bursts of
// hundreds of stream events, and each sync judges every sample; so a stream's event brings the
// sync back StreamEventDelay later, once for all the events meanwhile, not at each. A resync of
// the streams brings nothing; an APIService change, once started, brings the sync at once.
func TestAStreamsEventBringsTheSyncBackLaterNotAtOnce(t *testing.T) {
	w := newWired()
	c, err := newController(configspectest.X86Only{}, w.inf, servingAllBut(), &images{}, NewVerdicts())
	if err != nil {
		t.Fatal(err)
	}
	w.runNodes(t)
	q := newQueueOf(t)
	if err := c.started(w.inf)(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	if !q.take() {
		t.Fatal("no sync when the controller started")
	}
	ruby := func(rv string) *imagev1.ImageStream {
		return &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "ruby", Namespace: names.SamplesNamespace, ResourceVersion: rv}}
	}
	for _, event := range []struct {
		name string
		hand func(cache.ResourceEventHandler)
	}{
		{"created", func(h cache.ResourceEventHandler) { h.OnAdd(ruby("1"), false) }},
		{"imported", func(h cache.ResourceEventHandler) { h.OnUpdate(ruby("1"), ruby("2")) }},
		{"deleted", func(h cache.ResourceEventHandler) { h.OnDelete(ruby("2")) }},
	} {
		w.streams.each(event.hand)
		if got := q.later(); len(got) != 1 || got[0] != StreamEventDelay || got[0] <= 0 {
			t.Errorf("a stream %s: the sync brought back after %v, want once, %v later", event.name, got, StreamEventDelay)
		}
		if q.Len() != 0 {
			t.Errorf("a stream %s: the sync brought back at once", event.name)
		}
	}
	w.streams.each(func(h cache.ResourceEventHandler) { h.OnUpdate(ruby("2"), ruby("2")) })
	if got := q.later(); len(got) != 0 {
		t.Errorf("a resync of the streams brought the sync back after %v", got)
	}

	w.apiServices.each(func(h cache.ResourceEventHandler) { h.OnUpdate(apiService("7"), apiService("8")) })
	if !q.take() {
		t.Error("an APIService change after the start did not bring the sync back")
	}
}

// TestOnAClusterWithoutNodesTheSyncComesBackWhenTheirListEnds: the first verdicts, which every
// sample write waits for, wait for the nodes' first list; a cluster without nodes gives no event
// when it ends, and its samples would never be written if that end did not bring the sync back.
func TestOnAClusterWithoutNodesTheSyncComesBackWhenTheirListEnds(t *testing.T) {
	w := newWired()
	c, err := newController(configspectest.X86Only{}, w.inf, servingAllBut(), &images{}, NewVerdicts())
	if err != nil {
		t.Fatal(err)
	}
	q := newQueueOf(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.started(w.inf)(ctx, q) }()
	waitFor(t, "synced at the start", q.take)
	if err := c.sync(ctx, q); err != nil || c.verdicts.Ready() {
		t.Fatalf("a sync before the nodes are listed: %v, verdicts ready %v; want none", err, c.verdicts.Ready())
	}
	select {
	case err := <-done:
		t.Fatalf("the start returned (%v) before the nodes were listed", err)
	default:
	}

	w.runNodes(t)
	waitFor(t, "synced once the nodes are listed", q.take)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := c.sync(ctx, q); err != nil || !c.verdicts.Ready() {
		t.Errorf("the sync once the nodes are listed: %v, verdicts ready %v; want them made", err, c.verdicts.Ready())
	}
}
