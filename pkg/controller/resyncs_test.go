package controller_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	templatev1 "github.com/openshift/api/template/v1"
	configfake "github.com/openshift/client-go/config/clientset/versioned/fake"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	imagefake "github.com/openshift/client-go/image/clientset/versioned/fake"
	imageinformers "github.com/openshift/client-go/image/informers/externalversions"
	operatorfake "github.com/openshift/client-go/operator/clientset/versioned/fake"
	operatorinformers "github.com/openshift/client-go/operator/informers/externalversions"
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
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/access"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/clusteroperator"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/clusteroperatorcontrol"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/configstatuscontrol"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/mirrorsetinformers"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/usabilitycontrol"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/usability"
)

// handedEvents is a shared informer whose events the test hands out itself to the handlers
// registered on it; its cache is the informer it wraps.
type handedEvents struct {
	cache.SharedIndexInformer
	mu       sync.Mutex
	handlers []cache.ResourceEventHandler
}

func (h *handedEvents) AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.handlers = append(h.handlers, handler)
	return nil, nil
}

func (*handedEvents) HasSynced() bool { return true }

// update hands old → updated to every handler; old == updated is a resync.
func (h *handedEvents) update(old, updated runtime.Object) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, handler := range h.handlers {
		handler.OnUpdate(old, updated)
	}
}

// handedInformer is a typed informer (ImageStreamInformer, ConfigMapInformer ...) over events
// the test hands out and the lister L of the informer they wrap.
type handedInformer[L any] struct {
	events *handedEvents
	lister L
}

func (h handedInformer[L]) Informer() cache.SharedIndexInformer { return h.events }
func (h handedInformer[L]) Lister() L                           { return h.lister }

// handedOf wraps a typed informer's shared informer and lister.
func handedOf[L any](inf interface {
	Informer() cache.SharedIndexInformer
	Lister() L
}) handedInformer[L] {
	return handedInformer[L]{events: &handedEvents{SharedIndexInformer: inf.Informer()}, lister: inf.Lister()}
}

// resyncCase is one informer of a controller whose single key judges every object at once, and
// an object of its for the test to resync.
type resyncCase struct {
	informer string
	events   *handedEvents
	object   runtime.Object
}

// singleKeySyncs checks a controller whose every sync reads the Config once (counted by
// config's lister): each other informer's resync brings no sync back, a change of one of its
// objects does, and the Config's resync, the controller's safety net, does too.
func singleKeySyncs(t *testing.T, config *configEvents, cfg *samplesv1.Config, cases []resyncCase) {
	t.Helper()
	// The handlers queue synchronously and an idle worker takes a key within microseconds; the
	// controller's start queues a sync or two of its own, which this waits out.
	settled := func(quiet time.Duration) int64 {
		t.Helper()
		last, stableSince := config.gets.Load(), time.Now()
		for deadline := time.Now().Add(30 * time.Second); time.Since(stableSince) < quiet; time.Sleep(20 * time.Millisecond) {
			if now := config.gets.Load(); now != last {
				last, stableSince = now, time.Now()
			}
			if time.Now().After(deadline) {
				t.Fatal("the controller never stopped syncing")
			}
		}
		return last
	}
	waitBeyond := func(what string, before int64) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); config.gets.Load() <= before; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s brought no sync", what)
			}
		}
	}
	waitBeyond("the controller's start", 0)
	before := settled(2 * time.Second)
	for _, c := range cases {
		for range 50 {
			c.events.update(c.object, c.object)
		}
		if after := settled(500 * time.Millisecond); after != before {
			t.Errorf("50 resyncs of the %s: %d syncs, want none (the Config's resync is the safety net)", c.informer, after-before)
			before = after
		}
		changed := c.object.DeepCopyObject()
		meta, _ := changed.(metav1.Object)
		meta.SetResourceVersion(meta.GetResourceVersion() + "0")
		c.events.update(c.object, changed)
		waitBeyond("a change of the "+c.informer, before)
		before = settled(500 * time.Millisecond)
	}
	config.update(t, cfg, cfg)
	waitBeyond("the Config's resync", before)
}

// configHolding is a Config informer of samplesInf whose cache holds cfg.
func configHolding(t *testing.T, samplesInf samplesinformers.SharedInformerFactory, cfg *samplesv1.Config) *configEvents {
	t.Helper()
	config := &configEvents{ConfigInformer: samplesInf.Samples().V1().Configs()}
	if err := config.ConfigInformer.Informer().GetIndexer().Add(cfg); err != nil {
		t.Fatal(err)
	}
	return config
}

func resyncConfig() *samplesv1.Config {
	return &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: names.ConfigName, ResourceVersion: "1"},
		Spec:       samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"}},
	}
}

func resyncObjects() (*configv1.Image, *imagev1.ImageStream, *templatev1.Template, *corev1.ConfigMap) {
	return &configv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster", ResourceVersion: "1"}},
		&imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: "ruby", Namespace: names.SamplesNamespace, ResourceVersion: "1"}},
		&templatev1.Template{ObjectMeta: metav1.ObjectMeta{Name: "retired-example", Namespace: names.SamplesNamespace, ResourceVersion: "1",
			Annotations: map[string]string{desired.RetiredAnnotation: "4.15"}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ruby", Namespace: names.OperatorNamespace, ResourceVersion: "1"}}
}

// servesEveryGroup answers every group version with a kind, so that no group is rechecked on a
// schedule of the controller's own (a sync of its own during the test).
type servesEveryGroup struct{}

func (servesEveryGroup) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	return &metav1.APIResourceList{GroupVersion: gv, APIResources: []metav1.APIResource{{Name: "widgets", Kind: "Widget"}}}, nil
}

type noImages struct{}

func (noImages) Get(_ context.Context, name string, _ metav1.GetOptions) (*imagev1.Image, error) {
	return nil, errors.New("no image " + name)
}

// Issue 56: a resync is no change. The usability controller judges every sample in one sync;
// each imagestream's resync could run it again.
func TestUsabilityResyncsOnlyWithTheConfig(t *testing.T) {
	cfg := resyncConfig()
	imageConfig, stream, template, _ := resyncObjects()
	samplesInf := samplesinformers.NewSharedInformerFactory(samplesfake.NewSimpleClientset(), 0)
	clusterInf := configinformers.NewSharedInformerFactory(configfake.NewSimpleClientset(imageConfig), 0)
	imageInf := imageinformers.NewSharedInformerFactory(imagefake.NewSimpleClientset(), 0)
	templateInf := templateinformers.NewSharedInformerFactory(templatefake.NewSimpleClientset(), 0)
	kubeInf := kubeinformers.NewSharedInformerFactory(kubefake.NewSimpleClientset(), 0)
	config := configHolding(t, samplesInf, cfg)
	imageConfigs := handedOf(clusterInf.Config().V1().Images())
	streams := handedOf(imageInf.Image().V1().ImageStreams())
	templates := handedOf(templateInf.Template().V1().Templates())
	c, err := usabilitycontrol.New(configspectest.X86Only{}, usabilitycontrol.Informers{
		Config: config, ImageConfig: imageConfigs, ImageStream: streams, Template: templates,
		APIServices: kubeInf.Core().V1().Services().Informer(), Nodes: kubeInf.Core().V1().Nodes().Informer(),
	}, servesEveryGroup{}, noImages{}, usabilitycontrol.NewVerdicts(), events.NewInMemoryRecorder("test", clock.RealClock{}))
	if err != nil {
		t.Fatal(err)
	}
	runWithInformers(t, c, clusterInf, imageInf, templateInf, kubeInf)
	singleKeySyncs(t, config, cfg, []resyncCase{
		{"image configuration", imageConfigs.events, imageConfig},
		{"imagestreams", streams.events, stream},
		{"retired templates", templates.events, template},
	})

	// A burst of imports, one stream event every 20 ms: judged once per StreamEventDelay, not
	// once per import (20 syncs).
	before := config.gets.Load()
	start, old := time.Now(), stream
	for i := range 20 {
		updated := old.DeepCopy()
		updated.ResourceVersion = fmt.Sprintf("%d", 100+i)
		streams.events.update(old, updated)
		old = updated
		time.Sleep(20 * time.Millisecond)
	}
	span := time.Since(start)
	for deadline := time.Now().Add(30 * time.Second); config.gets.Load() == before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("20 imagestream events brought no sync")
		}
	}
	time.Sleep(2 * usabilitycontrol.StreamEventDelay) // the last event's sync
	allowed := 2 + int64(span/usabilitycontrol.StreamEventDelay)
	if syncs := config.gets.Load() - before; syncs > allowed {
		t.Errorf("20 imagestream events over %s: %d syncs, want at most %d", span.Round(time.Millisecond), syncs, allowed)
	}
}

type allGranted struct{}

func (allGranted) Verdict() access.Verdict { return access.Verdict{} }
func (allGranted) InstalledByOLM() bool    { return false }
func (allGranted) OnChange(func())         {}

type noVerdicts struct{}

func (noVerdicts) Ready() bool                        { return true }
func (noVerdicts) Marks(string, string) desired.Marks { return desired.Marks{} }
func (noVerdicts) All() []usability.Verdict           { return nil }
func (noVerdicts) OnChange(func(string, string))      {}

// Issue 56: the status controller judges every sample in one sync; each per-imagestream
// ConfigMap's resync, and each sample's, ran it again.
func TestConfigStatusResyncsOnlyWithTheConfig(t *testing.T) {
	cfg := resyncConfig()
	imageConfig, stream, template, configMap := resyncObjects()
	pullSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull-secret", Namespace: "openshift-config", ResourceVersion: "1"}}
	samples := samplesfake.NewSimpleClientset(cfg)
	samplesInf := samplesinformers.NewSharedInformerFactory(samples, 0)
	clusterInf := configinformers.NewSharedInformerFactory(configfake.NewSimpleClientset(imageConfig), 0)
	operatorInf := operatorinformers.NewSharedInformerFactory(operatorfake.NewSimpleClientset(), 0)
	imageInf := imageinformers.NewSharedInformerFactory(imagefake.NewSimpleClientset(), 0)
	templateInf := templateinformers.NewSharedInformerFactory(templatefake.NewSimpleClientset(), 0)
	kubeInf := kubeinformers.NewSharedInformerFactory(kubefake.NewSimpleClientset(), 0)
	config := configHolding(t, samplesInf, cfg)
	imageConfigs := handedOf(clusterInf.Config().V1().Images())
	streams := handedOf(imageInf.Image().V1().ImageStreams())
	templates := handedOf(templateInf.Template().V1().Templates())
	configMaps := handedOf(kubeInf.Core().V1().ConfigMaps())
	secrets := handedOf(kubeInf.Core().V1().Secrets())
	c := configstatuscontrol.New("v1", configspectest.X86Only{}, configstatuscontrol.Informers{
		Config: config, ImageConfig: imageConfigs, ImageStream: streams, Template: templates, ConfigMap: configMaps, Secret: secrets,
		MirrorSets: mirrorsetinformers.New(clusterInf.Config().V1().ImageTagMirrorSets(), clusterInf.Config().V1().ImageDigestMirrorSets(),
			operatorInf.Operator().V1alpha1().ImageContentSourcePolicies()),
		Usability: noVerdicts{},
	}, samplewriter.NewBook(clock.RealClock{}, time.Minute), allGranted{}, refusal.NewStore(clock.RealClock{}),
		samples.SamplesV1(), events.NewInMemoryRecorder("test", clock.RealClock{}), clock.RealClock{})
	runWithInformers(t, c, samplesInf, clusterInf, operatorInf, imageInf, templateInf, kubeInf)
	singleKeySyncs(t, config, cfg, []resyncCase{
		{"image configuration", imageConfigs.events, imageConfig},
		{"operator namespace's ConfigMaps", configMaps.events, configMap},
		{"imagestreams", streams.events, stream},
		{"templates", templates.events, template},
		{"pull secret", secrets.events, pullSecret},
	})
}

type noTroubles struct{}

func (noTroubles) Observed() clusteroperator.Observed { return clusteroperator.Observed{} }
func (noTroubles) OnChange(func())                    {}

// Issue 56: the ClusterOperator controller ran at each per-imagestream ConfigMap's resync.
func TestClusterOperatorResyncsOnlyWithTheConfig(t *testing.T) {
	cfg := resyncConfig()
	_, _, _, configMap := resyncObjects()
	co := &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: clusteroperator.Name, ResourceVersion: "1"}}
	configClient := configfake.NewSimpleClientset(co)
	samplesInf := samplesinformers.NewSharedInformerFactory(samplesfake.NewSimpleClientset(), 0)
	clusterInf := configinformers.NewSharedInformerFactory(configClient, 0)
	kubeInf := kubeinformers.NewSharedInformerFactory(kubefake.NewSimpleClientset(), 0)
	config := configHolding(t, samplesInf, cfg)
	operators := handedOf(clusterInf.Config().V1().ClusterOperators())
	configMaps := handedOf(kubeInf.Core().V1().ConfigMaps())
	c := clusteroperatorcontrol.New("v1", config, operators, configMaps, configClient.ConfigV1(), noTroubles{},
		events.NewInMemoryRecorder("test", clock.RealClock{}), clock.RealClock{})
	runWithInformers(t, c, clusterInf, kubeInf)
	singleKeySyncs(t, config, cfg, []resyncCase{
		{"ClusterOperator", operators.events, co},
		{"operator namespace's ConfigMaps", configMaps.events, configMap},
	})
}

// informerFactory is a shared informer factory, of whichever clientset.
type informerFactory interface {
	Start(stopCh <-chan struct{})
	WaitForCacheSync(stopCh <-chan struct{}) map[reflect.Type]bool
}

// runWithInformers starts the informers, waits for their caches, and runs c until the test ends.
// With the caches synced first, what the controller's start queues (the usability controller's
// sync once the Nodes are listed) comes at once, not during the test's count.
func runWithInformers(t *testing.T, c factory.Controller, factories ...informerFactory) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, f := range factories {
		f.Start(ctx.Done())
	}
	for _, f := range factories {
		for informer, synced := range f.WaitForCacheSync(ctx.Done()) {
			if !synced {
				t.Fatalf("the %v informer never synced", informer)
			}
		}
	}
	go c.Run(ctx, 1)
}
