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
	samplesfake "github.com/openshift/client-go/samples/clientset/versioned/fake"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions"
	templatefake "github.com/openshift/client-go/template/clientset/versioned/fake"
	templateinformers "github.com/openshift/client-go/template/informers/externalversions"
	"github.com/openshift/library-go/pkg/controller/factory"
	"github.com/openshift/library-go/pkg/operator/events"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
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
