package controller_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	imagev1 "github.com/openshift/api/image/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	samplesv1 "github.com/openshift/api/samples/v1"
	configfake "github.com/openshift/client-go/config/clientset/versioned/fake"
	configinformers "github.com/openshift/client-go/config/informers/externalversions"
	imagefake "github.com/openshift/client-go/image/clientset/versioned/fake"
	imageinformers "github.com/openshift/client-go/image/informers/externalversions"
	samplesfake "github.com/openshift/client-go/samples/clientset/versioned/fake"
	samplesinformers "github.com/openshift/client-go/samples/informers/externalversions"
	samplesv1informers "github.com/openshift/client-go/samples/informers/externalversions/samples/v1"
	sampleslisters "github.com/openshift/client-go/samples/listers/samples/v1"
	templatefake "github.com/openshift/client-go/template/clientset/versioned/fake"
	templateinformers "github.com/openshift/client-go/template/informers/externalversions"
	"github.com/openshift/library-go/pkg/operator/events"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/samples-operator-dev/cluster-samples-operator/pkg/access"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/configspec/configspectest"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/importscontrol"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/controller/samples"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/desired"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/names"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/refusal"
	"github.com/samples-operator-dev/cluster-samples-operator/pkg/samplewriter"
)

// configEvents is a Config informer whose events the test hands out itself, one at a time, to
// the handlers a controller registered, and whose lister counts its reads.
type configEvents struct {
	samplesv1informers.ConfigInformer
	handed handedEvents
	gets   atomic.Int64
}

func (c *configEvents) Informer() cache.SharedIndexInformer {
	if c.handed.SharedIndexInformer == nil {
		c.handed.SharedIndexInformer = c.ConfigInformer.Informer()
	}
	return &c.handed
}

func (c *configEvents) Lister() sampleslisters.ConfigLister {
	return countingLister{c.ConfigInformer.Lister(), &c.gets}
}

// update puts updated in the cache, as the informer would, and then tells the handlers.
func (c *configEvents) update(t *testing.T, old, updated *samplesv1.Config) {
	t.Helper()
	if err := c.ConfigInformer.Informer().GetIndexer().Update(updated); err != nil {
		t.Fatal(err)
	}
	c.handed.update(old, updated)
}

type countingLister struct {
	sampleslisters.ConfigLister
	gets *atomic.Int64
}

func (l countingLister) Get(name string) (*samplesv1.Config, error) {
	l.gets.Add(1)
	return l.ConfigLister.Get(name)
}

// notReady counts the samples controller's syncs, each of which asks it, and keeps them from
// going further.
type notReady struct{ asked atomic.Int64 }

func (u *notReady) Ready() bool                      { u.asked.Add(1); return false }
func (*notReady) Marks(string, string) desired.Marks { return desired.Marks{} }
func (*notReady) OnChange(func(string, string))      {}

type grantsAll struct{}

func (grantsAll) Verdict() access.Verdict { return access.Verdict{} }
func (grantsAll) OnChange(func())         {}

type noTriggers struct{}

func (noTriggers) OnChange(func()) error { return nil }

// Issue 56: a write of the Config's status (the status controller's) queues no key in the
// controllers that queue every key on a Config event; a change of what they read of the Config
// queues every key, and so does a resync.
func TestAConfigStatusWriteQueuesNoSample(t *testing.T) {
	cfg := &samplesv1.Config{
		ObjectMeta: metav1.ObjectMeta{Name: names.ConfigName, UID: "u1", ResourceVersion: "1", Generation: 1},
		Spec:       samplesv1.ConfigSpec{ManagementState: operatorv1.Managed, Architectures: []string{"x86_64"}},
		Status:     samplesv1.ConfigStatus{Architectures: []string{"x86_64"}},
	}
	var streams []*imagev1.ImageStream
	for i := range 3 {
		streams = append(streams, &imagev1.ImageStream{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("not-a-sample-%d", i), Namespace: names.SamplesNamespace}})
	}
	images := imagefake.NewSimpleClientset(streams[0], streams[1], streams[2])
	templates := templatefake.NewSimpleClientset()
	kube := kubefake.NewSimpleClientset()
	samplesInf := samplesinformers.NewSharedInformerFactory(samplesfake.NewSimpleClientset(), 0)
	imageInf := imageinformers.NewSharedInformerFactory(images, 0)
	templateInf := templateinformers.NewSharedInformerFactory(templates, 0)
	clusterInf := configinformers.NewSharedInformerFactory(configfake.NewSimpleClientset(), 0)
	kubeInf := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, kubeinformers.WithNamespace(names.OperatorNamespace))
	// One Config informer per controller, each telling its own handlers, over one cache.
	samplesConfig := &configEvents{ConfigInformer: samplesInf.Samples().V1().Configs()}
	importsConfig := &configEvents{ConfigInformer: samplesInf.Samples().V1().Configs()}
	if err := samplesConfig.ConfigInformer.Informer().GetIndexer().Add(cfg); err != nil {
		t.Fatal(err)
	}
	inventories := configspectest.X86Only{}
	inv, err := inventories.For("x86_64")
	if err != nil {
		t.Fatal(err)
	}
	sampleKeys := int64(len(inv.ImageStreamNames()) + len(inv.TemplateNames()))
	recorder := events.NewInMemoryRecorder("test", clock.RealClock{})

	sampleSyncs := &notReady{}
	samplesController := samples.New(samples.Deps{
		Version:     "4.16.0",
		Inventories: inventories,
		Informers: samples.Informers{
			Config: samplesConfig, ImageConfig: clusterInf.Config().V1().Images(),
			ImageStream: imageInf.Image().V1().ImageStreams(), Template: templateInf.Template().V1().Templates(),
		},
		ImageClient: images.ImageV1(), TemplateClient: templates.TemplateV1(),
		Records:  samplewriter.NewBook(clock.RealClock{}, time.Minute),
		Refusals: refusal.NewStore(clock.RealClock{}), RetryRefused: noTriggers{},
		Access: grantsAll{}, Activity: &samples.Activity{}, Usability: sampleSyncs,
		Normalized: func(string, string, string) {}, OverBudget: func(string, string) {},
		Recorder: recorder,
	})
	importsController := importscontrol.New("4.16.0", inventories, 0, nil, importscontrol.Informers{
		Config: importsConfig, ImageConfig: clusterInf.Config().V1().Images().Lister(),
		ImageStream: imageInf.Image().V1().ImageStreams(), ConfigMap: kubeInf.Core().V1().ConfigMaps(),
	}, images.ImageV1(), kube.CoreV1(), recorder, clock.RealClock{})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, start := range []func(<-chan struct{}){imageInf.Start, templateInf.Start, clusterInf.Start, kubeInf.Start} {
		start(ctx.Done())
	}
	go samplesController.Run(ctx, 1)
	go importsController.Run(ctx, 1)

	// Each sync of the imports controller reads the Config once; its Config keys are the live
	// imagestreams. Each sync of the samples controller asks whether the verdicts are ready.
	syncs := func() (int64, int64) { return sampleSyncs.asked.Load(), importsConfig.gets.Load() }
	waitFor := func(what string, wantSamples, wantImports int64) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			s, i := syncs()
			if s == wantSamples && i == wantImports {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d samples syncs and %d imports syncs, want %d and %d", what, s, i, wantSamples, wantImports)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// The imagestreams' first list: one sync each in both controllers.
	waitFor("the first list", 3, 3)

	statusWritten := cfg.DeepCopy()
	statusWritten.ResourceVersion = "2"
	statusWritten.Status = samplesv1.ConfigStatus{ManagementState: operatorv1.Managed, Version: "4.16.0", Architectures: []string{"x86_64"},
		Conditions: []samplesv1.ConfigCondition{{Type: samplesv1.SamplesExist, Status: "True", Reason: "SamplesInstalled", Message: "installed"}}}
	samplesConfig.update(t, cfg, statusWritten)
	importsConfig.update(t, cfg, statusWritten)
	// The handlers queue synchronously; an idle worker takes a key within microseconds.
	time.Sleep(500 * time.Millisecond)
	if s, i := syncs(); s != 3 || i != 3 {
		t.Errorf("a status write: %d samples syncs and %d imports syncs after it, want none", s-3, i-3)
	}

	specChanged := statusWritten.DeepCopy()
	specChanged.ResourceVersion, specChanged.Generation = "3", 2
	specChanged.Spec.SkippedImagestreams = []string{"ruby"}
	samplesConfig.update(t, statusWritten, specChanged)
	importsConfig.update(t, statusWritten, specChanged)
	waitFor("a spec change: every key", 3+sampleKeys, 3+3)

	samplesConfig.update(t, specChanged, specChanged)
	importsConfig.update(t, specChanged, specChanged)
	waitFor("a resync: every key", 3+2*sampleKeys, 3+2*3)
	t.Logf("%d sample keys and 3 imagestreams; a status write queued none", sampleKeys)
}
