package finalizer

import (
	"context"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	imagefake "github.com/openshift/client-go/image/clientset/versioned/fake"
	imageinformers "github.com/openshift/client-go/image/informers/externalversions"
	imagelisters "github.com/openshift/client-go/image/listers/image/v1"
	samplesfake "github.com/openshift/client-go/samples/clientset/versioned/fake"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	templatefake "github.com/openshift/client-go/template/clientset/versioned/fake"
	templateinformers "github.com/openshift/client-go/template/informers/externalversions"
	templatelisters "github.com/openshift/client-go/template/listers/template/v1"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/imports"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
)

// stuckSamples is a server that keeps showing an owned sample the caches never get.
type stuckSamples struct{ lists atomic.Int32 }

func (s *stuckSamples) OwnedSamples(context.Context) (int, error) {
	s.lists.Add(1)
	return 1, nil
}

// TestACleanupHeldBackIsLookedAtLessAndLessOften: while the server shows a sample the caches do
// not (or a samples sync is under way), the finalizer looks again after 100 ms, then backs off;
// it used to list the server every 100 ms for as long as that lasted.
func TestACleanupHeldBackIsLookedAtLessAndLessOften(t *testing.T) {
	for _, tc := range []struct {
		name string
		busy bool
	}{{"a create the caches do not show", false}, {"a samples sync under way", true}} {
		t.Run(tc.name, func(t *testing.T) {
			now := metav1.Now()
			cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster", UID: "u1", DeletionTimestamp: &now, Finalizers: []string{samplesv1.ConfigFinalizer}}}
			samples := samplesfake.NewSimpleClientset(cfg)
			samplesInf := samplesinformers.NewSharedInformerFactory(samples, 0)
			imageInf := imageinformers.NewSharedInformerFactory(imagefake.NewSimpleClientset(), 0)
			templateInf := templateinformers.NewSharedInformerFactory(templatefake.NewSimpleClientset(), 0)
			kubeInf := kubeinformers.NewSharedInformerFactory(kubefake.NewSimpleClientset(), 0)
			live := &stuckSamples{}
			var busyChecks atomic.Int32
			busy := func() bool {
				busyChecks.Add(1)
				return tc.busy
			}
			c := New(samplesInf.Samples().V1().Configs(), imageInf.Image().V1().ImageStreams(), templateInf.Template().V1().Templates(),
				kubeInf.Core().V1().ConfigMaps(), busy, live, samples.SamplesV1(), events.NewInMemoryRecorder("test", clock.RealClock{}))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			for _, start := range []func(<-chan struct{}){samplesInf.Start, imageInf.Start, templateInf.Start, kubeInf.Start} {
				start(ctx.Done())
			}
			go c.Run(ctx, 1)
			<-ctx.Done()
			looks := busyChecks.Load()
			// 2 s at 100, 200, 400, 800 ms... is five or six looks; every 100 ms was twenty.
			t.Logf("%d looks in 2 s (%d server lists)", looks, live.lists.Load())
			if looks == 0 || looks > 7 {
				t.Errorf("%d looks at the held-back cleanup in 2 s, want 1 to 7", looks)
			}
			if tc.busy && live.lists.Load() != 0 {
				t.Errorf("the server was listed %d times while a sync was under way", live.lists.Load())
			}
		})
	}
}

// serverSamples is a server showing a fixed number of owned samples.
type serverSamples int

func (s serverSamples) OwnedSamples(context.Context) (int, error) { return int(s), nil }

// TestTheFinalizerStaysWhileAnythingOfTheLifeIsLeft: each thing the cleanup waits for holds the
// finalizer on its own; with none left the operator's finalizer is removed and another's kept.
func TestTheFinalizerStaysWhileAnythingOfTheLifeIsLeft(t *testing.T) {
	owned := map[string]string{desired.ManagedLabel: "true"}
	inSamples := metav1.ObjectMeta{Namespace: names.SamplesNamespace, Labels: owned}
	for _, tc := range []struct {
		name      string
		streams   []runtime.Object
		templates []runtime.Object
		records   []runtime.Object
		busy      bool
		onServer  serverSamples
		removed   bool
	}{
		{name: "nothing left", removed: true},
		{name: "an owned imagestream in the cache", streams: []runtime.Object{&imagev1.ImageStream{ObjectMeta: named(inSamples, "ruby")}}},
		{name: "an owned template in the cache", templates: []runtime.Object{&templatev1.Template{ObjectMeta: named(inSamples, "rails")}}},
		{name: "an import error record", records: []runtime.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Namespace: names.OperatorNamespace, Name: "ruby", Labels: map[string]string{imports.ErrorLabel: "true"}}}}},
		{name: "a samples sync under way", busy: true},
		{name: "a sample the server shows and the caches do not", onServer: 1},
		{name: "only samples of others", removed: true,
			streams:   []runtime.Object{&imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Namespace: names.SamplesNamespace, Name: "mine"}}},
			templates: []runtime.Object{&templatev1.Template{ObjectMeta: metav1.ObjectMeta{Namespace: names.SamplesNamespace, Name: "mine"}}},
			records:   []runtime.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: names.OperatorNamespace, Name: "other"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := metav1.Now()
			cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster", UID: "u1", DeletionTimestamp: &now,
				Finalizers: []string{"someone.else/cleanup", samplesv1.ConfigFinalizer}}}
			samples := samplesfake.NewSimpleClientset(cfg)
			samplesInf := samplesinformers.NewSharedInformerFactory(samples, 0)
			imageInf := imageinformers.NewSharedInformerFactory(imagefake.NewSimpleClientset(tc.streams...), 0)
			templateInf := templateinformers.NewSharedInformerFactory(templatefake.NewSimpleClientset(tc.templates...), 0)
			kubeInf := kubeinformers.NewSharedInformerFactory(kubefake.NewSimpleClientset(tc.records...), 0)
			recorder := events.NewInMemoryRecorder("test", clock.RealClock{})
			c := &Controller{
				busy: func() bool { return tc.busy }, live: tc.onServer,
				configs:      samplesInf.Samples().V1().Configs().Lister(),
				imageStreams: imageInf.Image().V1().ImageStreams().Lister().ImageStreams(names.SamplesNamespace),
				templates:    templateInf.Template().V1().Templates().Lister().Templates(names.SamplesNamespace),
				configMaps:   kubeInf.Core().V1().ConfigMaps().Lister().ConfigMaps(names.OperatorNamespace),
				client:       samples.SamplesV1().Configs(),
				recheck:      flowcontrol.NewBackOff(busyRecheck, maxBusyRecheck),
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for _, inf := range []interface {
				Start(<-chan struct{})
				WaitForCacheSync(<-chan struct{}) map[reflect.Type]bool
			}{samplesInf, imageInf, templateInf, kubeInf} {
				inf.Start(ctx.Done())
				inf.WaitForCacheSync(ctx.Done())
			}
			if err := c.sync(ctx, factory.NewSyncContext("test", recorder)); err != nil {
				t.Fatal(err)
			}
			got, err := samples.SamplesV1().Configs().Get(ctx, "cluster", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"someone.else/cleanup", samplesv1.ConfigFinalizer}
			if tc.removed {
				want = want[:1]
			}
			if !slices.Equal(got.Finalizers, want) {
				t.Errorf("finalizers %v, want %v", got.Finalizers, want)
			}
		})
	}
}

func named(meta metav1.ObjectMeta, name string) metav1.ObjectMeta {
	meta.Name = name
	return meta
}

// TestOnlyAConfigBeingDeletedLosesTheFinalizer: a Config that is not being deleted keeps the
// finalizer though nothing is left, and a deleted one that no longer has it is not written.
func TestOnlyAConfigBeingDeletedLosesTheFinalizer(t *testing.T) {
	now := metav1.Now()
	for _, tc := range []struct {
		name string
		meta metav1.ObjectMeta
	}{
		{"not being deleted", metav1.ObjectMeta{Name: "cluster", UID: "u1", Finalizers: []string{samplesv1.ConfigFinalizer}}},
		{"deleted, the finalizer gone already", metav1.ObjectMeta{Name: "cluster", UID: "u1", DeletionTimestamp: &now, Finalizers: []string{"someone.else/cleanup"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &samplesv1.Config{ObjectMeta: tc.meta}
			samples := samplesfake.NewSimpleClientset(cfg)
			c, syncCtx, recorder := finalizerOver(t, samples, cfg)
			if err := c.sync(context.Background(), syncCtx); err != nil {
				t.Fatal(err)
			}
			if writes := configWrites(samples); writes != 0 {
				t.Errorf("%d writes of the Config, want none", writes)
			}
			if len(recorder.Events()) != 0 {
				t.Errorf("events %v, want none", recorder.Events())
			}
		})
	}
}

// TestTheFinalizersRemovalIsToldOrRetried: the removal is told by an Event; a Config gone before
// the write is done with quietly; any other error of the write goes back to the queue.
func TestTheFinalizersRemovalIsToldOrRetried(t *testing.T) {
	for _, tc := range []struct {
		name      string
		answer    error
		wantErr   bool
		wantEvent bool
	}{
		{name: "removed", wantEvent: true},
		{name: "the Config gone meanwhile", answer: apierrors.NewNotFound(samplesv1.Resource("configs"), "cluster"), wantEvent: true},
		{name: "the write refused", answer: apierrors.NewServiceUnavailable("etcd is away"), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := metav1.Now()
			cfg := &samplesv1.Config{ObjectMeta: metav1.ObjectMeta{Name: "cluster", UID: "u1", DeletionTimestamp: &now, Finalizers: []string{samplesv1.ConfigFinalizer}}}
			samples := samplesfake.NewSimpleClientset(cfg)
			if tc.answer != nil {
				samples.PrependReactor("update", "configs", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, tc.answer
				})
			}
			c, syncCtx, recorder := finalizerOver(t, samples, cfg)
			err := c.sync(context.Background(), syncCtx)
			if (err != nil) != tc.wantErr {
				t.Errorf("sync: %v, want an error: %v", err, tc.wantErr)
			}
			var told bool
			for _, e := range recorder.Events() {
				told = told || e.Reason == "ConfigFinalized"
			}
			if told != tc.wantEvent {
				t.Errorf("ConfigFinalized told: %v, want %v (events %v)", told, tc.wantEvent, recorder.Events())
			}
		})
	}
}

// finalizerOver is a Controller over empty caches but for cfg, nothing held back, and a sync
// context recording its Events.
func finalizerOver(t *testing.T, samples *samplesfake.Clientset, cfg *samplesv1.Config) (*Controller, factory.SyncContext, events.InMemoryRecorder) {
	t.Helper()
	configs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := configs.Add(cfg); err != nil {
		t.Fatal(err)
	}
	empty := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	recorder := events.NewInMemoryRecorder("test", clock.RealClock{})
	c := &Controller{
		busy:         func() bool { return false },
		live:         serverSamples(0),
		configs:      sampleslisters.NewConfigLister(configs),
		imageStreams: imagelisters.NewImageStreamLister(empty()).ImageStreams(names.SamplesNamespace),
		templates:    templatelisters.NewTemplateLister(empty()).Templates(names.SamplesNamespace),
		configMaps:   corelisters.NewConfigMapLister(empty()).ConfigMaps(names.OperatorNamespace),
		client:       samples.SamplesV1().Configs(),
		recheck:      flowcontrol.NewBackOff(busyRecheck, maxBusyRecheck),
	}
	return c, factory.NewSyncContext("test", recorder), recorder
}

// configWrites counts the updates sent for Configs.
func configWrites(samples *samplesfake.Clientset) int {
	n := 0
	for _, a := range samples.Actions() {
		if a.GetVerb() == "update" && a.GetResource().Resource == "configs" {
			n++
		}
	}
	return n
}

// TestOwnedSamplesCountsOnlyTheOperatorsOfBothKinds: the server's answer counts the owned
// imagestreams and templates, not those of others.
func TestOwnedSamplesCountsOnlyTheOperatorsOfBothKinds(t *testing.T) {
	owned := metav1.ObjectMeta{Namespace: names.SamplesNamespace, Labels: map[string]string{desired.ManagedLabel: "true"}}
	others := metav1.ObjectMeta{Namespace: names.SamplesNamespace}
	images := imagefake.NewSimpleClientset(
		&imagev1.ImageStream{ObjectMeta: named(owned, "ruby")}, &imagev1.ImageStream{ObjectMeta: named(others, "mine")})
	templates := templatefake.NewSimpleClientset(
		&templatev1.Template{ObjectMeta: named(owned, "rails")}, &templatev1.Template{ObjectMeta: named(others, "mine")})
	live := ServerSamples{
		ImageStreams: images.ImageV1().ImageStreams(names.SamplesNamespace),
		Templates:    templates.TemplateV1().Templates(names.SamplesNamespace),
	}
	got, err := live.OwnedSamples(context.Background())
	if err != nil || got != 2 {
		t.Errorf("OwnedSamples: %d, %v; want 2 (one of each kind)", got, err)
	}
	images.PrependReactor("list", "imagestreams", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("away")
	})
	if _, err := live.OwnedSamples(context.Background()); err == nil {
		t.Errorf("imagestreams unreadable: no error")
	}
	images.ReactionChain = images.ReactionChain[1:]
	templates.PrependReactor("list", "templates", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("away")
	})
	if _, err := live.OwnedSamples(context.Background()); err == nil {
		t.Errorf("templates unreadable: no error")
	}
}

// TestOnlyTheOperatorsObjectsBringTheCleanupBack: the events that can complete a cleanup are those
// of owned samples and of import error records; a delete's tombstone, not an object, passes.
func TestOnlyTheOperatorsObjectsBringTheCleanupBack(t *testing.T) {
	owned := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{desired.ManagedLabel: "true"}}}
	record := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{imports.ErrorLabel: "true"}}}
	other := &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{desired.ManagedLabel: "false"}}}
	tombstone := cache.DeletedFinalStateUnknown{Key: "openshift/ruby"}
	for _, tc := range []struct {
		name   string
		filter func(interface{}) bool
		obj    interface{}
		want   bool
	}{
		{"owned sample", isDeletionOrOwned, owned, true},
		{"another's sample", isDeletionOrOwned, other, false},
		{"an import record among samples", isDeletionOrOwned, record, false},
		{"a sample's tombstone", isDeletionOrOwned, tombstone, true},
		{"import record", isImportRecord, record, true},
		{"another ConfigMap", isImportRecord, &corev1.ConfigMap{}, false},
		{"a sample among records", isImportRecord, owned, false},
		{"a record's tombstone", isImportRecord, tombstone, true},
	} {
		if got := tc.filter(tc.obj); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
