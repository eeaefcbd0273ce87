package importscontrol

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	configlisters "github.com/openshift/client-go/config/listers/config/v1"
	imagefake "github.com/openshift/client-go/image/clientset/versioned/fake"
	imagelisters "github.com/openshift/client-go/image/listers/image/v1"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/configreader"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/ownwrites"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/trigger"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// TestRecordWritesOnlyWhatDiffers states, for each starting point, the exact writes record makes.
func TestRecordWritesOnlyWhatDiffers(t *testing.T) {
	failed := map[string]string{"3.11": "manifest unknown"}
	ours := imports.ErrorConfigMap(names.OperatorNamespace, "python", failed, time.Time{})
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "python", Namespace: names.OperatorNamespace}}
	stale := ours.DeepCopy()
	stale.Data = map[string]string{"3.9": "old"}
	cases := []struct {
		name   string
		live   *corev1.ConfigMap
		failed map[string]string
		want   []string // verbs
		// createdBefore: an earlier sync created the record, and the cache does not show it yet.
		createdBefore bool
	}{
		{"nothing failed, no record: no write", nil, nil, nil, false},
		{"nothing failed, a record: delete", ours, nil, []string{"delete"}, false},
		{"nothing failed, someone else's ConfigMap: left alone", foreign, nil, nil, false},
		{"failures, no record: create", nil, failed, []string{"create"}, false},
		{"failures, same record: no write", ours, failed, nil, false},
		{"failures, other record: update", stale, failed, []string{"update"}, false},
		{"failures, someone else's ConfigMap: left alone", foreign, failed, nil, false},
		{"failures, record just created but not in the cache yet: no second create", nil, failed, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			client := fake.NewSimpleClientset()
			if tc.live != nil {
				_ = indexer.Add(tc.live)
				client = fake.NewSimpleClientset(tc.live)
			}
			c := &Controller{
				configMaps:      corelisters.NewConfigMapLister(indexer).ConfigMaps(names.OperatorNamespace),
				configMapClient: client.CoreV1().ConfigMaps(names.OperatorNamespace),
				writtenRecords:  ownwrites.NewForStore[*corev1.ConfigMap](indexer, names.OperatorNamespace, corev1.Resource("configmaps")),
				clock:           clock.RealClock{},
			}
			if tc.createdBefore {
				c.writtenRecords.Wrote(ours.DeepCopy())
			}
			syncCtx := factory.NewSyncContext("test", events.NewInMemoryRecorder("test", clock.RealClock{}))
			defer syncCtx.Queue().ShutDown()
			if err := c.record(context.Background(), syncCtx, "python", tc.failed); err != nil {
				t.Fatalf("record: %v", err)
			}
			var verbs []string
			for _, a := range client.Actions() {
				if a.GetVerb() != "list" && a.GetVerb() != "watch" {
					verbs = append(verbs, a.GetVerb())
				}
			}
			if len(verbs) != len(tc.want) || (len(verbs) > 0 && verbs[0] != tc.want[0]) {
				t.Errorf("writes = %v, want %v", verbs, tc.want)
			}
		})
	}
}

// TestRecordKeepsWhenTheFailuresBegan: the record says when the stream began failing, and an
// update for other failures keeps that time, so that it survives both a change of the failed tags
// and the restart of the operator, which reads it back from the record.
func TestRecordKeepsWhenTheFailuresBegan(t *testing.T) {
	began := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	client := fake.NewSimpleClientset()
	clk := clocktesting.NewFakeClock(began)
	c := &Controller{
		configMaps:      corelisters.NewConfigMapLister(indexer).ConfigMaps(names.OperatorNamespace),
		configMapClient: client.CoreV1().ConfigMaps(names.OperatorNamespace),
		writtenRecords:  ownwrites.NewForStore[*corev1.ConfigMap](indexer, names.OperatorNamespace, corev1.Resource("configmaps")),
		clock:           clk,
	}
	syncCtx := factory.NewSyncContext("test", events.NewInMemoryRecorder("test", clock.RealClock{}))
	defer syncCtx.Queue().ShutDown()
	for i, failed := range []map[string]string{{"3.11": "manifest unknown"}, {"3.12": "unauthorized"}} {
		if err := c.record(context.Background(), syncCtx, "python", failed); err != nil {
			t.Fatalf("record: %v", err)
		}
		live, err := client.CoreV1().ConfigMaps(names.OperatorNamespace).Get(context.Background(), "python", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := imports.FailingSince(live); !got.Equal(began) || live.Data[slices.Collect(maps.Keys(failed))[0]] == "" {
			t.Errorf("record %d: failing since %s, data %v; want since %s", i, got, live.Data, began)
		}
		_ = indexer.Update(live)
		clk.Step(time.Hour)
	}
}

func TestErrorRecordFilterSeesTombstones(t *testing.T) {
	record := imports.ErrorConfigMap(names.OperatorNamespace, "python", map[string]string{"3.11": "not found"}, time.Time{})
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt", Namespace: names.OperatorNamespace}}
	for _, tc := range []struct {
		name string
		obj  interface{}
		want bool
	}{
		{"an error record", record, true},
		{"another ConfigMap", other, false},
		{"an error record deleted while the informer relisted", cache.DeletedFinalStateUnknown{Key: "openshift-cluster-samples-operator/python", Obj: record}, true},
		{"another ConfigMap deleted while the informer relisted", cache.DeletedFinalStateUnknown{Key: "openshift-cluster-samples-operator/kube-root-ca.crt", Obj: other}, false},
	} {
		if got := isErrorRecord(tc.obj); got != tc.want {
			t.Errorf("%s: isErrorRecord = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRetryWaitsForAPendingRewrite: a due retry is sent for a stream the operator leaves as it
// is, and skipped, with the next one scheduled, for a stream whose failed tag is about to point
// at another image.
func TestRetryWaitsForAPendingRewrite(t *testing.T) {
	tag := func(ref string) []imagev1.TagReference {
		return []imagev1.TagReference{{Name: "3.3", From: &corev1.ObjectReference{Kind: "DockerImage", Name: ref}}}
	}
	live := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "ruby", Namespace: names.SamplesNamespace, UID: "u1", ResourceVersion: "7"},
		Spec: imagev1.ImageStreamSpec{Tags: tag("registry.redhat.io/ubi9/ruby-33:latest")}}
	failed := map[string]string{"3.3": "not found"}
	for _, tc := range []struct {
		name      string
		wantRef   string
		wantSends int
	}{
		{"the same image wanted: retried", "registry.redhat.io/ubi9/ruby-33:latest", 1},
		{"another image wanted (samplesRegistry changed): skipped", "mirror.local:5000/ubi9/ruby-33:latest", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, client, clk := retryingController()
			dueNow(c, clk, "ruby", failed)
			now := clk.Now()
			want := live.DeepCopy()
			want.Spec.Tags = tag(tc.wantRef)
			syncCtx := factory.NewSyncContext("test", events.NewInMemoryRecorder("test", clock.RealClock{}))
			defer syncCtx.Queue().ShutDown()
			if err := c.retryWhenDue(context.Background(), syncCtx, live, want, failed); err != nil {
				t.Fatalf("retryWhenDue: %v", err)
			}
			sends := 0
			for _, a := range client.Actions() {
				if a.GetVerb() == "create" && a.GetResource().Resource == "imagestreamimports" {
					sends++
				}
			}
			if sends != tc.wantSends {
				t.Errorf("ImageStreamImports sent = %d, want %d", sends, tc.wantSends)
			}
			// Either way the next turn is a step of the backoff away, not at once: no busy loop.
			if next := c.schedule.Due("ruby", failed); next.Sub(now) < 50*time.Second {
				t.Errorf("next retry in %s, want the backoff's second step, about a minute", next.Sub(now))
			}
		})
	}
}

// keyed is the sync context of one queue key.
type keyed struct {
	factory.SyncContext
	key string
}

func (k keyed) QueueKey() string { return k.key }

// TestRetryRunsForAStreamTheAllowListBlocks: samplesRegistry names a mirror that
// allowedRegistriesForImport does not allow, so the samples controller leaves the stream as it
// was installed, pointing at the inventory's registries. A due retry of its failed tag is sent as
// for any other stream: no rewrite is coming to wait for. The server's refusal of a retry as
// invalid (the allow-list refusing the live references) schedules the next turn, not a hot loop.
func TestRetryRunsForAStreamTheAllowListBlocks(t *testing.T) {
	inv, err := configspectest.X86Only{}.For("x86_64")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster", UID: "cfg", ResourceVersion: "3"},
		Spec: samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"},
			SamplesRegistry: "mirror.example.com:5000"},
	}
	var allowed []configv1.RegistryLocation
	for _, r := range inv.SourceRegistries() {
		allowed = append(allowed, configv1.RegistryLocation{DomainName: r})
	}
	image := &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster", ResourceVersion: "5"},
		Spec: configv1.ImageSpec{AllowedRegistriesForImport: allowed}}
	eval := configspec.Evaluate(cfg, configspectest.X86Only{}, image)
	if eval.Mode != desired.Managed || len(eval.RefusedOnCreate) == 0 {
		t.Fatalf("evaluation: mode %v, blocked %v; want Managed with the mirror's streams blocked", eval.Mode, eval.RefusedOnCreate)
	}
	var name, tag string
	var live *imagev1.ImageStream
	for _, n := range inv.ImageStreamNames() {
		installed, _, _ := desired.ImageStream(&samplesv1.ConfigSpec{}, desired.Choice{}, inv, n)
		for _, tr := range installed.Spec.Tags {
			if _, blocked := eval.Blocks(n, installed); blocked && tr.From != nil && tr.From.Kind == "DockerImage" {
				name, tag, live = n, tr.Name, installed
				break
			}
		}
		if live != nil {
			break
		}
	}
	if live == nil {
		t.Fatal("no blocked imagestream with a DockerImage tag in the inventory")
	}
	live.Namespace, live.UID, live.ResourceVersion = names.SamplesNamespace, "u1", "7"
	live.Status.Tags = []imagev1.NamedTagEventList{{Tag: tag, Conditions: []imagev1.TagEventCondition{
		{Type: imagev1.ImportSuccess, Status: corev1.ConditionFalse, Message: "unauthorized", Generation: 2}}}}

	for _, tc := range []struct {
		name       string
		refuse     bool
		wantCounts int
	}{
		{"the retry is sent and counted", false, 1},
		{"a retry refused as invalid waits for the next turn", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			images := imagefake.NewSimpleClientset()
			if tc.refuse {
				images.PrependReactor("create", "imagestreamimports", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: "image.openshift.io", Kind: "ImageStreamImport"}, name, nil)
				})
			}
			clk := clocktesting.NewFakeClock(time.Now())
			retries := 0
			records := storeOf()
			c := &Controller{
				clock:           clk,
				schedule:        imports.NewRetrySchedule(15*time.Minute, clk),
				countRetry:      func(string) { retries++ },
				imageStreams:    imagelisters.NewImageStreamLister(storeOf(live)).ImageStreams(names.SamplesNamespace),
				configMaps:      corelisters.NewConfigMapLister(records).ConfigMaps(names.OperatorNamespace),
				configMapClient: fake.NewSimpleClientset().CoreV1().ConfigMaps(names.OperatorNamespace),
				importClient:    images.ImageV1().ImageStreamImports(names.SamplesNamespace),
				writtenRecords:  ownwrites.NewForStore[*corev1.ConfigMap](records, names.OperatorNamespace, corev1.Resource("configmaps")),
			}
			dueNow(c, clk, name, imports.FailedTags(live))
			now := clk.Now()
			c.config = configreader.New(sampleslisters.NewConfigLister(storeOf(cfg)), configlisters.NewImageLister(storeOf(image)), configspectest.X86Only{})
			syncCtx := factory.NewSyncContext("test", events.NewInMemoryRecorder("test", clock.RealClock{}))
			defer syncCtx.Queue().ShutDown()
			if err := c.sync(context.Background(), keyed{syncCtx, name}); err != nil {
				t.Fatalf("sync: %v", err)
			}
			var sent []string
			for _, a := range images.Actions() {
				if a.GetVerb() == "create" && a.GetResource().Resource == "imagestreamimports" {
					isi := a.(clienttesting.CreateAction).GetObject().(*imagev1.ImageStreamImport)
					for _, img := range isi.Spec.Images {
						sent = append(sent, img.To.Name+"="+img.From.Name)
					}
				}
			}
			if len(sent) != 1 || !strings.HasPrefix(sent[0], tag+"=") || strings.Contains(sent[0], "mirror.example.com") {
				t.Errorf("imports sent for %s: %v, want one of tag %s from its live reference", name, sent, tag)
			}
			if retries != tc.wantCounts {
				t.Errorf("retries counted %d, want %d", retries, tc.wantCounts)
			}
			if next := c.schedule.Due(name, imports.FailedTags(live)); next.Sub(now) < 50*time.Second {
				t.Errorf("next retry in %s, want the backoff's second step, about a minute", next.Sub(now))
			}
		})
	}
}

// retryingController is a controller that only retries, through a fake image client, on a fake
// clock, with the shipped 15-minute cap.
func retryingController() (*Controller, *imagefake.Clientset, *clocktesting.FakeClock) {
	client := imagefake.NewSimpleClientset()
	clk := clocktesting.NewFakeClock(time.Now())
	return &Controller{
		clock:        clk,
		countRetry:   func(string) {},
		importClient: client.ImageV1().ImageStreamImports(names.SamplesNamespace),
		schedule:     imports.NewRetrySchedule(DefaultRetryInterval, clk),
	}, client, clk
}

// failingRuby is a stream whose one tag fails to import.
func failingRuby() (*imagev1.ImageStream, map[string]string) {
	return &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "ruby", Namespace: names.SamplesNamespace, UID: "u1", ResourceVersion: "7"},
			Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{{Name: "3.3",
				From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ubi9/ruby-33:latest"}}}}},
		map[string]string{"3.3": "unauthorized: authentication required"}
}

// dueNow puts the stream's failure on the schedule and moves the clock to its first retry.
func dueNow(c *Controller, clk *clocktesting.FakeClock, stream string, failed map[string]string) {
	clk.SetTime(c.schedule.Due(stream, failed))
}

// TestAFixRetriesEveryFailingStreamAtOnce: a stream whose next retry is minutes away is queued
// by the retry-all key and its retry is sent at once; a stream without failures is not queued.
func TestAFixRetriesEveryFailingStreamAtOnce(t *testing.T) {
	live, failed := failingRuby()
	c, client, clk := retryingController()
	syncCtx := factory.NewSyncContext("test", events.NewInMemoryRecorder("test", clock.RealClock{}))
	defer syncCtx.Queue().ShutDown()
	for i := 0; i < 5; i++ {
		dueNow(c, clk, "ruby", failed)
		if err := c.retryWhenDue(context.Background(), syncCtx, live, live, failed); err != nil {
			t.Fatal(err)
		}
	}
	clk.Step(time.Minute)
	if wait := c.schedule.Due("ruby", failed).Sub(clk.Now()); wait < 5*time.Minute {
		t.Fatalf("after 5 retries the next is in %v, want the backoff's many minutes", wait)
	}
	before := len(client.Actions())
	for syncCtx.Queue().Len() > 0 { // what the retries queued for later is not the point here
		key, _ := syncCtx.Queue().Get()
		syncCtx.Queue().Done(key)
	}
	if err := c.sync(context.Background(), keyed{syncCtx, retryAllKey}); err != nil {
		t.Fatal(err)
	}
	if n := syncCtx.Queue().Len(); n != 1 {
		t.Fatalf("%d keys queued by the retry-all key, want ruby alone", n)
	}
	if key, _ := syncCtx.Queue().Get(); key != "ruby" {
		t.Fatalf("queued %q, want ruby", key)
	}
	if err := c.retryWhenDue(context.Background(), syncCtx, live, live, failed); err != nil {
		t.Fatal(err)
	}
	if sent := len(client.Actions()) - before; sent != 1 {
		t.Errorf("%d imports sent after the fix, want 1 at once", sent)
	}
	if next := c.schedule.Due("ruby", failed).Sub(clk.Now()); next > 33*time.Second {
		t.Errorf("the retry after the fix's is in %v, want the backoff started again (about 30 s)", next)
	}
}

// afterSync does with a key what library-go's factory does once its sync returns
// (processNextWorkItem in factory/base_controller.go): an error requeues the key through the
// queue's rate limiter, nil forgets the key's failures.
func afterSync(queue workqueue.RateLimitingInterface, key string, err error) {
	if err != nil {
		queue.AddRateLimited(key)
		return
	}
	queue.Forget(key)
}

// TestAConflictBacksOffThroughTheFactory: an import answered with a conflict (the stream changed
// since the cache saw it) is sent again once the cache can have the newer version, each time
// later: the key's failures add up in the factory's rate limiter, and the retry's own turn is not
// spent.
func TestAConflictBacksOffThroughTheFactory(t *testing.T) {
	live, failed := failingRuby()
	c, client, clk := retryingController()
	client.PrependReactor("create", "imagestreamimports", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "image.openshift.io", Resource: "imagestreamimports"}, "ruby", nil)
	})
	counted := 0
	c.countRetry = func(string) { counted++ }
	syncCtx := factory.NewSyncContext("test", events.NewInMemoryRecorder("test", clock.RealClock{}))
	defer syncCtx.Queue().ShutDown()
	dueNow(c, clk, "ruby", failed)
	for i := 1; i <= 3; i++ {
		afterSync(syncCtx.Queue(), "ruby", c.retryWhenDue(context.Background(), syncCtx, live, live, failed))
		if n := syncCtx.Queue().NumRequeues("ruby"); n != i {
			t.Fatalf("after conflict %d the factory's queue counts %d failures of ruby, want %d: its backoff started over", i, n, i)
		}
	}
	if due := c.schedule.Due("ruby", failed); due.After(clk.Now()) {
		t.Errorf("a conflict took the stream's turn: next retry in %v, want still due", due.Sub(clk.Now()))
	}
	// The factory tells the requeue it is asked for from a failure by identity (==, not
	// errors.Is): the raw 409, or the sentinel wrapped, would be logged as a failed sync at
	// every conflict.
	if err := c.retryWhenDue(context.Background(), syncCtx, live, live, failed); err != factory.SyntheticRequeueError {
		t.Errorf("a conflict returned %v (%T), want factory.SyntheticRequeueError itself", err, err)
	}
	if counted != 0 {
		t.Errorf("%d retries counted, want none: none was accepted", counted)
	}
}

// TestNoRetryBeforeItsTurn: whatever brings a failing stream back to the queue before its turn
// (its status writes, the record's events, a resync) sends nothing; the key comes back at the
// turn, which sends one import, and the next turn is the backoff's next step.
func TestNoRetryBeforeItsTurn(t *testing.T) {
	live, failed := failingRuby()
	c, client, clk := retryingController()
	syncCtx := newClockedSyncContext(clk)
	defer syncCtx.Queue().ShutDown()
	sync := func() {
		t.Helper()
		if err := c.retryWhenDue(context.Background(), syncCtx, live, live, failed); err != nil {
			t.Fatal(err)
		}
	}
	failedAt := clk.Now()
	turns := []struct{ from, to time.Duration }{
		{imports.FirstRetryDelay, imports.FirstRetryDelay * 11 / 10},
		{2 * imports.FirstRetryDelay, 2 * imports.FirstRetryDelay * 11 / 10},
	}
	for i, turn := range turns {
		// Looked at again and again before the turn: at once, and up to a second short of it.
		for _, after := range []time.Duration{0, time.Second, turn.from / 2, turn.from - time.Second} {
			clk.SetTime(failedAt.Add(after))
			sync()
			if sent := importsSent(client); sent != i {
				t.Fatalf("turn %d: %d imports sent %v after the failure or the last retry, want %d: the retry came before its turn (%v)", i+1, sent, after, i, turn.from)
			}
		}
		if keys := drain(syncCtx.Queue()); len(keys) != 0 {
			t.Fatalf("turn %d: keys %v back a second before the turn", i+1, keys)
		}
		clk.SetTime(failedAt.Add(turn.to))
		if keys := drain(syncCtx.Queue()); len(keys) == 0 || keys[0] != "ruby" {
			t.Fatalf("turn %d: at the turn's latest the queue handed out %v, want ruby", i+1, keys)
		}
		sync()
		if sent := importsSent(client); sent != i+1 {
			t.Fatalf("turn %d: %d imports sent at the turn, want %d", i+1, sent, i+1)
		}
		failedAt = clk.Now()
	}
}

// fakeInformer hands the handlers a trigger registers to the test.
type fakeInformer struct{ handlers []cache.ResourceEventHandler }

func (f *fakeInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	f.handlers = append(f.handlers, h)
	return nil, nil
}

func (f *fakeInformer) created(obj interface{}) {
	for _, h := range f.handlers {
		h.OnAdd(obj, false)
	}
}

// clockedSyncContext is a sync context whose queue's delays run on a fake clock.
type clockedSyncContext struct {
	factory.SyncContext
	queue workqueue.RateLimitingInterface
}

func (c clockedSyncContext) Queue() workqueue.RateLimitingInterface { return c.queue }

func newClockedSyncContext(clk *clocktesting.FakeClock) clockedSyncContext {
	return clockedSyncContext{
		SyncContext: factory.NewSyncContext("test", events.NewInMemoryRecorder("test", clock.RealClock{})),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig[any](workqueue.DefaultTypedControllerRateLimiter[any](),
			workqueue.TypedRateLimitingQueueConfig[any]{Clock: clk}),
	}
}

// drain returns the keys the queue hands out within a short wait (the delaying queue moves a
// due key in from a goroutine of its own).
func drain(queue workqueue.RateLimitingInterface) []string {
	var keys []string
	deadline := time.Now().Add(200 * time.Millisecond)
	for time.Now().Before(deadline) {
		if queue.Len() == 0 {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		key, _ := queue.Get()
		queue.Done(key)
		queue.Forget(key)
		keys = append(keys, key.(string))
	}
	return keys
}

// TestEveryTriggersLaterRetryKeepsItsTime: the pull secret asks for a retry now and another
// after its rollout (5 minutes); a mirror set created a minute later asks for one now and another
// 3 s later. Each later retry comes at its own time: the mirror set's does not replace the pull
// secret's, and a trigger without a later retry queues only the one now.
func TestEveryTriggersLaterRetryKeepsItsTime(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC))
	pullSecret, mirrorSets, config := &fakeInformer{}, &fakeInformer{}, &fakeInformer{}
	part := func(o interface{}) interface{} { return o.(metav1.Object).GetName() }
	c := &Controller{clock: clk, fixes: []trigger.Source{
		{Kind: "Secret", Informer: pullSecret, Part: part, Again: 5 * time.Minute},
		{Kind: "ImageTagMirrorSet", Informer: mirrorSets, Part: part, Again: 3 * time.Second},
		{Kind: "Config", Informer: config, Part: part},
	}}
	syncCtx := newClockedSyncContext(clk)
	defer syncCtx.queue.ShutDown()
	if err := c.watchFixes(context.Background(), syncCtx); err != nil {
		t.Fatal(err)
	}
	retriesAll := func(keys []string) int {
		n := 0
		for _, k := range keys {
			if strings.HasPrefix(k, retryAllKey) {
				n++
			}
		}
		return n
	}
	step := func(what string, d time.Duration, want int) {
		t.Helper()
		clk.Step(d)
		if got := retriesAll(drain(syncCtx.queue)); got != want {
			t.Errorf("%s: %d retries of every failing stream, want %d", what, got, want)
		}
	}

	pullSecret.created(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: "openshift-config", ResourceVersion: "1"}})
	step("the pull secret changed", 0, 1)
	step("the minute after", time.Minute, 0)
	mirrorSets.created(&configv1.ImageTagMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "mirrors", ResourceVersion: "2"}})
	step("a mirror set created", 0, 1)
	step("3 s after the mirror set", 3*time.Second, 1)
	step("until the pull secret's rollout is done", 5*time.Minute-time.Minute-3*time.Second-time.Second, 0)
	step("once the pull secret's rollout is done", time.Second, 1)
	config.created(&samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster", ResourceVersion: "3"}})
	step("samplesRegistry changed", 0, 1)
	step("the hour after samplesRegistry changed", time.Hour, 0)
}

// TestALaterRetryRetriesEveryFailingStream: the key of a retry that a trigger asked for later
// queues every failing stream, as the one of the retry at once does.
func TestALaterRetryRetriesEveryFailingStream(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC))
	c := &Controller{clock: clk, schedule: imports.NewRetrySchedule(DefaultRetryInterval, clk)}
	c.schedule.Due("ruby", map[string]string{"3.3": "unauthorized"})
	syncCtx := newClockedSyncContext(clk)
	defer syncCtx.queue.ShutDown()
	c.retryAllFor(syncCtx.queue, trigger.Change{Kind: "Secret", Again: time.Minute})
	clk.Step(time.Minute)
	keys := drain(syncCtx.queue)
	if len(keys) != 2 {
		t.Fatalf("queued %q, want the retry at once and the one a minute later", keys)
	}
	for _, key := range keys {
		if err := c.sync(context.Background(), keyed{syncCtx, key}); err != nil {
			t.Fatal(err)
		}
		if got := drain(syncCtx.queue); len(got) != 1 || got[0] != "ruby" {
			t.Errorf("key %q queued %q, want ruby", key, got)
		}
	}
}

// TestARetryTheServerFailsTakesItsTurn: whatever openshift-apiserver answers a retry with (an
// outage's 503 or 504, a gateway's 403, a 429, the allow-list's 422), the attempt spends the
// stream's turn: the sync returns no error (the factory's backoff, 5 ms and doubling, would send
// the next import to the failing server at once and stay grown after the outage), the key comes
// back when the schedule says, and no second import goes out before then.
func TestARetryTheServerFailsTakesItsTurn(t *testing.T) {
	gr := schema.GroupResource{Group: "image.openshift.io", Resource: "imagestreamimports"}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"unavailable", apierrors.NewServiceUnavailable("openshift-apiserver is restarting")},
		{"gateway timeout", apierrors.NewTimeoutError("the import took too long", 0)},
		{"internal error", apierrors.NewInternalError(errFailedImport)},
		{"forbidden by a gateway", apierrors.NewForbidden(gr, "ruby", errFailedImport)},
		{"too many requests", apierrors.NewTooManyRequests("slow down", 1)},
		{"refused as invalid", apierrors.NewInvalid(schema.GroupKind{Group: "image.openshift.io", Kind: "ImageStreamImport"}, "ruby", nil)},
		{"no answer at all", errFailedImport},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live, failed := failingRuby()
			c, client, clk := retryingController()
			client.PrependReactor("create", "imagestreamimports", func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, tc.err
			})
			syncCtx := newClockedSyncContext(clk)
			defer syncCtx.Queue().ShutDown()
			dueNow(c, clk, "ruby", failed)
			attempted := clk.Now()
			err := c.retryWhenDue(context.Background(), syncCtx, live, live, failed)
			if err != nil {
				t.Fatalf("the sync returned %v: the factory would send the import again on its own backoff", err)
			}
			afterSync(syncCtx.Queue(), "ruby", err)
			next := c.schedule.Due("ruby", failed)
			if wait := next.Sub(attempted); wait < 50*time.Second {
				t.Errorf("next retry %v after the failed one, want the backoff's second step (about a minute)", wait)
			}
			if err := c.retryWhenDue(context.Background(), syncCtx, live, live, failed); err != nil {
				t.Fatal(err)
			}
			if sent := importsSent(client); sent != 1 {
				t.Errorf("%d imports sent before the next turn, want 1", sent)
			}
			if keys := drain(syncCtx.Queue()); len(keys) != 0 {
				t.Errorf("keys %v back before the next turn", keys)
			}
			clk.SetTime(next)
			if keys := drain(syncCtx.Queue()); len(keys) != 1 || keys[0] != "ruby" {
				t.Errorf("at the next turn the queue handed out %v, want ruby", keys)
			}
		})
	}
}

var errFailedImport = errors.New("connection reset by peer")

func importsSent(client *imagefake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "create" && a.GetResource().Resource == "imagestreamimports" {
			n++
		}
	}
	return n
}

// TestScheduledTagsAreLeftToTheImportController: openshift-controller-manager re-imports the tags
// whose importPolicy.scheduled is set (the jenkins streams ship them) every 15 minutes; a turn on
// the operator's own schedule retries only the other failing tags, and none at all when only
// scheduled ones fail. A change that can fix imports retries the scheduled tags too, at once.
func TestScheduledTagsAreLeftToTheImportController(t *testing.T) {
	jenkins := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "jenkins", Namespace: names.SamplesNamespace, UID: "u2", ResourceVersion: "9"},
		Spec: imagev1.ImageStreamSpec{Tags: []imagev1.TagReference{
			{Name: "2", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ocp-tools-4/jenkins-rhel9:v4"},
				ImportPolicy: imagev1.TagImportPolicy{Scheduled: true}},
			{Name: "1", From: &corev1.ObjectReference{Kind: "DockerImage", Name: "registry.redhat.io/ocp-tools-4/jenkins-rhel8:v4"}},
		}}}
	sentTags := func(client *imagefake.Clientset, from int) []string {
		var tags []string
		for _, a := range client.Actions()[from:] {
			if a.GetVerb() == "create" && a.GetResource().Resource == "imagestreamimports" {
				for _, img := range a.(clienttesting.CreateAction).GetObject().(*imagev1.ImageStreamImport).Spec.Images {
					tags = append(tags, img.To.Name)
				}
			}
		}
		return tags
	}
	for _, tc := range []struct {
		name           string
		failed         map[string]string
		scheduledTurn  []string
		afterAFixTurns []string
	}{
		{"only a scheduled tag fails", map[string]string{"2": "unauthorized"}, nil, []string{"2"}},
		{"a scheduled tag and another fail", map[string]string{"2": "unauthorized", "1": "unauthorized"}, []string{"1"}, []string{"1", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, client, clk := retryingController()
			syncCtx := newClockedSyncContext(clk)
			defer syncCtx.Queue().ShutDown()
			dueNow(c, clk, "jenkins", tc.failed)
			if err := c.retryWhenDue(context.Background(), syncCtx, jenkins, jenkins, tc.failed); err != nil {
				t.Fatal(err)
			}
			if got := sentTags(client, 0); !slices.Equal(got, tc.scheduledTurn) {
				t.Errorf("a turn of the schedule retried %v, want %v", got, tc.scheduledTurn)
			}
			before := len(client.Actions())
			if streams := c.schedule.RetryAllNow(); !slices.Contains(streams, "jenkins") {
				t.Fatalf("a fix retries %v, want jenkins among them", streams)
			}
			if err := c.retryWhenDue(context.Background(), syncCtx, jenkins, jenkins, tc.failed); err != nil {
				t.Fatal(err)
			}
			if got := sentTags(client, before); !slices.Equal(got, tc.afterAFixTurns) {
				t.Errorf("a fix's turn retried %v, want %v", got, tc.afterAFixTurns)
			}
			if c.schedule.ForAFix("jenkins") {
				t.Error("the turn after the fix's is still the fix's")
			}
		})
	}
}
